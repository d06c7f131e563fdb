package childproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/childproc/proctest"
	"massgen/internal/childproc/reexec"
)

// The test binary doubles as a helper process (helperEnv selects what it does), standing in
// for massgen where a test needs to kill it or to give it an environment from its start.
const helperEnv = "CHILDPROC_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		goleak.VerifyTestMain(m)
	case "detach":
		helperDetach()
	case "spy":
		helperSpy()
	case "sandbox":
		helperSandbox()
	}
}

// modes are the three ways a child runs on Linux.
var modes = []struct {
	name     string
	mode     Mode
	fallback bool
}{{"confined", Confined, false}, {"fallback", Confined, true}, {"tree", Tree, false}}

func withMode(t *testing.T, fallback bool) {
	if fallback {
		t.Cleanup(DisableNamespaces())
	}
}

// run runs script with sh in mode and returns its output and status.
func run(t *testing.T, mode Mode, script string, env ...string) (string, Status) {
	t.Helper()
	var out bytes.Buffer
	c := Command(nil, mode, "sh", "-c", script)
	c.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	c.Stdout, c.Stderr = &out, &out
	c.WaitDelay = 5 * time.Second
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st := c.Wait()
	return out.String(), st
}

func TestStatusIsTheCommands(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			withMode(t, m.fallback)
			for script, want := range map[string]string{
				"exit 0":             "exit status 0",
				"echo hi; exit 3":    "exit status 3",
				"kill -TERM $$":      "signal: terminated",
				"kill -KILL $$":      "signal: killed",
				"exit 200":           "exit status 200",
				"sleep 300 & exit 4": "exit status 4",
			} {
				if _, st := run(t, m.mode, script); st.String() != want {
					t.Errorf("%q ended with %s, want %s", script, st, want)
				}
			}
			out, _ := run(t, m.mode, "pwd; echo $FOO", "FOO=bar")
			if !strings.HasSuffix(out, "bar\n") {
				t.Errorf("output = %q", out)
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			withMode(t, m.fallback)
			c := Command(nil, m.mode, "massgen-no-such-program")
			if err := c.Start(); err == nil || !strings.Contains(err.Error(), "executable file not found") {
				t.Errorf("Start = %v", err)
			}
			c = Command(nil, m.mode, "sh", "-c", "true")
			c.Dir = "/nonexistent/dir"
			if err := c.Start(); err == nil {
				t.Error("Start in a missing directory succeeded")
			}
		})
	}
}

// Every technique a command may use to detach fails: when its main process returns, nothing it
// started is left.
func TestNothingOutlivesTheCommand(t *testing.T) {
	techniques := proctest.DetachTechniques()
	techniques["holds pipe"] = "sleep %s &"
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			withMode(t, m.fallback)
			for name, tmpl := range techniques {
				mk := proctest.Marker()
				start := time.Now()
				_, st := run(t, m.mode, fmt.Sprintf(tmpl, mk)+"\nsleep 0.2; echo done")
				if !st.Success() {
					t.Errorf("%s: %s", name, st)
				}
				if d := time.Since(start); d > 10*time.Second { // not the 300 s of the sleeps; generous for a loaded machine
					t.Errorf("%s: took %s", name, d)
				}
				proctest.RequireNone(t, mk, 2*time.Second)
			}
		})
	}
}

func TestKillEndsTheTree(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			withMode(t, m.fallback)
			mk := proctest.Marker()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			c := Command(nil, m.mode, "sh", "-c", fmt.Sprintf("trap '' TERM; setsid sleep %s & (sh -c 'sleep %s &' &); sleep %s & echo up; sleep %s", mk, mk, mk, mk))
			c.Env = []string{"PATH=" + os.Getenv("PATH")}
			c.Stdout = w
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if line, _ := bufio.NewReader(r).ReadString('\n'); line != "up\n" {
				t.Fatalf("read %q", line)
			}
			if err := c.Signal(syscall.SIGTERM); err != nil {
				t.Errorf("Signal: %v", err)
			}
			start := time.Now()
			c.Kill()
			st := c.Wait()
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Kill took %s", d)
			}
			if st.String() != "signal: killed" {
				t.Errorf("status %s", st)
			}
			proctest.RequireNone(t, mk, 2*time.Second)
			c.Kill() // harmless once reaped
			if err := c.Signal(syscall.SIGTERM); err != os.ErrProcessDone {
				t.Errorf("Signal after Wait = %v", err)
			}
		})
	}
}

