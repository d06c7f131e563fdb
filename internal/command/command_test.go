//go:build unix

package command

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/childproc/proctest"
	"massgen/internal/tool"
)

func commandAgent(t *testing.T, opts Options) (*fixture, tool.Tool) {
	t.Helper()
	f := newFixture(t)
	return f, mustFind(t, Tools(f.alice, opts), "execute_command")
}

func TestCommand_RunsInWorkspace(t *testing.T) {
	f, cmd := commandAgent(t, Options{})
	got := mustOK(t, run(t, cmd, map[string]any{"command": "pwd; echo out; echo err >&2"}))
	want := "Exit code: 0\n[stdout]\n" + f.alice.Dir() + "\nout\n[stderr]\nerr"
	if got != want {
		t.Errorf("result =\n%s\nwant\n%s", got, want)
	}
	if err := os.Mkdir(filepath.Join(f.alice.Dir(), "wd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := mustOK(t, run(t, cmd, map[string]any{"command": "pwd", "work_dir": "wd"})); !strings.HasSuffix(got, filepath.Join(f.alice.Dir(), "wd")) {
		t.Errorf("work_dir ignored: %s", got)
	}
	mustFail(t, run(t, cmd, map[string]any{"command": "pwd", "work_dir": "../.."}), "must be inside your workspace")
	mustFail(t, run(t, cmd, map[string]any{"command": "pwd", "work_dir": f.run.SnapshotsDir()}), "must be inside your workspace")
	mustFail(t, run(t, cmd, map[string]any{"command": "pwd", "work_dir": "missing"}), "not an existing directory")
	mustFail(t, run(t, cmd, map[string]any{"command": "  "}), "command is empty")
	// Reading shared snapshots from commands works.
	if got := mustOK(t, run(t, cmd, map[string]any{"command": "cat " + f.bobSnapFile})); !strings.Contains(got, "bob's notes") {
		t.Errorf("cat snapshot = %s", got)
	}
}

func TestCommand_ExitCodeIsError(t *testing.T) {
	_, cmd := commandAgent(t, Options{})
	res := run(t, cmd, map[string]any{"command": "echo partial; exit 3"})
	mustFail(t, res, "Command failed with exit code 3.")
	if !strings.Contains(res.Content, "[stdout]\npartial") {
		t.Errorf("failed command lost its output: %s", res.Content)
	}
}

func TestCommand_TimeoutKillsProcessGroup(t *testing.T) {
	_, cmd := commandAgent(t, Options{})
	mk := proctest.Marker()
	start := time.Now()
	res := run(t, cmd, map[string]any{"command": "sleep " + mk + " & sleep " + mk, "timeout_seconds": 1})
	mustFail(t, res, "timed out after 1s; it and every process it started were killed")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("timeout took %s", d)
	}
	proctest.RequireNone(t, mk, 5*time.Second)
}

func TestCommand_TimeoutClampedAndCancel(t *testing.T) {
	_, cmd := commandAgent(t, Options{MaxTimeout: time.Second})
	res := run(t, cmd, map[string]any{"command": "sleep 30", "timeout_seconds": 100})
	mustFail(t, res, "lowered to the maximum, 1")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, cmd = commandAgent(t, Options{})
	mustFail(t, cmd.Run(ctx, `{"command": "sleep 30"}`), "cancelled")
}

func TestCommand_OutputCap(t *testing.T) {
	_, cmd := commandAgent(t, Options{OutputLimit: 1024})
	res := mustOK(t, run(t, cmd, map[string]any{"command": "head -c 100000 /dev/zero | tr '\\0' a; head -c 5000 /dev/zero | tr '\\0' b >&2"}))
	for _, want := range []string{"[stdout truncated: 100000 bytes in total, the first 1024 shown]", "[stderr truncated: 5000 bytes in total, the first 1024 shown]"} {
		if !strings.Contains(res, want) {
			t.Errorf("no %q in output", want)
		}
	}
	if len(res) > 3000 {
		t.Errorf("capped output is %d bytes", len(res))
	}
}

