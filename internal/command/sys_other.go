//go:build !unix

package command

import (
	"errors"
	"syscall"
)

// signalGroup fails: there are no process groups.
func signalGroup(pgid int, sig syscall.Signal) error { return errors.ErrUnsupported }
