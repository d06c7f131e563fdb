package reexec

import (
	"errors"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"
)

// Inside a sandbox, massgen's binary runs twice before the command:
//
//   - the sandbox init (argv[0] SandboxInitPath), PID 1 of the sandbox's PID namespace: it
//     relays the proxy (when there is one), starts the exec stage, reaps every orphan, and
//     exits with the command's status once it ends (with linger, once everything has). Its
//     exit ends the sandbox: the kernel kills what is left of the namespace.
//   - the exec stage (argv[0] SandboxExecName): it sets the limits and the seccomp filter on
//     itself and execs the command, which inherits both; the init keeps neither, so that a
//     command at its process limit cannot starve the init of threads, and the init alone can
//     reach the proxy's and the tools' unix sockets.

func readSandboxSpec() (SandboxSpec, []string, error) {
	if len(os.Args) < 3 {
		return SandboxSpec{}, nil, errors.New("no command to run")
	}
	spec, err := DecodeSandboxSpec(os.Args[1])
	if err != nil {
		return spec, nil, errors.New("bad setup: " + err.Error())
	}
	return spec, os.Args[2:], nil
}

// sandboxFail reports msg, and err when there is one, on stderr (the command's), and returns
// the status of a command that could not run.
func sandboxFail(msg string, err error) int {
	switch {
	case err != nil && msg == "":
		msg = err.Error()
	case err != nil:
		msg += ": " + err.Error()
	}
	_, _ = os.Stderr.WriteString("massgen sandbox: " + msg + "\n")
	return 126
}

func runSandboxInit() int {
	spec, args, err := readSandboxSpec()
	if err != nil {
		return sandboxFail("", err)
	}
	// Not dumpable: the command, same user, must not ptrace the process that holds the way out.
	if err := prctl(prSetDumpable, 0); err != nil {
		return sandboxFail("cannot protect the sandbox init", err)
	}
	// A handled signal (not an ignored one) goes back to its default in the command. PID 1
	// gets only signals it handles; these are dropped, so the command cannot end the init.
	signal.Notify(make(chan os.Signal, 1), forwarded...)
	if spec.Proxy {
		ln, err := listenLoopback(ProxyPort)
		if err != nil {
			return sandboxFail("cannot offer the proxy", err)
		}
		go relay(ln, SandboxProxyPath) // ends with the sandbox
	}
	if spec.Tools {
		ln, err := listenLoopback(ToolsPort)
		if err != nil {
			return sandboxFail("cannot offer the tools", err)
		}
		go relay(ln, SandboxToolsPath) // ends with the sandbox
	}
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{SandboxExecName, os.Args[1]}, args...),
		&syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		return sandboxFail("cannot start "+spec.Path, err)
	}
	var main syscall.WaitStatus
	for {
		var ws syscall.WaitStatus
		p, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil { // ECHILD: nothing is left
			return exitCode(main)
		}
		if p == pid {
			main = ws
			if !spec.Linger {
				return exitCode(main)
			}
		}
	}
}

// exitCode is how the sandbox init reports ws: a signal as 128+N, like a shell.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func runSandboxExec() int {
	spec, args, err := readSandboxSpec()
	if err != nil {
		return sandboxFail("", err)
	}
	runtime.LockOSThread() // the filter is set on this thread (and synced to the others), which execs
	cpu := spec.CPU
	limits := []struct {
		res      int
		cur, max uint64
		name     string
	}{
		{rlimitNProc, spec.NProc, spec.NProc, "processes"},
		{rlimitFSize, spec.FSize, spec.FSize, "file size"},
		{rlimitCPU, cpu, cpu + 5, "processor time"}, // SIGXCPU first, SIGKILL 5 s later
		{rlimitAS, spec.AS, spec.AS, "address space"},
		{rlimitCore, 0, 0, "core dumps"},
	}
	for _, l := range limits {
		if l.cur == 0 && l.res != rlimitCore {
			continue
		}
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.cur, Max: l.max}); err != nil {
			return sandboxFail("cannot limit "+l.name, err)
		}
	}
	if err := installSeccomp(); err != nil {
		return sandboxFail("", err)
	}
	err = syscall.Exec(spec.Path, args, os.Environ())
	sandboxFail("cannot run "+spec.Path, err)
	return 127
}

