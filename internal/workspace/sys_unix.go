//go:build unix

package workspace

import "syscall"

const (
	oNonBlock = syscall.O_NONBLOCK
	oNoFollow = syscall.O_NOFOLLOW
)

// signalGroup sends sig to the process group pgid (0 only checks that the group exists).
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
