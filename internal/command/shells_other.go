//go:build !linux

package command

// groupAlive reports whether the process group pgid still exists. Without an init the shell is
// the group's leader, already reaped when this is asked, so except does not matter.
func groupAlive(pgid, except int) bool { return signalGroup(pgid, 0) == nil }
