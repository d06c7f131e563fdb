//go:build linux

package workspace

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// groupAlive reports whether a process of the group pgid other than except still runs
// (zombies do not count). except is the tree's init, which lingers while anything of the tree
// runs, in the group or out of it.
func groupAlive(pgid, except int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return signalGroup(pgid, 0) == nil
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == except {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:])) // state, ppid, pgrp, ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
