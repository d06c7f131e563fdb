package procfs

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		line string
		want Process
		ok   bool
	}{
		{"42 (sleep) S 1 42 42 0 -1 4194304", Process{PPID: 1, PGID: 42, State: 'S'}, true},
		// A program may name itself anything: only the last ')' ends the name.
		{"42 (a) Z 9 9 (b) R 7 8 9 0", Process{PPID: 7, PGID: 8, State: 'R'}, true},
		{"42 (x y) Z 3 4 5", Process{PPID: 3, PGID: 4, State: 'Z'}, true},
		{"42 (sh) S 1", Process{}, false},
		{"42 sh S 1 2 3", Process{}, false},
		{"42 (sh) Sx 1 2 3", Process{}, false},
		{"42 (sh) S one 2 3", Process{}, false},
		{"", Process{}, false},
	} {
		got, ok := parseStat([]byte(c.line))
		if ok != c.ok || got != c.want {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func TestProcessesHasThisOne(t *testing.T) {
	ps, err := Processes()
	if err != nil {
		t.Fatal(err)
	}
	want := Process{PID: os.Getpid(), PPID: os.Getppid(), PGID: syscall.Getpgrp(), State: 'R'}
	i := slices.IndexFunc(ps, func(p Process) bool { return p.PID == want.PID })
	if i < 0 {
		t.Fatalf("pid %d not among %d processes", want.PID, len(ps))
	}
	if got := ps[i]; got.PPID != want.PPID || got.PGID != want.PGID || !got.Live() {
		t.Errorf("this process = %+v, want %+v", got, want)
	}
	if _, err := Read(-1); err == nil {
		t.Error("Read(-1) succeeded")
	}
}

func TestChildren(t *testing.T) {
	if !HasChildren() {
		t.Skip("this kernel does not list a thread's children")
	}
	var pids []int
	for range 2 {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		pids = append(pids, c.Process.Pid)
	}
	got := Children(os.Getpid())
	for _, p := range pids {
		if !slices.Contains(got, p) {
			t.Errorf("Children = %v, without %d", got, p)
		}
	}
	if got := Children(-1); got != nil {
		t.Errorf("Children(-1) = %v", got)
	}
}
