// Package procfs reads the process table from Linux's /proc: the one parser of
// /proc/PID/stat and /proc/PID/task/TID/children for the code that finds the processes of a
// tree or a group (childproc's init, workspace's background shells, and the tests that check
// nothing outlived them).
//
// It imports no more than os and strconv: childproc's init (package reexec) uses it, and must
// not wait for the initialisation of bytes, fmt or reflect (see reexec's package comment).
package procfs

import (
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
		if len(b) > 100 {
			b = b[:100]
		}
		return Process{}, &Error{"/proc/" + strconv.Itoa(pid) + "/stat: unexpected contents " + strconv.Quote(string(b)), nil}
	}
	p.PID = pid
	return p, nil
}

// Processes lists every process of /proc, zombies included. A process that ends during the scan
// is left out; the error is only that of listing /proc itself.
func Processes() ([]Process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, &Error{"cannot list the processes", err}
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
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	if i < 0 {
		return Process{}, false
	}
	f := fields(b[i+1:], 3)
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

// Children lists the children of every thread of pid, from /proc/PID/task/TID/children (a
// kernel built without CONFIG_PROC_CHILDREN has no such files: HasChildren tells). A process
// that ends meanwhile gives none.
func Children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range fields(b, -1) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// HasChildren reports whether this kernel lists a thread's children (see Children).
func HasChildren() bool {
	self := strconv.Itoa(os.Getpid())
	_, err := os.Stat("/proc/" + self + "/task/" + self + "/children")
	return err == nil
}

// fields splits b at runs of spaces and newlines, into at most max fields (all when max < 0).
func fields(b []byte, max int) [][]byte {
	var out [][]byte
	start := -1
	for i := 0; i <= len(b) && (max < 0 || len(out) < max); i++ {
		space := i == len(b) || b[i] == ' ' || b[i] == '\n' || b[i] == '\t'
		switch {
		case space && start >= 0:
			out = append(out, b[start:i])
			start = -1
		case !space && start < 0:
			start = i
		}
	}
	return out
}

// Error is a failure to read /proc, with what caused it, if anything.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
