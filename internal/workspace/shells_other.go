//go:build !linux

package workspace

import "os/exec"

// waitExit blocks until the process of cmd exits, reaps it and returns how it ended. Where
// waitid cannot leave the process a zombie, the group is signalled after its leader is reaped:
// a group whose processes all ended could then, in theory, be a new process's.
func waitExit(cmd *exec.Cmd) (st exitStatus, reaped bool) {
	_ = cmd.Wait()
	return statusOf(cmd.ProcessState), true
}

// groupAlive reports whether the process group pgid still exists.
func groupAlive(pgid int) bool { return signalGroup(pgid, 0) == nil }
