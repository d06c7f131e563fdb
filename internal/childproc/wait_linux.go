package childproc

import (
	"encoding/binary"
	"runtime"
	"strings"
	"syscall"
	"unsafe"
)

// waitNoReap blocks until the process pid exits and returns how it ended, leaving it a zombie:
// its pid, which is also the id of its process group, cannot go to another process before it is
// reaped. ok is false when the kernel's answer cannot be read.
func waitNoReap(pid int) (st Status, ok bool) {
	var info [128]byte // siginfo_t
	for {
		const pPID = 1
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return Status{}, false
		}
		return parseSiginfo(info[:], pid)
	}
}

// parseSiginfo reads the SIGCHLD siginfo_t that waitid filled in for pid.
func parseSiginfo(b []byte, pid int) (Status, bool) {
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
		return Status{}, false
	}
	status := field(union + 8) // after si_pid and si_uid
	switch field(code) {
	case 1: // CLD_EXITED
		return Status{Code: status}, true
	case 2: // CLD_KILLED
		return Status{Code: -1, Signal: syscall.Signal(status)}, true
	case 3: // CLD_DUMPED
		return Status{Code: -1, Signal: syscall.Signal(status), Core: true}, true
	}
	return Status{}, false
}