// Commands get an allow-listed environment: no name-based deny-list lets a key through.
func TestCommand_EnvironmentIsAllowListed(t *testing.T) {
	env := map[string]string{
		// Credentials that a deny-list on names misses, and ones it caught.
		"OPENAI_KEY": "sk-fake-1", "DATABASE_URL": "postgres://u:pw-fake-2@db/x", "GH_PAT": "ghp-fake-3",
		"SLACK_WEBHOOK": "https://hooks.example/fake-4", "AWS_ACCESS_KEY_ID": "AKIAFAKE5", "AWS_SECRET_ACCESS_KEY": "aws-fake-6",
		"ANTHROPIC_API_KEY": "sk-ant-fake-7", "GITHUB_TOKEN": "ghp-fake-8", "MASSGEN_SERVE_TOKEN": "serve-fake-9",
		// What commands need, and what the config grants.
		"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/fake", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
		"GRANTED": "yes", "MYTOOL_HOME": "/opt/mytool",
	}
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	for _, tool := range []string{"execute_command", "start_background_shell"} {
		t.Run(tool, func(t *testing.T) {
			f := newShellFixture(t, Options{Env: list, PassEnv: []string{"GRANTED", "MYTOOL_*"}})
			var got string
			if tool == "execute_command" {
				got = mustOK(t, f.call(t, tool, map[string]any{"command": "env"}))
			} else {
				id, _ := f.start(t, "env; echo END")
				eventually(t, "the end", func() bool { return strings.Contains(f.output(t, id, 1), "END") })
				got = f.output(t, id, 1000)
			}
			got += "\n"
			for name, value := range env {
				want := name == "PATH" || name == "HOME" || name == "LANG" || name == "LC_ALL" || name == "GRANTED" || name == "MYTOOL_HOME"
				if has := strings.Contains(got, "\n"+name+"="+value+"\n"); has != want {
					t.Errorf("%s in the environment: %v, want %v", name, has, want)
				}
				if !want && strings.Contains(got, value) {
					t.Errorf("the value of %s leaked", name)
				}
			}
			if !strings.Contains(got, "\nPWD="+f.alice.Dir()+"\n") {
				t.Errorf("PWD is not the workspace:\n%s", got)
			}
		})
	}
	desc := mustFind(t, newShellFixture(t, Options{PassEnv: []string{"GRANTED"}}).set, "execute_command").Spec.Description
	if !strings.Contains(desc, "PATH, HOME") || !strings.Contains(desc, "GRANTED (no API keys)") || !strings.Contains(desc, "every process it started is killed") {
		t.Errorf("description: %s", desc)
	}
}

func TestCommand_VenvOnPath(t *testing.T) {
	f, cmd := commandAgent(t, Options{Env: []string{"PATH=/usr/bin:/bin"}})
	venv := filepath.Join(f.alice.Dir(), ".venv")
	writeFile(t, filepath.Join(venv, "bin", "tool"), "#!/bin/sh\necho from venv\n")
	got := mustOK(t, run(t, cmd, map[string]any{"command": `echo "$VIRTUAL_ENV|$PATH"`}))
	if want := venv + "|" + filepath.Join(venv, "bin") + ":/usr/bin:/bin"; !strings.Contains(got, want) {
		t.Errorf("venv not activated: %s", got)
	}
}

func TestCommand_Streaming(t *testing.T) {
	_, cmd := commandAgent(t, Options{})
	var mu sync.Mutex
	var chunks []string
	firstAt := time.Time{}
	ctx := tool.WithOutput(t.Context(), func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if firstAt.IsZero() {
			firstAt = time.Now()
		}
		chunks = append(chunks, s)
	})
	res := cmd.Run(ctx, `{"command": "echo one; sleep 0.5; echo two >&2"}`)
	done := time.Now()
	mustOK(t, res)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(chunks, []string{"one\n", "two\n"}) {
		t.Errorf("streamed chunks = %q", chunks)
	}
	if done.Sub(firstAt) < 300*time.Millisecond {
		t.Errorf("first chunk arrived only %s before the end: not streamed", done.Sub(firstAt))
	}
}

