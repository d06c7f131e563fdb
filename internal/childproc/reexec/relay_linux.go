package reexec

import (
	"io"
	"os"
	"syscall"
)

// The sandbox init's relay, on raw sockets rather than package net, whose import would make
// every stage wait for net's initialisation and that of everything sorted before it. The
// sockets are non-blocking and wrapped in *os.File, which waits on them in the runtime's
// poller as net would: a command that opens many connections costs the init goroutines, not
// threads.

// listenLoopback listens on 127.0.0.1:port of the sandbox's network namespace.
func listenLoopback(port int) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setsockopt", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("listen", err)
	}
	return os.NewFile(uintptr(fd), "listener"), nil
}

// relay passes every connection to ln on to the host's unix socket at path (the proxy, or the
// tool socket), until ln fails.
func relay(ln *os.File, path string) {
	rc, err := ln.SyscallConn()
	if err != nil {
		return
	}
	for {
		var nfd int
		var aerr error
		err := rc.Read(func(fd uintptr) bool {
			nfd, _, aerr = syscall.Accept4(int(fd), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
			return aerr != syscall.EAGAIN
		})
		switch {
		case err != nil:
			return
		case aerr == syscall.EINTR || aerr == syscall.ECONNABORTED:
			continue
		case aerr != nil:
			return
		}
		go pass(os.NewFile(uintptr(nfd), "client"), path) // ends when either side closes
	}
}

// pass copies both ways between c and a new connection to the unix socket at path, passing
// on each side's end of writing, and closes both once both ways are done.
func pass(c *os.File, path string) {
	defer c.Close()
	u, err := dialUnix(path)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() { // ends when c ends its writing, or fails
		_, _ = io.Copy(u, c)
		closeWrite(u)
		close(done)
	}()
	_, _ = io.Copy(c, u)
	closeWrite(c)
	<-done
}

// dialUnix connects to the unix socket at path. The connect blocks (a unix socket connects at
// once unless the listener's queue is full); the connection then waits in the poller.
func dialUnix(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
	if err == nil {
		err = syscall.SetNonblock(fd, true)
	}
	if err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// closeWrite tells the peer of f that nothing more comes (shutdown(SHUT_WR)).
func closeWrite(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_WR) })
	}
}
