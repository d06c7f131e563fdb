package childproc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"massgen/internal/childproc/proctest"
	"massgen/internal/childproc/reexec"
)

func needBwrap(t *testing.T) {
	t.Helper()
	proctest.NeedBwrap(t)
	if ok, why := Confinement(); !ok {
		t.Skip("no sandbox without user namespaces: " + why)
	}
	if err := SandboxReady(); err != nil {
		t.Fatal(err)
	}
}

// helperSandbox is the test binary inside a sandbox (CHILDPROC_TEST_HELPER=sandbox), or asked
// whether one can run (CHILDPROC_TEST_MODE=ready).
func helperSandbox() {
	if os.Getenv("CHILDPROC_TEST_MODE") == "ready" {
		if os.Getenv("CHILDPROC_TEST_NONS") != "" {
			DisableNamespaces()
		}
		fmt.Println(SandboxReady())
		os.Exit(0)
	}
	errno := func(err error) string {
		if err == nil {
			return "ok"
		}
		return err.Error()
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	fmt.Println("unix socket:", errno(err))
	_ = unix.Close(fd)
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	fmt.Println("inet socket:", errno(err))
	_ = unix.Close(fd)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	fmt.Println("socketpair:", errno(err))
	_, _ = unix.Close(fds[0]), unix.Close(fds[1])
	_, _, e := unix.Syscall(425, 1, 0, 0) // io_uring_setup
	fmt.Println("io_uring_setup:", errno(e))
	for _, l := range []struct {
		name string
		res  int
	}{{"nproc", unix.RLIMIT_NPROC}, {"fsize", unix.RLIMIT_FSIZE}, {"cpu", unix.RLIMIT_CPU}, {"as", unix.RLIMIT_AS}, {"core", unix.RLIMIT_CORE}} {
		var r unix.Rlimit
		_ = unix.Getrlimit(l.res, &r)
		fmt.Printf("%s %d %d\n", l.name, r.Cur, r.Max)
	}
	fmt.Println("caps:", strings.Join(strings.Fields(grep("/proc/self/status", "CapEff")), " "))
	fmt.Println("nonewprivs:", strings.Join(strings.Fields(grep("/proc/self/status", "NoNewPrivs")), " "))
	os.Exit(0)
}

func grep(file, prefix string) string {
	b, _ := os.ReadFile(file)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// sandboxed runs the test binary (or argv) in a sandbox that shows the system and the binary.
func sandboxed(t *testing.T, sb *Sandbox, env []string, argv ...string) (string, Status) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) == 0 {
		argv = []string{exe, "-test.run=^$"}
	}
	sb.Base = append([]Mount{{Kind: ReadOnly, Src: "/", Dst: "/"}}, sb.Base...)
	sb.Mounts = append([]Mount{{Kind: ReadOnly, Src: exe, Dst: exe}}, sb.Mounts...)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // a tree that lingers by mistake fails the test
	defer cancel()
	c := Command(ctx, Confined, argv[0], argv[1:]...)
	c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}, env...)
	c.Stdout, c.Stderr, c.WaitDelay, c.Dir = &out, &out, 5*time.Second, "/"
	c.Sandbox = sb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st := c.Wait()
	return out.String(), st
}

// Inside a sandbox: no new unix sockets, no io_uring, other sockets as usual; the limits are
// set and cannot be raised; no capabilities, no new privileges.
func TestSandbox_FilterAndLimits(t *testing.T) {
	needBwrap(t)
	lim := Limits{Processes: 77, FileSize: 1 << 20, CPU: 90 * time.Second, AddressSpace: 8 << 30}
	out, st := sandboxed(t, &Sandbox{Limits: lim}, []string{helperEnv + "=sandbox"})
	t.Log(out)
	if !st.Success() {
		t.Fatalf("%s\n%s", st, out)
	}
	for _, want := range []string{
		"unix socket: operation not permitted", "inet socket: ok", "socketpair: ok", "io_uring_setup: operation not permitted",
		"nproc 77 77", fmt.Sprintf("fsize %d %d", 1<<20, 1<<20), "cpu 90 95", fmt.Sprintf("as %d %d", 8<<30, 8<<30), "core 0 0",
		"caps: CapEff: 0000000000000000", "nonewprivs: NoNewPrivs: 1",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q", want)
		}
	}
}

// The command's status comes back; what it left running ends with it; /proc shows the
// sandbox's processes only; the host's network is out of reach.
func TestSandbox_StatusLifetimeAndViews(t *testing.T) {
	needBwrap(t)
	mk := proctest.Marker()
	out, st := sandboxed(t, &Sandbox{}, nil, "sh", "-c",
		fmt.Sprintf("setsid sleep %s & nohup sleep %s >/dev/null 2>&1 & ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline | tr '\\0' ' '; echo; exit 7", mk, mk))
	if st.Code != 7 {
		t.Errorf("status %s, want exit 7\n%s", st, out)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], reexec.SandboxInitPath) {
		t.Errorf("PID 1 is not the sandbox init:\n%s", out)
	}
	proctest.RequireNone(t, mk, 3*time.Second)
	out, st = sandboxed(t, &Sandbox{}, nil, "sh", "-c", "kill -KILL $$")
	if st.Code != 128+int(syscall.SIGKILL) {
		t.Errorf("a killed command ended with %s\n%s", st, out)
	}
}

// A Hidden folder covered by a later mount is not made read-only: making it so would make
// the later mount read-only instead. One hidden again after it is.
func TestSandbox_HiddenCoveredStaysWritable(t *testing.T) {
	needBwrap(t)
	dir := t.TempDir()
	for _, d := range []string{"/w/sub", "/w/again"} {
		if err := os.MkdirAll(dir+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sb := &Sandbox{Mounts: []Mount{{Kind: Hidden, Dst: dir + "/w/sub"}, {Kind: Writable, Src: dir + "/w", Dst: dir + "/w"},
		{Kind: Hidden, Dst: dir + "/w/again"}}}
	out, _ := sandboxed(t, sb, nil, "sh", "-c", "echo x > "+dir+"/w/made; touch "+dir+"/w/sub/made "+dir+"/w/again/no")
	for _, p := range []string{"/w/made", "/w/sub/made"} {
		if _, err := os.Stat(dir + p); err != nil {
			t.Errorf("%s was not written: %v\n%s", p, err, out)
		}
	}
	if !strings.Contains(out, "again/no': Read-only file system") {
		t.Errorf("the folder hidden last was writable:\n%s", out)
	}
}

// Without bwrap, or without user namespaces, a Sandbox never runs, and the reason says so.
func TestSandbox_Unavailable(t *testing.T) {
	if ok, _ := Confinement(); !ok {
		t.Skip("user namespaces are unavailable: only that case can be checked")
	}
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"no bwrap", []string{"PATH=" + t.TempDir()}, "bubblewrap (bwrap) is not installed: install it"},
		{"no user namespaces", []string{"CHILDPROC_TEST_NONS=1"}, "user namespaces are unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := proctest.Helper(t, []string{"-test.run=^$"}, append([]string{helperEnv + "=sandbox", "CHILDPROC_TEST_MODE=ready"}, c.env...)...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), c.want) {
				t.Errorf("SandboxReady: %v\n%s", err, out)
			}
		})
	}
	c := Command(nil, Tree, "true")
	c.Sandbox = &Sandbox{}
	if err := c.Start(); err == nil {
		_ = c.Wait()
		t.Error("a Tree child started in a sandbox")
	}
}