// helperDetach starts a command that detaches in the mode of CHILDPROC_TEST_MODE, says ready
// and waits to be killed.
func helperDetach() {
	if os.Getenv("CHILDPROC_TEST_MODE") == "fallback" {
		DisableNamespaces()
	}
	mode := Confined
	if os.Getenv("CHILDPROC_TEST_MODE") == "tree" {
		mode = Tree
	}
	mk := os.Getenv("CHILDPROC_TEST_MARKER")
	c := Command(nil, mode, "sh", "-c", fmt.Sprintf("setsid sleep %s & nohup sleep %s >/dev/null 2>&1 & (sh -c 'sleep %s &' &); setsid -f sleep %s; echo ready; sleep %s", mk, mk, mk, mk, mk))
	c.Env = []string{"PATH=" + os.Getenv("PATH")}
	c.Stdout = os.Stdout
	if err := c.Start(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	c.Wait()
	os.Exit(0)
}

// Killing massgen with SIGKILL ends every tree it started, whatever the processes did to detach.
func TestNothingOutlivesMassgen(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			mk := proctest.Marker()
			cmd := proctest.Helper(t, []string{"-test.run=^$"}, helperEnv+"=detach", "CHILDPROC_TEST_MODE="+m.name, "CHILDPROC_TEST_MARKER="+mk)
			proctest.StartHelper(t, cmd)
			if !proctest.Eventually(2*time.Second, func() bool { return len(proctest.WithMarker(mk)) >= 5 }) {
				t.Fatalf("the command did not start its processes: %q", proctest.WithMarker(mk))
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			proctest.RequireNone(t, mk, 5*time.Second)
		})
	}
}

const fakeKey = "sk-test-childproc-c0ffee"

// helperSpy is massgen with a key in its environment from the start: it runs a command that
// tries to read the key from massgen's /proc entries and prints what the command printed.
func helperSpy() {
	if os.Getenv("CHILDPROC_TEST_HARDEN") != "" {
		if err := Harden(); err != nil {
			fmt.Println("Harden:", err)
		}
	}
	if os.Getenv("CHILDPROC_TEST_MODE") == "fallback" {
		DisableNamespaces()
	}
	script := `p=` + strconv.Itoa(os.Getpid()) + `
cat /proc/$PPID/environ /proc/$p/environ; cat /proc/*/environ; head -c 100000 /proc/$p/mem
grep -a -o 'sk-test-[a-z0-9-]*' /proc/*/environ; tr '\0' '\n' </proc/$PPID/cmdline
echo end`
	var out []byte
	var err error
	if os.Getenv("CHILDPROC_TEST_MODE") == "direct" {
		// The old way: sh -c straight from massgen.
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		out, err = cmd.CombinedOutput()
	} else {
		var b bytes.Buffer
		c := Command(nil, Confined, "sh", "-c", script)
		c.Env = []string{"PATH=" + os.Getenv("PATH")}
		c.Stdout, c.Stderr = &b, &b
		if err = c.Start(); err == nil {
			c.Wait()
		}
		out = b.Bytes()
	}
	fmt.Printf("%s\n%v\n", out, err)
	os.Exit(0)
}

// A command cannot read the keys in massgen's environment or memory: not from its parent's
// /proc entries, not from massgen's, not from any process's.
func TestKeysOutOfReach(t *testing.T) {
	spy := func(t *testing.T, mode string, harden bool) string {
		cmd := proctest.Helper(t, []string{"-test.run=^$"}, helperEnv+"=spy", "CHILDPROC_TEST_MODE="+mode, "MASSGEN_TEST_SECRET_KEY="+fakeKey)
		if harden {
			cmd.Env = append(cmd.Env, "CHILDPROC_TEST_HARDEN=1")
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "end\n") {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		return string(out)
	}
	// The attack works the old way: the test can fail.
	if out := spy(t, "direct", false); !strings.Contains(out, fakeKey) {
		t.Fatalf("the direct command did not find the key; the test proves nothing:\n%s", out)
	}
	for _, c := range []struct {
		mode   string
		harden bool
	}{{"confined", false}, {"confined", true}, {"fallback", true}} {
		t.Run(fmt.Sprintf("%s harden=%v", c.mode, c.harden), func(t *testing.T) {
			out := spy(t, c.mode, c.harden)
			if strings.Contains(out, fakeKey) {
				t.Errorf("the command read the key:\n%s", out)
			}
			if !strings.Contains(out, reexec.InitName) {
				t.Errorf("the command could not even read its parent's cmdline:\n%s", out)
			}
		})
	}
}

func TestScrubEnviron(t *testing.T) {
	// In this process rather than through Harden, whose non-dumpable process may not even read
	// its own /proc/self/environ when it is not root.
	before := os.Environ()
	if err := scrubEnviron(); err != nil {
		t.Fatal(err)
	}
	if after := os.Environ(); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Error("erasing the kernel's copy changed os.Environ")
	}
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || len(bytes.Trim(b, "\x00")) != 0 {
		t.Errorf("/proc/self/environ = %q", b)
	}
}

func TestConfinementReported(t *testing.T) {
	if ok, why := Confinement(); !ok {
		t.Skipf("user namespaces unavailable here: %s", why)
	}
	restore := DisableNamespaces()
	defer restore()
	ok, why := Confinement()
	if ok || !strings.Contains(why, "can see other processes of the same user") {
		t.Errorf("Confinement = %v, %q", ok, why)
	}
}
