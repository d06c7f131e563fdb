//go:build !unix

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

func ownGroup(*exec.Cmd) {}

// signalGroup can only kill the process itself: there are no process groups to signal.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if sig == syscall.Signal(0x9) || sig == syscall.Signal(0xf) {
		return cmd.Process.Kill()
	}
	return errors.ErrUnsupported
}

func exitSignal(*os.ProcessState) syscall.Signal { return syscall.Signal(0x9) }
