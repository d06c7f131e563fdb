package command

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"massgen/internal/childproc"
	"massgen/internal/childproc/proctest"
	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// needSandbox skips a test where the srt sandbox cannot run for a reason outside massgen (no
// bwrap, no user namespaces); CI installs bwrap, so there a missing one fails.
func needSandbox(t *testing.T) {
	t.Helper()
	proctest.NeedBwrap(t)
	if ok, why := childproc.Confinement(); !ok {
		t.Skip("no sandbox without user namespaces: " + why)
	}
	if err := SandboxReady(); err != nil {
		t.Fatal(err)
	}
}

// outsideTmp is a fresh folder outside /tmp, which a sandbox replaces: what lies there shows
// as the read mode says.
func outsideTmp(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "massgen-sandbox-test-")
	if err != nil {
		t.Skipf("no folder outside /tmp to test with: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

const sandboxKey = "sk-test-sandbox-9f3c1a"

// sandboxed returns alice's execute_command in srt mode with the read mode, an environment
// with an API key and HOME at home, and the test binary readable inside (see TestSandboxHelper).
func sandboxed(t *testing.T, f *fixture, mode, home string, lim childproc.Limits) tool.Tool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })
	env = append(env, "OPENAI_API_KEY="+sandboxKey, "HOME="+home)
	opts := Options{Env: env, Sandbox: &SandboxOptions{ReadMode: mode, AllowRead: []string{exe}, Limits: lim}}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	return mustFind(t, Tools(f.alice, opts), "execute_command")
}

// helperCommand runs the test binary inside the sandbox as TestSandboxHelper in mode.
func helperCommand(t *testing.T, mode, network, addr string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("GORACE=atexit_sleep_ms=0 SANDBOX_TEST_HELPER=%s SANDBOX_TEST_NET=%s SANDBOX_TEST_ADDR=%s %s -test.run=^TestSandboxHelper$ -test.count=1",
		mode, network, addr, exe)
}

// TestSandboxHelper is the test binary inside a sandbox: it dials SANDBOX_TEST_ADDR.
func TestSandboxHelper(t *testing.T) {
	switch os.Getenv("SANDBOX_TEST_HELPER") {
	case "":
		t.Skip("only a helper inside a sandbox")
	case "dial":
		c, err := net.DialTimeout(os.Getenv("SANDBOX_TEST_NET"), os.Getenv("SANDBOX_TEST_ADDR"), 3*time.Second)
		if err != nil {
			fmt.Println("dial failed:", err)
		} else {
			fmt.Println("dial ok")
			_ = c.Close()
		}
	case "get": // through HTTP_PROXY, as HTTP clients do
		resp, err := http.Get(os.Getenv("SANDBOX_TEST_ADDR"))
		if err != nil {
			fmt.Println("get failed:", err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		fmt.Printf("get %d %s\n", resp.StatusCode, b)
	}
}

// With allowed domains, commands reach those hosts over HTTP through the proxy, and nothing
// else: not another host, not a direct connection.
func TestSandbox_AllowedDomains(t *testing.T) {
	needSandbox(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "reached "+r.Host+r.URL.Path) }))
	defer srv.Close()
	withTestHosts(t, srv)
	f := newFixture(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Sandbox: &SandboxOptions{AllowRead: []string{exe}, AllowedDomains: []string{"allowed.test"}}}
	set := Tools(f.alice, opts)
	cmd := mustFind(t, set, "execute_command")
	if !strings.Contains(cmd.Spec.Description, "only to allowed.test") {
		t.Errorf("the description does not name the allowed hosts: %s", cmd.Spec.Description)
	}
	for _, c := range []struct{ command, want, never string }{
		{helperCommand(t, "get", "", "http://allowed.test/hello"), "get 200 reached allowed.test/hello", ""},
		{helperCommand(t, "get", "", "http://denied.test/"), "get 403", "reached"},
		{helperCommand(t, "dial", "tcp", strings.TrimPrefix(srv.URL, "http://")), "dial failed", "dial ok"},
		{"env | grep -i _proxy=", "HTTPS_PROXY=http://" + childproc.ProxyAddr, ""},
	} {
		res := mustOK(t, run(t, cmd, map[string]any{"command": c.command}))
		if !strings.Contains(res, c.want) || c.never != "" && strings.Contains(res, c.never) {
			t.Errorf("%s:\n%s", c.command, res)
		}
	}
}

