package filetool

import (
	"massgen/internal/workspace"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// projectFixture is the natural setup: a project folder given as a read-only context path,
// holding massgen's own state (.massgen/workspaces with the run, .massgen/massgen_logs with
// this session's and an older session's logs) and files that hold secrets.
type projectFixture struct {
	run        *workspace.Run
	alice, bob *workspace.Agent
	proj       string
	logs       string // .massgen/massgen_logs
}

// projectSecrets are files of the project that must never reach an agent, with their content;
// every content holds "SECRET".
var projectSecrets = map[string]string{
	".env":                      "OPENAI_API_KEY=SECRET-1",
	".env.local":                "TOKEN=SECRET-2",
	".git/config":               "[remote]\nurl = https://user:SECRET-3@example.com/r.git",
	".git-credentials":          "https://user:SECRET-4@example.com",
	".netrc":                    "machine example.com password SECRET-5",
	".npmrc":                    "//registry.npmjs.org/:_authToken=SECRET-6",
	".pypirc":                   "password = SECRET-7",
	".pgpass":                   "db:5432:*:me:SECRET-8",
	"deploy/id_rsa":             "-----BEGIN PRIVATE KEY----- SECRET-9",
	"deploy/id_ed25519":         "SECRET-10",
	"certs/server.pem":          "SECRET-11",
	"certs/server.key":          "SECRET-12",
	"certs/client.p12":          "SECRET-13",
	".aws/credentials":          "aws_secret_access_key = SECRET-14",
	".docker/config.json":       `{"auths": {"x": {"auth": "SECRET-15"}}}`,
	"gcp/credentials.json":      `{"private_key": "SECRET-16"}`,
	"config/secrets.yaml":       "db_password: SECRET-17",
	".claude/.credentials.json": `{"token": "SECRET-18"}`,
}

// projectPlain are files that only look like secrets and stay readable.
var projectPlain = map[string]string{
	".env.example":       "OPENAI_API_KEY=your-key-here",
	"deploy/id_rsa.pub":  "ssh-ed25519 AAAA plain",
	"src/secrets.go":     "package src // plain",
	"src/keys.py":        "KEYS = [] # plain",
	"credentials/doc.md": "plain: a package named credentials",
	"README.md":          "plain readme",
}

// secretValues are the lines holding a secret of every secret file, log and private draft the
// fixture has, which no result may show (a search result repeats its pattern, "SECRET").
func secretValues() []string {
	out := []string{`{"system_prompt": "SECRET-old-run"}`, `{"system_prompt": "SECRET-this-run"}`, "bob's SECRET draft"}
	for _, content := range projectSecrets {
		for line := range strings.Lines(content) {
			if strings.Contains(line, "SECRET") {
				out = append(out, strings.TrimSuffix(line, "\n"))
			}
		}
	}
	return out
}

func newProjectFixture(t *testing.T) *projectFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &projectFixture{proj: filepath.Join(base, "proj")}
	f.logs = filepath.Join(f.proj, ".massgen", "massgen_logs")
	for name, content := range projectSecrets {
		writeFile(t, filepath.Join(f.proj, name), content)
	}
	for name, content := range projectPlain {
		writeFile(t, filepath.Join(f.proj, name), content)
	}
	writeFile(t, filepath.Join(f.logs, "log_old", "turn_1", "events.jsonl"), `{"system_prompt": "SECRET-old-run"}`)
	writeFile(t, filepath.Join(f.logs, "log_now", "turn_1", "events.jsonl"), `{"system_prompt": "SECRET-this-run"}`)
	if f.run, err = workspace.NewRun(filepath.Join(f.proj, ".massgen", "workspaces"), "run1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.run.Close() })
	// As the app does: the session's log folder is hidden.
	if err := f.run.HidePath(filepath.Join(f.logs, "log_now")); err != nil {
		t.Fatal(err)
	}
	f.alice = newAgent(t, f.run, "alice", "agent1")
	f.bob = newAgent(t, f.run, "bob", "agent2")
	writeFile(t, filepath.Join(f.bob.Dir(), "private.md"), "bob's SECRET draft")
	for _, a := range []*workspace.Agent{f.alice, f.bob} {
		if err := a.SetContextPaths([]workspace.ContextPath{{Path: f.proj}}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestHiddenTrees_WalksShowNothingPrivate: with the project folder as a context path, a walk
// started at .massgen (or above it) used to list another agent's private workspace under its
// real id and the run's events.jsonl; older runs' logs were readable too. A walk yields only
// what a direct read of each path would allow, and starting at a hidden folder is refused.
func TestHiddenTrees_WalksShowNothingPrivate(t *testing.T) {
	f := newProjectFixture(t)
	a := f.alice
	massgen := filepath.Join(f.proj, ".massgen")
	type args = map[string]any
	const private = "private to massgen"
	cases := []attack{
		{"list .massgen", false, "list_directory", args{"path": massgen, "recursive": true}, private},
		{"list logs", false, "list_directory", args{"path": f.logs}, private},
		{"list workspaces", false, "list_directory", args{"path": filepath.Join(massgen, "workspaces"), "recursive": true}, private},
		{"search .massgen", false, "search_files", args{"pattern": "SECRET", "path": massgen}, private},
		{"copy .massgen", false, "copy_file", args{"source": massgen, "destination": "stolen"}, private},
		{"copy logs", false, "copy_file", args{"source": f.logs, "destination": "stolen"}, private},
		{"compare .massgen", false, "compare_directories", args{"path1": massgen, "path2": "."}, private},
		{"read this run's events", false, "read_file", args{"path": filepath.Join(f.logs, "log_now", "turn_1", "events.jsonl")}, private},
		{"read an older run's events", false, "read_file", args{"path": filepath.Join(f.logs, "log_old", "turn_1", "events.jsonl")}, private},
		{"read bob's workspace", false, "read_file", args{"path": filepath.Join(f.bob.Dir(), "private.md")}, private},
		{"compare with older logs", false, "compare_files", args{"path1": filepath.Join(f.logs, "log_old", "turn_1", "events.jsonl"), "path2": filepath.Join(f.proj, "README.md")}, private},
	}
	runAttacks(t, a, cases, "SECRET")
	// Walks from the project's top show the project, and nothing of massgen's.
	for _, c := range []struct {
		tool string
		args args
	}{
		{"list_directory", args{"path": f.proj, "recursive": true}},
		{"list_directory", args{"path": f.proj}},
		{"search_files", args{"pattern": "SECRET", "path": f.proj}},
		{"search_files", args{"pattern": "plain", "path": f.proj}},
		{"compare_directories", args{"path1": f.proj, "path2": "."}},
		{"copy_file", args{"source": f.proj, "destination": "proj"}},
	} {
		res := call(t, a, c.tool, c.args)
		t.Logf("%s: %s", c.tool, res.Content)
		// The agent's own workspace lies under .massgen: its path may be named.
		shown := strings.ReplaceAll(res.Content, a.Dir(), "<workspace>")
		for _, leak := range append(secretValues(), ".massgen", "massgen_logs", "events.jsonl", "bob") {
			if strings.Contains(shown, leak) {
				t.Errorf("%s %v shows %q:\n%s", c.tool, c.args, leak, res.Content)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(a.Dir(), "proj", ".massgen")); !os.IsNotExist(err) {
		t.Error("copying the project copied .massgen")
	}
	if _, err := os.Lstat(filepath.Join(a.Dir(), "stolen")); !os.IsNotExist(err) {
		t.Error("stolen was created")
	}
	// The agent's own workspace and the snapshots, which live under .massgen, still work.
	mustOK(t, call(t, a, "write_file", args{"path": "mine.txt", "content": "mine"}))
	mustOK(t, call(t, a, "list_directory", args{"path": ".", "recursive": true}))
	if err := f.bob.Snapshot(); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, a, "read_file", args{"path": filepath.Join(f.run.SnapshotsDir(), "agent2", "private.md")}))
}

// TestSecrets_HiddenInContextPaths: read_file .env and .git/config inside a read-only context
// path returned the API key. Files that commonly hold secrets are refused by every tool, with
// a message saying how to grant one, and left out of listings, searches, copies and
// comparisons; look-alikes stay readable.
func TestSecrets_HiddenInContextPaths(t *testing.T) {
	f := newProjectFixture(t)
	a := f.alice
	type args = map[string]any
	const how = "list the file itself under context_paths"
	var cases []attack
	for name := range projectSecrets {
		p := filepath.Join(f.proj, name)
		cases = append(cases,
			attack{"read " + name, false, "read_file", args{"path": p}, how},
			attack{"read many " + name, false, "read_multiple_files", args{"paths": []string{p}}, how},
			attack{"copy " + name, false, "copy_file", args{"source": p, "destination": "stolen"}, how},
			attack{"compare " + name, false, "compare_files", args{"path1": p, "path2": filepath.Join(f.proj, "README.md")}, how},
			attack{"search " + name, false, "search_files", args{"pattern": "SECRET", "path": p}, how},
		)
	}
	// Through a symbolic link in the workspace.
	if err := os.Symlink(filepath.Join(f.proj, ".env"), filepath.Join(a.Dir(), "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, attack{"read through a link", false, "read_file", args{"path": "innocent.txt"}, how})
	runAttacks(t, a, cases, "SECRET")
	for name, want := range projectPlain {
		if got := mustOK(t, call(t, a, "read_file", args{"path": filepath.Join(f.proj, name)})); got != want {
			t.Errorf("read %s = %q, want %q", name, got, want)
		}
	}
	for _, c := range []struct {
		tool string
		args args
	}{
		{"list_directory", args{"path": f.proj, "recursive": true}},
		{"search_files", args{"pattern": "SECRET", "path": f.proj}},
		{"search_files", args{"pattern": "=", "path": f.proj}},
		{"copy_file", args{"source": f.proj, "destination": "proj"}},
		{"compare_directories", args{"path1": f.proj, "path2": "proj", "show_content_diff": true}},
	} {
		res := mustOK(t, call(t, a, c.tool, c.args))
		t.Logf("%s: %s", c.tool, res)
		for _, leak := range secretValues() {
			if strings.Contains(res, leak) {
				t.Errorf("%s shows %q:\n%s", c.tool, leak, res)
			}
		}
		if c.tool == "list_directory" {
			for _, name := range []string{".env\n", ".env (", "id_rsa (", "server.pem", ".git/config", ".aws/credentials", "secrets.yaml"} {
				if strings.Contains(res+"\n", name) {
					t.Errorf("listing shows %q:\n%s", name, res)
				}
			}
			for _, name := range []string{".env.example", "id_rsa.pub", "src/secrets.go", "credentials/doc.md"} {
				if !strings.Contains(res, name) {
					t.Errorf("listing leaves out %q:\n%s", name, res)
				}
			}
		}
	}
	for name := range projectSecrets {
		if _, err := os.Lstat(filepath.Join(a.Dir(), "proj", name)); !os.IsNotExist(err) {
			t.Errorf("%s was copied into the workspace", name)
		}
	}
	if got := readFile(t, filepath.Join(a.Dir(), "proj", ".env.example")); got != projectPlain[".env.example"] {
		t.Errorf("copied .env.example = %q", got)
	}
}

// A context path entry naming the secret file itself grants it: it is readable, and listed
// when its folder is walked; its neighbours stay hidden.
func TestSecrets_GrantedByName(t *testing.T) {
	f := newProjectFixture(t)
	a := f.alice
	env := filepath.Join(f.proj, ".env")
	if err := a.SetContextPaths([]workspace.ContextPath{{Path: f.proj}, {Path: env}}); err != nil {
		t.Fatal(err)
	}
	if got := mustOK(t, call(t, a, "read_file", map[string]any{"path": env})); got != projectSecrets[".env"] {
		t.Errorf("granted .env = %q", got)
	}
	list := mustOK(t, call(t, a, "list_directory", map[string]any{"path": f.proj}))
	if !strings.Contains(list, ".env (") {
		t.Errorf("the granted .env is not listed:\n%s", list)
	}
	mustFail(t, call(t, a, "read_file", map[string]any{"path": filepath.Join(f.proj, ".env.local")}), "list the file itself under context_paths")
}

// A writable context path holding a secret file or massgen's folders cannot be moved or
// deleted as a whole: the walk that checks the tree never sees those entries, and the rename
// or removal would take them along.
func TestSecrets_TreesHoldingThemStay(t *testing.T) {
	f := newProjectFixture(t)
	a := f.alice
	if err := a.SetContextPaths([]workspace.ContextPath{{Path: f.proj, Write: true}}); err != nil {
		t.Fatal(err)
	}
	a.GrantFinal()
	a.SetReadBeforeDelete(false)
	for _, c := range []struct{ tool, dir string }{{"delete_file", "certs"}, {"delete_file", "deploy"}, {"move_file", "certs"}, {"delete_file", "config"}} {
		args := map[string]any{"path": filepath.Join(f.proj, c.dir), "recursive": true}
		if c.tool == "move_file" {
			args = map[string]any{"source": filepath.Join(f.proj, c.dir), "destination": filepath.Join(f.proj, "moved")}
		}
		mustFail(t, call(t, a, c.tool, args), "hidden from agents")
	}
	for name := range projectSecrets {
		if _, err := os.Lstat(filepath.Join(f.proj, name)); err != nil {
			t.Errorf("%s is gone: %v", name, err)
		}
	}
	mustFail(t, call(t, a, "write_file", map[string]any{"path": filepath.Join(f.proj, "certs", "server.key"), "content": "x"}), "may hold secrets")
	if got := readFile(t, filepath.Join(f.proj, "certs", "server.key")); got != projectSecrets["certs/server.key"] {
		t.Errorf("server.key = %q", got)
	}
}
