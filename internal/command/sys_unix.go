//go:build unix

package command

import "syscall"

// signalGroup sends sig to the process group pgid (0 only checks that the group exists).
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
