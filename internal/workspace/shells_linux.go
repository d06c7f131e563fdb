//go:build linux

package workspace

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// waitExit blocks until the process of cmd exits and returns how it ended. It leaves the
// process a zombie (reaped is false): its pid, which is also the id of its process group,
// cannot go to another process before cmd.Wait reaps it, so signalling the group meanwhile
// never reaches a stranger, however long the processes the shell left behind keep running.
// When the kernel's answer cannot be read, it reaps the process instead.
func waitExit(cmd *exec.Cmd) (st exitStatus, reaped bool) {
	pid := cmd.Process.Pid
	var info [128]byte // siginfo_t
	for {
		const pPID = 1
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno == 0 {
			if st, ok := parseSiginfo(info[:], pid); ok {
				return st, false
			}
		}
		break
	}
	_ = cmd.Wait()
	return statusOf(cmd.ProcessState), true
}

// parseSiginfo reads the SIGCHLD siginfo_t that waitid filled in for pid.
func parseSiginfo(b []byte, pid int) (exitStatus, bool) {
	field := func(off int) int { return int(int32(binary.NativeEndian.Uint32(b[off:]))) }
	union := 3 * 4 // si_signo, si_errno, si_code, then the union, aligned like a pointer
	if unsafe.Sizeof(uintptr(0)) == 8 {
		union = 4 * 4
	}
	code := 8
	if strings.HasPrefix(runtime.GOARCH, "mips") {
		code = 4 // si_code comes before si_errno
	}
	if field(0) != int(syscall.SIGCHLD) || field(union) != pid {
		return exitStatus{}, false
	}
	status := field(union + 8) // after si_pid and si_uid
	switch field(code) {
	case 1: // CLD_EXITED
		return exitStatus{code: status}, true
	case 2: // CLD_KILLED
		return exitStatus{code: -1, signal: syscall.Signal(status).String()}, true
	case 3: // CLD_DUMPED
		return exitStatus{code: -1, signal: syscall.Signal(status).String() + " (core dumped)"}, true
	}
	return exitStatus{}, false
}

// groupAlive reports whether a process of the group pgid still runs (zombies do not count).
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return signalGroup(pgid, 0) == nil
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
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
