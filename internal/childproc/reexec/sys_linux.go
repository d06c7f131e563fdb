package reexec

import "syscall"

// Linux's numbers that package syscall lacks (it is frozen) and x/sys/unix has, written out
// because x/sys/unix imports encoding/binary and with it reflect (see the package comment).
// TestLinuxNumbers checks each against x/sys/unix.
const (
	prSetDumpable       = 4
	prCapbsetDrop       = 24
	prSetChildSubreaper = 36
	prSetNoNewPrivs     = 38

	capSysModule = 16
	capSysRawio  = 17
	capSysPtrace = 19
	capSysAdmin  = 21
	capPerfmon   = 38
	capBPF       = 39

	rlimitCPU   = 0
	rlimitFSize = 1
	rlimitCore  = 4
	rlimitNProc = 6
	rlimitAS    = 9

	auditArchX86_64  = 0xc000003e
	auditArchAarch64 = 0xc00000b7
	auditArchRiscv64 = 0xc00000f3

	seccompSetModeFilter   = 1
	seccompFilterFlagTsync = 1
	seccompRetKillProcess  = 0x80000000
	seccompRetErrno        = 0x00050000
	seccompRetAllow        = 0x7fff0000
)

func prctl(option int, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, uintptr(option), arg, 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
