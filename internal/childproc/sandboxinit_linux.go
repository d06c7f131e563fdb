package childproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Inside a sandbox, massgen's binary runs twice before the command:
//
//   - the sandbox init (argv[0] sandboxInitPath), PID 1 of the sandbox's PID namespace: it
//     relays the proxy (when there is one), starts the exec stage, reaps every orphan, and
//     exits with the command's status once it ends (with linger, once everything has). Its
//     exit ends the sandbox: the kernel kills what is left of the namespace.
//   - the exec stage (argv[0] sandboxExecName): it sets the limits and the seccomp filter on
//     itself and execs the command, which inherits both; the init keeps neither, so that a
//     command at its process limit cannot starve the init of threads, and the init alone can
//     reach the proxy's and the tools' unix sockets.

func readSandboxSpec() (sandboxSpec, []string, error) {
	var spec sandboxSpec
	if len(os.Args) < 3 {
		return spec, nil, errors.New("no command to run")
	}
	if err := json.Unmarshal([]byte(os.Args[1]), &spec); err != nil {
		return spec, nil, fmt.Errorf("bad setup: %w", err)
	}
	return spec, os.Args[2:], nil
}

func sandboxFail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "massgen sandbox: "+format+"\n", a...)
	return 126
}

func runSandboxInit() int {
	spec, args, err := readSandboxSpec()
	if err != nil {
		return sandboxFail("%v", err)
	}
	// Not dumpable: the command, same user, must not ptrace the process that holds the way out.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return sandboxFail("cannot protect the sandbox init: %v", err)
	}
	// A handled signal (not an ignored one) goes back to its default in the command. PID 1
	// gets only signals it handles; these are dropped, so the command cannot end the init.
	signal.Notify(make(chan os.Signal, 1), forwarded...)
	if spec.Proxy {
		ln, err := net.Listen("tcp", ProxyAddr)
		if err != nil {
			return sandboxFail("cannot offer the proxy: %v", err)
		}
		go relay(ln, sandboxProxyPath) // ends with the sandbox
	}
	if spec.Tools {
		ln, err := net.Listen("tcp", ToolsAddr)
		if err != nil {
			return sandboxFail("cannot offer the tools: %v", err)
		}
		go relay(ln, sandboxToolsPath) // ends with the sandbox
	}
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{sandboxExecName, os.Args[1]}, args...),
		&syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		return sandboxFail("cannot start %s: %v", spec.Path, err)
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

// relay passes every connection to ln on to the host's unix socket at path (the proxy, or
// the tool socket).
func relay(ln net.Listener, path string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() { // ends when either side closes
			defer c.Close()
			u, err := net.Dial("unix", path)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{})
			go func() {
				_, _ = io.Copy(u, c)
				_ = u.(*net.UnixConn).CloseWrite()
				close(done)
			}()
			_, _ = io.Copy(c, u)
			_ = c.(*net.TCPConn).CloseWrite()
			<-done
		}()
	}
}

func runSandboxExec() int {
	spec, args, err := readSandboxSpec()
	if err != nil {
		return sandboxFail("%v", err)
	}
	runtime.LockOSThread() // the filter is set on this thread (and synced to the others), which execs
	cpu := spec.CPU
	limits := []struct {
		res      int
		cur, max uint64
		name     string
	}{
		{unix.RLIMIT_NPROC, spec.NProc, spec.NProc, "processes"},
		{unix.RLIMIT_FSIZE, spec.FSize, spec.FSize, "file size"},
		{unix.RLIMIT_CPU, cpu, cpu + 5, "processor time"}, // SIGXCPU first, SIGKILL 5 s later
		{unix.RLIMIT_AS, spec.AS, spec.AS, "address space"},
		{unix.RLIMIT_CORE, 0, 0, "core dumps"},
	}
	for _, l := range limits {
		if l.cur == 0 && l.res != unix.RLIMIT_CORE {
			continue
		}
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.cur, Max: l.max}); err != nil {
			return sandboxFail("cannot limit %s: %v", l.name, err)
		}
	}
	if err := installSeccomp(); err != nil {
		return sandboxFail("%v", err)
	}
	err = syscall.Exec(spec.Path, args, os.Environ())
	fmt.Fprintf(os.Stderr, "massgen sandbox: cannot run %s: %v\n", spec.Path, err)
	return 127
}

// The seccomp filter. Syscall numbers are the kernel's ABI for each architecture.
type seccompABI struct {
	arch         uint32
	socket       uint32
	ioUringSetup uint32
	x32          bool // x86-64: refuse the x32 ABI's numbers, which would bypass the checks
}

func seccompArch() (seccompABI, error) {
	switch runtime.GOARCH {
	case "amd64":
		return seccompABI{arch: unix.AUDIT_ARCH_X86_64, socket: 41, ioUringSetup: 425, x32: true}, nil
	case "arm64":
		return seccompABI{arch: unix.AUDIT_ARCH_AARCH64, socket: 198, ioUringSetup: 425}, nil
	case "riscv64":
		return seccompABI{arch: unix.AUDIT_ARCH_RISCV64, socket: 198, ioUringSetup: 425}, nil
	}
	return seccompABI{}, fmt.Errorf("the sandbox's seccomp filter supports amd64, arm64 and riscv64, not %s", runtime.GOARCH)
}

// seccompProgram refuses socket(AF_UNIX, ...) and io_uring_setup with EPERM, and kills a
// process that makes a system call of another architecture (32-bit compatibility calls
// would bypass the numbers checked).
func seccompProgram(abi seccompABI) []unix.SockFilter {
	const (
		offNr   = 0
		offArch = 4
		offArg0 = 16 // args[0], its low 32 bits on these little-endian architectures
		x32Bit  = 0x40000000
		ld      = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge     = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret     = unix.BPF_RET | unix.BPF_K
	)
	allow := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}
	deny := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	kill := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS}
	// Jumps count instructions forward from the next one; the tail is fixed:
	// [checkNr..] socketArg: ld arg0; jeq AF_UNIX -> deny; allow; deny
	prog := []unix.SockFilter{
		{Code: ld, K: offArch},
		{Code: jeq, K: abi.arch, Jt: 1},
		kill,
		{Code: ld, K: offNr},
	}
	// tail offsets from the instruction after each jump, computed below
	tail := []unix.SockFilter{
		{Code: ld, K: offArg0},              // socket: its family
		{Code: jeq, K: unix.AF_UNIX, Jt: 1}, // -> deny
		allow,
		deny,
	}
	var checks []unix.SockFilter
	if abi.x32 {
		checks = append(checks, unix.SockFilter{Code: jge, K: x32Bit})
	}
	checks = append(checks, unix.SockFilter{Code: jeq, K: abi.socket}, unix.SockFilter{Code: jeq, K: abi.ioUringSetup})
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
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot set no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("cannot install the seccomp filter: %w", errno)
	}
	runtime.KeepAlive(prog)
	return nil
}
