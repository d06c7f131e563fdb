//go:build !unix

package workspace

import (
	"errors"
	"syscall"
)

const (
	oNonBlock = 0
	oNoFollow = 0
)

// signalGroup fails: there are no process groups.
func signalGroup(pgid int, sig syscall.Signal) error { return errors.ErrUnsupported }
