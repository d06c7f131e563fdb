//go:build !unix

package workspace

import (
	"errors"
	"os/exec"
	"syscall"
)

const (
	oNonBlock = 0
	oNoFollow = 0
)

// ownGroup leaves cancellation to exec: without process groups only the shell is killed.
func ownGroup(cmd *exec.Cmd) {}

// newGroup does nothing: there are no process groups.
func newGroup(cmd *exec.Cmd) {}

// signalGroup fails: there are no process groups; only the shell itself can be killed.
func signalGroup(pgid int, sig syscall.Signal) error { return errors.ErrUnsupported }
