// Package procfs reads the process table from Linux's /proc: the one parser of
// /proc/PID/stat for the code that finds the processes of a tree or a group (childproc's init,
// workspace's background shells, and the tests that check nothing outlived them).
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Process is what /proc/PID/stat says of a process that finding its relatives needs.
type Process struct {
	PID, PPID, PGID int
	// State is the kernel's one-letter state: R, S, D, T, Z (zombie), X (dead), ...
	State byte
}

// Live reports whether p still runs: a zombie or dead process only waits to be reaped.
func (p Process) Live() bool { return p.State != 'Z' && p.State != 'X' }

// Read reads /proc/pid/stat. An error means the process is gone (or the line is not what Linux
// writes).
func Read(pid int) (Process, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Process{}, err
	}
	p, ok := parseStat(b)
	if !ok {
		return Process{}, fmt.Errorf("/proc/%d/stat: unexpected contents %.100q", pid, b)
	}
	p.PID = pid
	return p, nil
}

// Processes lists every process of /proc, zombies included. A process that ends during the scan
// is left out; the error is only that of listing /proc itself.
func Processes() ([]Process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("cannot list the processes: %w", err)
	}
	out := make([]Process, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process: self, sys, ...
		}
		if p, err := Read(pid); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// parseStat parses "pid (comm) state ppid pgrp ...". comm is the program's name, which may
// hold spaces and parentheses of its own: the fields start after the last ')'.
func parseStat(b []byte) (Process, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Process{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return Process{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return Process{}, false
	}
	return Process{PPID: ppid, PGID: pgid, State: f[0][0]}, true
}
