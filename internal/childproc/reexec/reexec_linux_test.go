package reexec

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestLinuxNumbers(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, sys uint64
	}{
		{"PR_SET_DUMPABLE", prSetDumpable, unix.PR_SET_DUMPABLE},
		{"PR_CAPBSET_DROP", prCapbsetDrop, unix.PR_CAPBSET_DROP},
		{"PR_SET_CHILD_SUBREAPER", prSetChildSubreaper, unix.PR_SET_CHILD_SUBREAPER},
		{"PR_SET_NO_NEW_PRIVS", prSetNoNewPrivs, unix.PR_SET_NO_NEW_PRIVS},
		{"CAP_SYS_MODULE", capSysModule, unix.CAP_SYS_MODULE},
		{"CAP_SYS_RAWIO", capSysRawio, unix.CAP_SYS_RAWIO},
		{"CAP_SYS_PTRACE", capSysPtrace, unix.CAP_SYS_PTRACE},
		{"CAP_SYS_ADMIN", capSysAdmin, unix.CAP_SYS_ADMIN},
		{"CAP_PERFMON", capPerfmon, unix.CAP_PERFMON},
		{"CAP_BPF", capBPF, unix.CAP_BPF},
		{"RLIMIT_CPU", rlimitCPU, unix.RLIMIT_CPU},
		{"RLIMIT_FSIZE", rlimitFSize, unix.RLIMIT_FSIZE},
		{"RLIMIT_CORE", rlimitCore, unix.RLIMIT_CORE},
		{"RLIMIT_NPROC", rlimitNProc, unix.RLIMIT_NPROC},
		{"RLIMIT_AS", rlimitAS, unix.RLIMIT_AS},
		{"AUDIT_ARCH_X86_64", auditArchX86_64, unix.AUDIT_ARCH_X86_64},
		{"AUDIT_ARCH_AARCH64", auditArchAarch64, unix.AUDIT_ARCH_AARCH64},
		{"AUDIT_ARCH_RISCV64", auditArchRiscv64, unix.AUDIT_ARCH_RISCV64},
		{"SECCOMP_SET_MODE_FILTER", seccompSetModeFilter, unix.SECCOMP_SET_MODE_FILTER},
		{"SECCOMP_FILTER_FLAG_TSYNC", seccompFilterFlagTsync, unix.SECCOMP_FILTER_FLAG_TSYNC},
		{"SECCOMP_RET_KILL_PROCESS", seccompRetKillProcess, unix.SECCOMP_RET_KILL_PROCESS},
		{"SECCOMP_RET_ERRNO", seccompRetErrno, unix.SECCOMP_RET_ERRNO},
		{"SECCOMP_RET_ALLOW", seccompRetAllow, unix.SECCOMP_RET_ALLOW},
	} {
		if c.ours != c.sys {
			t.Errorf("%s is %d here, %d in x/sys/unix", c.name, c.ours, c.sys)
		}
	}
	abi, err := seccompArch()
	if err != nil {
		t.Skip(err)
	}
	if abi.seccomp != unix.SYS_SECCOMP || abi.socket != unix.SYS_SOCKET || abi.ioUringSetup != unix.SYS_IO_URING_SETUP {
		t.Errorf("%s: seccomp %d, socket %d, io_uring_setup %d; x/sys/unix says %d, %d, %d", runtime.GOARCH,
			abi.seccomp, abi.socket, abi.ioUringSetup, unix.SYS_SECCOMP, unix.SYS_SOCKET, unix.SYS_IO_URING_SETUP)
	}
}

// The relay passes bytes both ways and each side's end of writing, for many connections at
// once, and stops with its listener.
func TestRelay(t *testing.T) {
	defer goleak.VerifyNone(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var served sync.WaitGroup
	served.Add(1)
	go func() { // an echo server, upper-cased so that the copy is seen to come back from it
		defer served.Done()
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			served.Add(1)
			go func() {
				defer served.Done()
				defer c.Close()
				b, _ := io.ReadAll(c)
				_, _ = c.Write(bytes.ToUpper(b))
			}()
		}
	}()
	ln, err := listenLoopback(0)
	if err != nil {
		t.Fatal(err)
	}
	// Not ln.Fd(), which would make the socket blocking.
	rc, err := ln.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var sa syscall.Sockaddr
	if cerr := rc.Control(func(fd uintptr) { sa, err = syscall.Getsockname(int(fd)) }); cerr != nil || err != nil {
		t.Fatal(cerr, err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	relayed := make(chan struct{})
	go func() { relay(ln, sock); close(relayed) }()

	var clients sync.WaitGroup
	for i := range 20 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			msg := bytes.Repeat([]byte("abc"+strconv.Itoa(i)), 50000) // more than a socket buffer
			if _, err := c.Write(msg); err != nil {
				t.Error(err)
				return
			}
			_ = c.(*net.TCPConn).CloseWrite()
			got, err := io.ReadAll(c)
			if err != nil || !bytes.Equal(got, bytes.ToUpper(msg)) {
				t.Errorf("connection %d: %d bytes back (%v), want %d", i, len(got), err, len(msg))
			}
		}()
	}
	clients.Wait()
	_ = ln.Close()
	<-relayed
	_ = ul.Close()
	served.Wait()
}
