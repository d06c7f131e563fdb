//go:build unix

package workspace

import (
	"os/exec"
	"syscall"
)

const (
	oNonBlock = syscall.O_NONBLOCK
	oNoFollow = syscall.O_NOFOLLOW
)

// ownGroup starts cmd in a process group of its own and makes cancellation kill the whole
// group, so a command's children die with it.
func ownGroup(cmd *exec.Cmd) {
	newGroup(cmd)
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// newGroup starts cmd in a process group of its own, whose id is cmd's pid.
func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group pgid (0 only checks that the group exists).
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
