// Package proctest is what tests of process lifetimes share: starting the test binary again as
// a helper process, unique markers to find the processes a test started, and waits for them to
// be gone. It reads Linux's /proc; elsewhere the functions that need it skip the test.
package proctest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Marker is a unique string to put in the argv of the processes a test starts, as in
// "sleep <marker>": a sleep of 300 s and a bit.
func Marker() string {
	return fmt.Sprintf("300.%d%d", os.Getpid(), time.Now().UnixNano()%1e9)
}

// Helper is the test binary run again with args, with this process's environment plus env: a
// helper process whose TestMain (or test) does what env says. Its temporary files go under
// t's temporary directory: a helper is killed or exits before its own cleanups run.
func Helper(t testing.TB, args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	// GORACE: under -race, a process otherwise sleeps 1 s before exiting.
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0", "TMPDIR="+t.TempDir()), env...)
	return cmd
}

// StartHelper starts cmd and waits for the first line of its output to be "ready", failing the
// test (with cmd killed) otherwise. cmd is killed and reaped when the test ends, if the test
// has not done so itself.
func StartHelper(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("helper said %q", line)
	}
}

// Eventually polls cond until it holds, for up to d, and reports whether it did.
func Eventually(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// DetachTechniques are the ways a shell command may try to outlive its run, by name; %s is a
// marker. The map is the caller's to add to.
func DetachTechniques() map[string]string {
	return map[string]string{
		"setsid &":    "setsid sleep %s >/dev/null 2>&1 &",
		"nohup &":     "nohup sleep %s >/dev/null 2>&1 &",
		"&":           "sleep %s >/dev/null 2>&1 &",
		"double fork": "(sh -c 'sleep %s >/dev/null 2>&1 &' &)",
		"setsid -f":   "setsid -f sleep %s >/dev/null 2>&1",
		"100 forks":   "i=0; while [ $i -lt 100 ]; do sleep %s >/dev/null 2>&1 & i=$((i+1)); done",
	}
}

// NeedBwrap skips a test that needs bubblewrap where it is not installed; CI installs it, so
// there a missing one fails the test instead.
func NeedBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bwrap is missing: .ci/run installs bubblewrap")
		}
		t.Skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
	}
}
