package childproc

import (
	"errors"
	"time"

	"massgen/internal/childproc/reexec"
)

// Sandbox confines a Confined child further, on Linux with bubblewrap (bwrap): the file
// system it sees is exactly Base and Mounts, with a /proc of its own PID namespace, a minimal
// /dev, and empty /tmp and /run; it has no network but a loopback of its own unless Network is
// set; it runs in its own user, PID, IPC and UTS namespaces, in a session of its own (so it
// has no terminal to inject input into), without capabilities, unable to create further user
// namespaces, under Limits; and a seccomp filter refuses it new unix sockets (through which a
// host service such as a container daemon or the session bus would run commands for it
// outside the sandbox) and io_uring (which would bypass that filter).
//
// The sandbox runs inside Confined's namespaces, under its init, so Confined's guarantees
// hold unchanged: when the command's main process ends (or times out, or massgen dies), every
// process it started ends, however it detached.
//
// With Cmd.Linger, the sandbox (and so Await) ends once everything in it has, with the main
// process's status; without, as soon as the main process has. A signal to the tree's process
// group (Cmd.Signal) ends the sandbox at once: its processes run in a session of their own.
//
// Start never runs a command with a Sandbox unsandboxed: without bwrap, without user
// namespaces or on an unsupported architecture it fails with the reason (SandboxReady).
type Sandbox struct {
	// Base is the system, applied first: typically ReadOnly binds of / or of /usr, /etc and
	// the like, and Hidden entries for what must not show through them (home directories).
	Base []Mount
	// Mounts are applied next, on top of the fresh /proc, /dev, /tmp and /run, in order: a
	// later entry covers what an earlier one shows at or below its Dst.
	Mounts []Mount
	// Network shares the host's network. Without it the sandbox has only a loopback interface
	// of its own: nothing outside, not even the host's loopback, is reachable.
	Network bool
	// Proxy, when set, is the path of a unix socket on the host where an HTTP proxy listens.
	// Inside, it is offered at ProxyAddr (TCP), the only way out of a sandbox without Network.
	Proxy string
	// Tools, when set, is the path of a unix socket on the host where massgen serves the
	// agent's tools to its code (code-based tools). Inside, it is offered at ToolsAddr (TCP).
	Tools string
	// Limits bound each of the command's processes; the zero value of a field means its
	// default (DefaultLimits).
	Limits Limits
}

// ProxyAddr is where a Sandbox's Proxy is reachable inside it.
const ProxyAddr = reexec.ProxyAddr

// ToolsAddr is where a Sandbox's Tools socket is reachable inside it.
const ToolsAddr = reexec.ToolsAddr

// Limits are resource limits for the processes of a sandbox.
type Limits struct {
	// Processes bounds the processes (and threads) that run at once: RLIMIT_NPROC, which
	// Linux does not enforce for root, and, where the kernel has one per PID namespace
	// (Linux 6.14 and later), the sandbox's pid_max, which binds root too.
	Processes int
	// FileSize is the largest file a process may write (RLIMIT_FSIZE), in bytes.
	FileSize int64
	// CPU is the processor time one process may use (RLIMIT_CPU); it then gets SIGXCPU.
	CPU time.Duration
	// AddressSpace is the virtual memory one process may map (RLIMIT_AS), in bytes.
	AddressSpace int64
	// TmpSize bounds the size of the sandbox's /tmp, which lives in memory, in bytes.
	TmpSize int64
}

// DefaultLimits leave room for builds, test suites and dev servers while keeping a runaway
// command (a fork bomb, a file or allocation that never stops growing) from taking the machine.
var DefaultLimits = Limits{
	Processes:    1024,
	FileSize:     4 << 30,
	CPU:          2 * time.Hour,
	AddressSpace: 16 << 30,
	TmpSize:      1 << 30,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Processes <= 0 {
		l.Processes = d.Processes
	}
	if l.FileSize <= 0 {
		l.FileSize = d.FileSize
	}
	if l.CPU <= 0 {
		l.CPU = d.CPU
	}
	if l.AddressSpace <= 0 {
		l.AddressSpace = d.AddressSpace
	}
	if l.TmpSize <= 0 {
		l.TmpSize = d.TmpSize
	}
	return l
}

// MountKind is what a Mount shows at its Dst.
type MountKind int

const (
	// ReadOnly shows the host's Src, read-only, at Dst.
	ReadOnly MountKind = iota
	// Writable shows the host's Src, writable, at Dst.
	Writable
	// Hidden covers Dst: a folder shows empty and read-only (folders mounted below it later
	// still show), a file cannot be opened. A Dst that does not exist, or is a symbolic
	// link, is left as it is.
	Hidden
	// Scratch shows an empty writable folder at Dst that vanishes with the sandbox (a home
	// directory for tools that need one).
	Scratch
	// Symlink makes Dst a symbolic link to Src (a system's /bin -> usr/bin).
	Symlink
)

// Mount is one entry of a sandbox's file system. Paths are absolute and clean; Src is unused
// by Hidden and Scratch.
type Mount struct {
	Kind     MountKind
	Src, Dst string
}

// What SandboxMissing finds lacking.
var (
	ErrNotLinux     = errors.New("the sandbox is built on bubblewrap, which runs on Linux only")
	ErrNoBubblewrap = errors.New("bubblewrap (bwrap) is not installed: install it (Debian, Ubuntu: apt-get install bubblewrap; " +
		"Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)")
)