// TestSandbox_Attacks is the attack table: real commands through execute_command in the
// sandbox, each of which must fail (or, for the workspace, work) as the sandbox says.
func TestSandbox_Attacks(t *testing.T) {
	needSandbox(t)
	f := newFixture(t)
	home := filepath.Join(outsideTmp(t), "home")
	writeFile(t, filepath.Join(home, ".ssh", "id_rsa"), "PRIVATE KEY 42")
	writeFile(t, filepath.Join(f.project, ".env"), "DB_PASSWORD=hunter2")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("reached")) }))
	defer srv.Close()
	sock := filepath.Join(f.alice.Dir(), "host.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // ends when ln closes
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	cmd := sandboxed(t, f, "", home, childproc.Limits{})
	for _, c := range []struct {
		name, command string
		ok            bool   // the command succeeds
		want, never   string // in its result; never anywhere in it
	}{
		{"read a file outside the workspace", "cat " + filepath.Join(f.outside, "secret.txt"), false, "No such file", "top secret"},
		{"read the home directory's keys", "cat $HOME/.ssh/id_rsa", false, "No such file", "PRIVATE KEY"},
		{"the home directory is empty", "ls -A $HOME; echo listed", true, "listed", ".ssh"},
		{"home directories are empty", "echo entries: $(find /root /home -mindepth 1 2>/dev/null | wc -l)", true, "entries: 0", ""},
		{"read another agent's workspace", "ls " + f.bob.Dir(), false, "No such file", "notes.md"},
		{"read a secret file in a context path", "cat " + filepath.Join(f.project, ".env"), false, "Permission denied", "hunter2"},
		{"read /etc/shadow", "cat /etc/shadow", false, "Permission denied", "root:"},
		{"write a read-only context path", `p=` + f.project + `; echo x > "$p/new.txt"`, false, "Read-only file system", ""},
		{"write a writable context path before the final grant", `p=` + f.rw + `; echo x > "$p/new.txt"`, false, "Read-only file system", ""},
		{"write the snapshots", `p=` + f.bobSnapFile + `; echo x > "$p"`, false, "Read-only file system", ""},
		{"write the system", `p=/etc/massgen-test; echo x > "$p"`, false, "Read-only file system", ""},
		{"reach the host's loopback", helperCommand(t, "dial", "tcp", strings.TrimPrefix(srv.URL, "http://")), true, "dial failed", "dial ok"},
		{"reach a host service's unix socket", helperCommand(t, "dial", "unix", sock), true, "operation not permitted", "dial ok"},
		{"read massgen's environment through /proc", fmt.Sprintf("cat /proc/1/environ /proc/%d/environ /proc/self/environ 2>&1; ls /proc | grep -c '^[0-9]'", os.Getpid()),
			true, "", sandboxKey},
		{"the environment has no API key", "env", true, "TMPDIR=/tmp", sandboxKey},
		{"unmount what hides", "umount /etc/shadow 2>&1; mount -o remount,rw / 2>&1; cat /etc/shadow", false, "", "root:"},
		{"write the workspace", "echo made > made.txt && cat made.txt", true, "made", ""},
		{"read the snapshots and context paths", "cat " + f.bobSnapFile + " " + filepath.Join(f.project, "readme.md"), true, "read me", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, cmd, map[string]any{"command": c.command, "timeout_seconds": 20})
			t.Log(res.Content)
			if res.IsError == c.ok {
				t.Errorf("error = %v, want %v", res.IsError, !c.ok)
			}
			if !strings.Contains(res.Content, c.want) {
				t.Errorf("result does not say %q", c.want)
			}
			if c.never != "" && strings.Contains(res.Content, c.never) {
				t.Errorf("result shows %q", c.never)
			}
		})
	}
	if got := readFile(t, filepath.Join(f.alice.Dir(), "made.txt")); got != "made\n" {
		t.Errorf("the workspace write did not reach the workspace: %q", got)
	}
	for _, p := range []string{filepath.Join(f.project, "new.txt"), filepath.Join(f.rw, "new.txt"), "/etc/massgen-test"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

// The final presenter writes a writable context path from the sandbox; its protected paths,
// .git and secret files stay read-only or hidden.
func TestSandbox_FinalGrant(t *testing.T) {
	needSandbox(t)
	f := newFixture(t)
	cmd := sandboxed(t, f, "", "", childproc.Limits{})
	f.alice.GrantFinal()
	rw := f.rw
	for _, c := range []struct {
		command string
		ok      bool
		want    string
	}{
		{`p=` + rw + `; echo x > "$p/new.txt" && cat "$p/new.txt"`, true, "x"},
		{`p=` + rw + `; echo x > "$p/locked.txt"`, false, "Read-only file system"},
		{`p=` + rw + `; echo x > "$p/locked_dir/inner.txt"`, false, "Read-only file system"},
		{`p=` + rw + `; touch "$p/.git/hooks"`, false, "Read-only file system"},
		{`cat ` + filepath.Join(rw, ".git", "config"), false, "Permission denied"},
	} {
		res := run(t, cmd, map[string]any{"command": c.command})
		if res.IsError == c.ok || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s:\n%s", c.command, res.Content)
		}
	}
	if got := readFile(t, filepath.Join(rw, "locked.txt")); got != "locked" {
		t.Errorf("protected file changed: %q", got)
	}
}

