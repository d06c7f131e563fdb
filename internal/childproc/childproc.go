// Package childproc is the one place massgen starts and ends trees of child processes: the
// commands agents run (execute_command, background shells) and MCP stdio servers.
//
// On Linux every child runs under a small init, massgen itself re-executed (see init_linux.go),
// so that nothing the child starts outlives it, whatever it does to detach (setsid, nohup, a
// double fork, cmd &):
//
//   - Confined (agents' commands): the init runs in new user, PID and mount namespaces, with a
//     fresh /proc. The command sees only its own processes; massgen's /proc entries do not exist
//     for it, and the kernel refuses it massgen's environment and memory anyway, since massgen
//     lives in the parent user namespace. When the init exits, the kernel kills every process
//     of the namespace. Its ids map to the caller's own, so file access is unchanged.
//   - Tree (MCP servers, and Confined where user namespaces are unavailable): the init is a
//     child subreaper, so orphans of the tree come back to it instead of escaping to PID 1, and it
//     kills the whole tree before it exits.
//   - Sandboxed (Confined with Cmd.Sandbox): the command runs, under that same init, in a
//     bubblewrap sandbox of its own (see Sandbox): a file system of what it may see, no
//     network, limits, a seccomp filter. Start refuses it where that cannot be had.
//
// In all, the init holds the read end of a pipe whose write end only massgen holds: EOF means
// massgen closed it (Kill) or died, even by SIGKILL, and the init then kills the tree and exits.
// The init exits as soon as the command's main process has, killing what it left running, and
// reports that process's status, not its own.
//
// Elsewhere (macOS and other Unix systems) the command runs directly in a process group of its
// own, which a process that leaves the group escapes; on Windows only the process itself is
// killed. Confinement says which applies.
package childproc

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Mode says how much a child is confined.
type Mode int

const (
	// Tree ends the child's whole process tree with it, with Kill, and when massgen dies. The
	// child keeps massgen's view of the system.
	Tree Mode = iota
	// Confined is Tree, and on Linux with user namespaces also its own user, PID and mount
	// namespaces: the child cannot see or read massgen or any process outside its tree.
	Confined
)

// Status is how a child's main process ended.
type Status struct {
	Code   int            // exit code; -1 when a signal ended it
	Signal syscall.Signal // the signal that ended it, when Code is -1
	Core   bool           // the signal dumped core
}

// Success reports an exit with code 0.
func (s Status) Success() bool { return s.Code == 0 }

// String is "exit status N" or "signal: NAME", like os.ProcessState's.
func (s Status) String() string {
	if s.Code >= 0 {
		return fmt.Sprintf("exit status %d", s.Code)
	}
	out := "signal: " + s.Signal.String()
	if s.Core {
		out += " (core dumped)"
	}
	return out
}

// Cmd is a child process tree being prepared or run. Set the exported fields before Start.
type Cmd struct {
	// Args holds the command line, Args[0] being the name the program sees.
	Args []string
	// Dir is the working directory; "" is massgen's.
	Dir string
	// Env is the child's whole environment (nil: none at all).
	Env []string
	// Stdin, Stdout and Stderr work as in os/exec: an *os.File is passed as it is, anything else
	// is copied by goroutines that Wait ends.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Linger lets the tree outlive the main process: Await returns when the main process ends,
	// and the rest of the tree runs on until it ends by itself, Kill, or massgen's end. Without
	// it, what the main process left running is killed as soon as it ends.
	Linger bool
	// WaitDelay bounds how long Wait waits, after the tree ended or Kill, for the copying
	// goroutines: see exec.Cmd.WaitDelay.
	WaitDelay time.Duration
	// Sandbox, for a Confined child, runs it in a bubblewrap sandbox (see Sandbox); Start
	// fails rather than run it without one. Dir must then exist inside the sandbox.
	Sandbox *Sandbox

	ctx     context.Context
	mode    Mode
	path    string
	pathErr error

	sys // per platform
}

// Command prepares name (looked up in massgen's PATH when it has no slash, as exec.Command does)
// with args, to run in mode. When ctx (may be nil) is done, the tree is killed.
func Command(ctx context.Context, mode Mode, name string, args ...string) *Cmd {
	c := &Cmd{Args: append([]string{name}, args...), ctx: ctx, mode: mode, path: name}
	if lp, err := exec.LookPath(name); err != nil {
		c.pathErr = err
	} else {
		c.path = lp
	}
	return c
}