// The seccomp filter. Syscall numbers are the kernel's ABI for each architecture.
type seccompABI struct {
	arch         uint32
	socket       uint32
	ioUringSetup uint32
	seccomp      uintptr
	x32          bool // x86-64: refuse the x32 ABI's numbers, which would bypass the checks
}

// SeccompArch reports why the sandbox's seccomp filter cannot be set on this architecture, or
// nil.
func SeccompArch() error {
	_, err := seccompArch()
	return err
}

func seccompArch() (seccompABI, error) {
	switch runtime.GOARCH {
	case "amd64":
		return seccompABI{arch: auditArchX86_64, socket: 41, ioUringSetup: 425, seccomp: 317, x32: true}, nil
	case "arm64":
		return seccompABI{arch: auditArchAarch64, socket: 198, ioUringSetup: 425, seccomp: 277}, nil
	case "riscv64":
		return seccompABI{arch: auditArchRiscv64, socket: 198, ioUringSetup: 425, seccomp: 277}, nil
	}
	return seccompABI{}, errors.New("the sandbox's seccomp filter supports amd64, arm64 and riscv64, not " + runtime.GOARCH)
}

// seccompProgram refuses socket(AF_UNIX, ...) and io_uring_setup with EPERM, and kills a
// process that makes a system call of another architecture (32-bit compatibility calls
// would bypass the numbers checked).
func seccompProgram(abi seccompABI) []syscall.SockFilter {
	const (
		offNr   = 0
		offArch = 4
		offArg0 = 16 // args[0], its low 32 bits on these little-endian architectures
		x32Bit  = 0x40000000
		ld      = syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS
		jeq     = syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K
		jge     = syscall.BPF_JMP | syscall.BPF_JGE | syscall.BPF_K
		ret     = syscall.BPF_RET | syscall.BPF_K
	)
	allow := syscall.SockFilter{Code: ret, K: seccompRetAllow}
	deny := syscall.SockFilter{Code: ret, K: seccompRetErrno | uint32(syscall.EPERM)}
	kill := syscall.SockFilter{Code: ret, K: seccompRetKillProcess}
	// Jumps count instructions forward from the next one; the tail is fixed:
	// [checkNr..] socketArg: ld arg0; jeq AF_UNIX -> deny; allow; deny
	prog := []syscall.SockFilter{
		{Code: ld, K: offArch},
		{Code: jeq, K: abi.arch, Jt: 1},
		kill,
		{Code: ld, K: offNr},
	}
	// tail offsets from the instruction after each jump, computed below
	tail := []syscall.SockFilter{
		{Code: ld, K: offArg0},                 // socket: its family
		{Code: jeq, K: syscall.AF_UNIX, Jt: 1}, // -> deny
		allow,
		deny,
	}
	var checks []syscall.SockFilter
	if abi.x32 {
		checks = append(checks, syscall.SockFilter{Code: jge, K: x32Bit})
	}
	checks = append(checks, syscall.SockFilter{Code: jeq, K: abi.socket}, syscall.SockFilter{Code: jeq, K: abi.ioUringSetup})
	// After check i comes checks[i+1:], then the tail: socketArg at len(checks)-1-i ahead.
	for i := range checks {
		rest := uint8(len(checks) - 1 - i) // checks left after this one
		toArg, toAllow, toDeny := rest, rest+2, rest+3
		switch checks[i].K {
		case abi.socket:
			checks[i].Jt = toArg
		default: // x32 numbers and io_uring_setup
			checks[i].Jt = toDeny
		}
		if i == len(checks)-1 {
			checks[i].Jf = toAllow
		}
	}
	return append(append(prog, checks...), tail...)
}

func installSeccomp() error {
	abi, err := seccompArch()
	if err != nil {
		return err
	}
	prog := seccompProgram(abi)
	if err := prctl(prSetNoNewPrivs, 1); err != nil {
		return errors.New("cannot set no_new_privs: " + err.Error())
	}
	fprog := syscall.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := syscall.Syscall(abi.seccomp, seccompSetModeFilter, seccompFilterFlagTsync,
		uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errors.New("cannot install the seccomp filter: " + errno.Error())
	}
	runtime.KeepAlive(prog)
	return nil
}
