package mcpserve

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
)

// reader is a team whose agent reads the file at path into its workspace, so that a share that
// got through puts the file's text in the log (the winner's workspace is copied there).
// The test moves to a folder of its own, where the sessions' workspaces are made.
func reader(t *testing.T, path string) *config.Config {
	t.Chdir(t.TempDir())
	return parse(t, "reader.yaml", []byte(`agents:
  - id: reader
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: read_file, args: {path: `+path+`}}
        - {name: write_file, args: {path: out.txt, content: "{{result}}"}}
      answers: ["done"]
`))
}

// A client over HTTP may share only what lies in the folders the server's owner allowed:
// another folder, a link out of an allowed one and cwd_context of a folder not allowed are
// refused, no session starts, and the secret reaches neither the result nor the logs.
func TestHTTP_AskTeamSharesOnlyAllowedFolders(t *testing.T) {
	const secret = "the-launch-code-4711"
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	dir, other := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "note.txt")); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(t.TempDir(), "logs")
	team := reader(t, filepath.Join(outside, "secret.txt"))
	srv := newServer(t, Options{Teams: []Team{{Name: "r", Config: team}}, Dir: dir, LogRoot: logs})
	elsewhere := newServer(t, Options{Teams: []Team{{Name: "r", Config: team}}, Dir: dir, LogRoot: logs, AllowPaths: []string{other}})
	urls := map[*Server]string{srv: serveHTTP(t, srv), elsewhere: serveHTTP(t, elsewhere)}
	for _, tc := range []struct {
		name string
		srv  *Server
		args map[string]any
		want string
	}{
		{"another folder", srv, map[string]any{"context_paths": []string{outside}}, outside},
		{"a file in another folder", srv, map[string]any{"files": []string{filepath.Join(outside, "secret.txt")}}, "secret.txt"},
		{"a linked folder", srv, map[string]any{"context_paths": []string{"escape"}}, "escape (a link to " + outside + ")"},
		{"a file through a linked folder", srv, map[string]any{"files": []string{"escape/secret.txt"}}, "escape/secret.txt"},
		{"a linked file", srv, map[string]any{"files": []string{"note.txt"}}, "note.txt (a link to "},
		{"the home folder", srv, map[string]any{"files": []string{"~"}}, "~"},
		{"a parent", srv, map[string]any{"context_paths": []string{".."}}, ".."},
		{"cwd_context of a folder not allowed", elsewhere, map[string]any{"cwd_context": "ro"}, "cwd_context's folder " + dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "the home folder" {
				t.Setenv("HOME", outside)
			}
			cs, err := connectHTTP(t, urls[tc.srv], "", nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.args["question"] = "What does the file say?"
			res, err := call(t, t.Context(), cs, "ask_team", tc.args, false)
			if err != nil {
				t.Fatal(err)
			}
			msg := text(res)
			if !res.IsError || !strings.Contains(msg, "outside the folders this server lets clients share") ||
				!strings.Contains(msg, tc.want) || !strings.Contains(msg, "--allow-path DIR") {
				t.Fatalf("error %v, %q; want a refusal naming %q and --allow-path", res.IsError, msg, tc.want)
			}
			if strings.Contains(msg, secret) {
				t.Fatalf("the refusal holds the secret: %q", msg)
			}
		})
	}
	if _, err := os.Stat(logs); !os.IsNotExist(err) {
		t.Errorf("a refused call left a log (%v)", err)
		_ = filepath.WalkDir(logs, func(p string, d fs.DirEntry, err error) error {
			if b, _ := os.ReadFile(p); err == nil && !d.IsDir() && strings.Contains(string(b), secret) {
				t.Errorf("%s holds the secret", p)
			}
			return nil
		})
	}
}

// A folder named with --allow-path can be shared, by a path or through a link into it, and the
// agents read it.
func TestAskTeam_SharesAnAllowedFolder(t *testing.T) {
	shared := t.TempDir()
	if err := os.WriteFile(filepath.Join(shared, "plan.txt"), []byte("step one"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(shared, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, Options{Teams: []Team{{Name: "r", Config: reader(t, filepath.Join(shared, "plan.txt"))}},
		Dir: dir, AllowPaths: []string{shared, "."}})
	cs := connect(t, srv, nil)
	for _, given := range []string{shared, "link"} {
		res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "q", "context_paths": []string{given}}, true)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", given, err, text(res))
		}
		var out AskResult
		structured(t, res, &out)
		copies, _ := filepath.Glob(filepath.Join(out.LogDir, "turn_1", "final", "*", "workspace", "out.txt"))
		if len(copies) != 1 {
			t.Fatalf("%s: the winner's workspace has no out.txt in %s", given, out.LogDir)
		}
		if b, err := os.ReadFile(copies[0]); err != nil || !strings.Contains(string(b), "step one") {
			t.Errorf("%s: the agent read %q, %v; want the file's text", given, b, err)
		}
	}
}

// An allowed path that is not an existing folder stops the server at start.
func TestNew_AllowPathMustBeAFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, filepath.Join(dir, "nosuch")} {
		_, err := New(Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}, Dir: dir, AllowPaths: []string{p}})
		if err == nil || !strings.Contains(err.Error(), "allowed path "+p) {
			t.Errorf("%s: error %v", p, err)
		}
	}
}
