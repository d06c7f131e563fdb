//go:build linux

package command

import "massgen/internal/childproc/procfs"

// groupAlive reports whether a process of the group pgid other than except still runs
// (zombies do not count). except is the tree's init, which lingers while anything of the tree
// runs, in the group or out of it.
func groupAlive(pgid, except int) bool {
	procs, err := procfs.Processes()
	if err != nil {
		return signalGroup(pgid, 0) == nil
	}
	for _, p := range procs {
		if p.PID != except && p.PGID == pgid && p.Live() {
			return true
		}
	}
	return false
}