// What lies outside /tmp shows as the read mode says, and massgen's folders never do.
func TestSandbox_ReadModes(t *testing.T) {
	needSandbox(t)
	base := outsideTmp(t)
	home := filepath.Join(base, "home")
	writeFile(t, filepath.Join(base, "data", "open.txt"), "system data")
	writeFile(t, filepath.Join(home, "notes.txt"), "home notes")
	writeFile(t, filepath.Join(home, ".aws", "credentials"), "aws secret")
	project := filepath.Join(base, "project")
	writeFile(t, filepath.Join(project, "main.go"), "package main")
	writeFile(t, filepath.Join(project, "deep", "server.pem"), "PEM SECRET")
	writeFile(t, filepath.Join(project, "massgen_logs", "log.txt"), "old logs")
	r, err := workspace.NewRun(filepath.Join(project, ".massgen", "workspaces"), "run1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	writeFile(t, filepath.Join(project, ".massgen", "sessions", "s.json"), "session data 7")
	// Log roots, massgen's, one outside every grant and one inside the context path.
	writeFile(t, filepath.Join(base, "logs", "log.txt"), "log secret 5")
	writeFile(t, filepath.Join(project, "runlogs", "log.txt"), "log secret 6")
	for _, d := range []string{filepath.Join(base, "logs"), filepath.Join(project, "runlogs")} {
		if err := r.HidePath(d); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := newAgent(t, r, "alice", "agent1"), newAgent(t, r, "bob", "agent2")
	writeFile(t, filepath.Join(bob.Dir(), "bob.txt"), "bob private")
	if err := alice.SetContextPaths([]workspace.ContextPath{{Path: project}}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{run: r, alice: alice}
	for _, c := range []struct {
		mode         string
		shown, never []string
	}{
		{ReadConfined, []string{"system data", "package main"}, []string{"home notes", "aws secret"}},
		{ReadStrict, []string{"package main"}, []string{"system data", "home notes", "aws secret"}},
		{ReadOpen, []string{"system data", "home notes", "package main"}, []string{"aws secret"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			cmd := sandboxed(t, f, c.mode, home, childproc.Limits{})
			script := fmt.Sprintf("cat %s/data/open.txt %s/notes.txt %s/.aws/credentials %s/main.go %s/deep/server.pem %s/massgen_logs/log.txt %s/.massgen/sessions/s.json %s/bob.txt %s/logs/log.txt %s/runlogs/log.txt; echo ws > w.txt && cat w.txt",
				base, home, home, project, project, project, project, bob.Dir(), base, project)
			res := run(t, cmd, map[string]any{"command": script})
			t.Log(res.Content)
			for _, s := range append(c.shown, "ws") {
				if !strings.Contains(res.Content, s) {
					t.Errorf("%s is not shown", s)
				}
			}
			for _, s := range append(c.never, "PEM SECRET", "old logs", "session data 7", "bob private", "log secret 5", "log secret 6") {
				if strings.Contains(res.Content, s) {
					t.Errorf("%s is shown", s)
				}
			}
		})
	}
}

// A fork bomb is held to the process limit, and the command ends with nothing left running.
func TestSandbox_ForkBombContained(t *testing.T) {
	needSandbox(t)
	if note := SandboxNote(); note != "" {
		t.Skip("the process limit does not hold here: " + note)
	}
	f := newFixture(t)
	mk := proctest.Marker()
	bomb := "bomb-" + mk + ".sh"
	// In a script: the command filter refuses the fork bomb pattern in a command line.
	writeFile(t, filepath.Join(f.alice.Dir(), bomb), "b(){ b|b& }; b\n")
	cmd := sandboxed(t, f, "", "", childproc.Limits{Processes: 64})
	start := time.Now()
	res := run(t, cmd, map[string]any{"command": "sh " + bomb + " 2>&1 | head -c 2000; sleep 1", "timeout_seconds": 20})
	t.Log(res.Content)
	if !strings.Contains(res.Content, "Cannot fork") && !strings.Contains(res.Content, "timed out") {
		t.Errorf("the fork bomb was not held back:\n%s", res.Content)
	}
	if d := time.Since(start); d > 40*time.Second {
		t.Errorf("the command took %s", d)
	}
	proctest.RequireNone(t, mk, 5*time.Second)
}

// When a sandboxed command returns, nothing it started is left, however it detached; a
// background shell's tree lives on until the shell is killed.
func TestSandbox_NothingOutlivesIt(t *testing.T) {
	needSandbox(t)
	f := newFixture(t)
	cmd := sandboxed(t, f, "", "", childproc.Limits{})
	for name, tmpl := range detachTechniques {
		mk := proctest.Marker()
		res := mustOK(t, run(t, cmd, map[string]any{"command": fmt.Sprintf(tmpl, mk) + "\nsleep 0.2; echo done"}))
		if !strings.Contains(res, "done") {
			t.Errorf("%s: %s", name, res)
		}
		proctest.RequireNone(t, mk, 3*time.Second)
	}

	sf := &shellFixture{fixture: f, set: Tools(f.alice, Options{Sandbox: &SandboxOptions{}})}
	mk := proctest.Marker()
	id, _ := sf.start(t, fmt.Sprintf("setsid sh -c 'sleep 0.3; echo later; sleep %s' & echo started; exit 0", mk))
	eventually(t, "the lingering process's output", func() bool { return strings.Contains(sf.output(t, id, 0), "later") })
	mustOK(t, sf.call(t, "kill_background_shell", map[string]any{"shell_id": id}))
	proctest.RequireNone(t, mk, 3*time.Second)
}

// A sandbox that cannot be set up refuses to run the command rather than run it unsandboxed.
func TestSandbox_NeverFallsBack(t *testing.T) {
	needSandbox(t)
	f := newFixture(t)
	mk := proctest.Marker()
	opts := Options{Sandbox: &SandboxOptions{ReadMode: "bogus"}}
	cmd := mustFind(t, Tools(f.alice, opts), "execute_command")
	mustFail(t, run(t, cmd, map[string]any{"command": "echo ran > ran-" + mk}), "Command not run: the sandbox cannot be set up")
	if _, err := os.Stat(filepath.Join(f.alice.Dir(), "ran-"+mk)); err == nil {
		t.Error("the command ran")
	}
	if err := opts.Validate(); err == nil || !strings.Contains(err.Error(), "command_line_srt_read_mode") {
		t.Errorf("Validate = %v", err)
	}
}
