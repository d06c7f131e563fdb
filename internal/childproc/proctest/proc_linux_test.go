package proctest

import (
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The finders see a process while it runs and not once it is reaped: a finder that sees
// nothing would let every RequireNone pass.
func TestFindersSeeALiveProcess(t *testing.T) {
	mk := Marker()
	cmd := exec.Command("sleep", mk)
	cmd.Env = []string{"PROCTEST_TAG=" + mk}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if got := WithMarker(mk); len(got) != 1 || !strings.HasSuffix(got[0], ": sleep "+mk+" ") {
		t.Errorf("WithMarker = %q", got)
	}
	if got := WithEnv(t, "PROCTEST_TAG="+mk); !slices.Equal(got, []int{pid}) {
		t.Errorf("WithEnv = %v, want [%d]", got, pid)
	}
	if got := PGID(t, pid); got != pid {
		t.Errorf("PGID = %d, want %d", got, pid)
	}
	if got := GroupMembers(t, pid); !slices.Equal(got, []int{pid}) {
		t.Errorf("GroupMembers = %v, want [%d]", got, pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	RequireNone(t, mk, time.Second)
	if got := GroupMembers(t, pid); len(got) != 0 {
		t.Errorf("GroupMembers after the end = %v", got)
	}
}