func TestCommand_DangerousRefused(t *testing.T) {
	f, cmd := commandAgent(t, Options{})
	for _, c := range []string{
		"rm -rf /", "/bin/rm -rf /", "rm -rf / --no-preserve-root", "rm -fr /*", "rm -r ~", "cd /tmp && rm -Rf *", `rm -rf "$HOME"`,
		"dd if=/dev/zero of=disk.img", "echo x > /dev/sda", ":(){ :|:& };:", "bomb() { bomb | bomb & }; bomb",
		"mv important.txt /dev/null", "sudo ls", "su root", "ls; sudo -i", "ls && /usr/bin/sudo id", "FOO=1 sudo x", "find . | xargs chmod 644", "echo $(sudo id)", "chmod +x run.sh", "chown me f", "chmod -R 000 .",
		"mkfs.ext4 /dev/sdb1", "fdisk /dev/sda",
	} {
		res := run(t, cmd, map[string]any{"command": c})
		mustFail(t, res, "Dangerous command pattern")
	}
	for _, p := range []string{f.outside, f.project} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	filter := newCommandFilter(nil, nil)
	for _, c := range []string{
		"ls -la", "cat a.txt", "grep -r sudo .", "find . -name '*.go'", "python3 script.py", "npm install", "git status",
		"git add .", "rm -rf build", "rm -rf ./dist /tmp/x", "echo hi 2>/dev/null", "go test ./...", "echo issue", "ls --format=long", "echo 'use sudo' > notes.md", "man chmod",
	} {
		if msg := filter.refuse(c); msg != "" {
			t.Errorf("%q refused: %s", c, msg)
		}
	}
}

func TestCommand_AllowedAndBlockedLists(t *testing.T) {
	opts := Options{Allowed: []string{`echo\b`, `ls`}, Blocked: []string{`secret`}}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	_, cmd := commandAgent(t, opts)
	mustOK(t, run(t, cmd, map[string]any{"command": "echo ok"}))
	mustFail(t, run(t, cmd, map[string]any{"command": "cat /etc/hostname"}), "Command not allowed")
	mustFail(t, run(t, cmd, map[string]any{"command": "x=1; echo ok"}), "Command not allowed")
	mustFail(t, run(t, cmd, map[string]any{"command": "echo secret"}), "blocked by command_line_blocked_commands")

	bad := Options{Allowed: []string{"("}, Blocked: []string{"[a"}}
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), "command_line_allowed_commands[0]") || !strings.Contains(err.Error(), "command_line_blocked_commands[0]") {
		t.Fatalf("Validate = %v", err)
	}
	_, cmd = commandAgent(t, bad)
	mustFail(t, run(t, cmd, map[string]any{"command": "echo ok"}), "misconfigured")
}

func TestCommand_WriteTargetsChecked(t *testing.T) {
	f, cmd := commandAgent(t, Options{})
	readme := filepath.Join(f.project, "readme.md")
	for c, want := range map[string]string{
		"echo x > " + readme:                                  "read-only context path",
		"echo x >> " + readme:                                 "read-only context path",
		"cat a 2>&1 | tee " + readme:                          "read-only context path",
		"cp notes.txt " + f.project + "/":                     "read-only context path",
		"touch " + filepath.Join(f.rw, "new.txt"):             "only the agent presenting the final answer",
		"touch ../../../../outside/pwned":                     "outside what you can access",
		"echo x > ~/.bashrc":                                  "home directory",
		"rm " + f.bobSnapFile:                                 "shared snapshots",
		"mv " + filepath.Join(f.outside, "secret.txt") + " .": "outside what you can access",
		"cd sub && echo x >/etc/motd":                         "outside what you can access",
	} {
		mustFail(t, run(t, cmd, map[string]any{"command": c}), want)
	}
	mustOK(t, run(t, cmd, map[string]any{"command": "echo hi > out.txt 2>/dev/null && mkdir -p d && cp out.txt d/ && cat out.txt"}))
	if got := readFile(t, filepath.Join(f.alice.Dir(), "d", "out.txt")); got != "hi\n" {
		t.Errorf("out.txt = %q", got)
	}
	if got := readFile(t, readme); got != "read me" {
		t.Errorf("readme changed: %q", got)
	}
	f.alice.GrantFinal()
	mustOK(t, run(t, cmd, map[string]any{"command": "echo final > " + filepath.Join(f.rw, "file.txt")}))
}

func TestWriteTargets(t *testing.T) {
	for cmd, want := range map[string][]string{
		`echo "a > b; c" > out.txt`:         {"out.txt"},
		"sort < in.txt > 'my out.txt' 2>&1": {"my out.txt"},
		"cat <<EOF > f\nx\nEOF":             {"f"},
		"FOO=1 cp -r a b c/ && touch d e":   {"c/", "d", "e"},
		"mv a b":                            {"b", "a"},
		"ls | tee -a log.txt":               {"log.txt"},
		"rm -f x; echo y &> z":              {"x", "z"},
		`printf '%s' x\>y`:                  nil,
		"/bin/rm -rf build":                 {"build"},
	} {
		got, _ := writeTargets(cmd)
		if !slices.Equal(got, want) {
			t.Errorf("writeTargets(%q) = %q, want %q", cmd, got, want)
		}
	}
}
