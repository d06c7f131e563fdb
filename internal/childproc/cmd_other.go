//go:build !linux

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Without Linux's subreapers and namespaces the command runs directly, in a process group of its
// own where there are process groups: Kill ends the group, which a process that left it escapes.

type sys struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	reaped   bool
	waitOnce sync.Once
	st       Status
}

// Start starts the command.
func (c *Cmd) Start() error {
	if c.pathErr != nil {
		return c.pathErr
	}
	if c.cmd != nil {
		return errors.New("childproc: Start called twice")
	}
	if c.Sandbox != nil {
		return SandboxReady() // never run a sandboxed command without its sandbox
	}
	var cmd *exec.Cmd
	if c.ctx != nil {
		cmd = exec.CommandContext(c.ctx, c.path)
		cmd.Cancel = func() error { c.Kill(); return nil }
	} else {
		cmd = exec.Command(c.path)
	}
	cmd.Args, cmd.Env = c.Args, c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.WaitDelay = c.Dir, c.Stdin, c.Stdout, c.Stderr, c.WaitDelay
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd = cmd
	return nil
}

// Pid is the command's process id, which is also the id of its process group.
func (c *Cmd) Pid() int { return c.cmd.Process.Pid }

// Signal sends sig to the command's process group.
func (c *Cmd) Signal(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return os.ErrProcessDone
	}
	return signalGroup(c.cmd, sig)
}

// Kill kills the command's process group.
func (c *Cmd) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		_ = signalGroup(c.cmd, syscall.Signal(0x9))
		_ = c.cmd.Process.Kill()
	}
}

// Await waits for the command and reaps it: its group id may then be reused.
func (c *Cmd) Await() Status { return c.Wait() }

// Wait waits for the command and the output copying, and returns how it ended.
func (c *Cmd) Wait() Status {
	c.waitOnce.Do(func() {
		_ = c.cmd.Wait()
		c.mu.Lock()
		c.reaped = true
		c.mu.Unlock()
		ps := c.cmd.ProcessState
		c.st = Status{Code: ps.ExitCode()}
		if c.st.Code < 0 {
			c.st = Status{Code: -1, Signal: exitSignal(ps)}
		}
	})
	return c.st
}

// Confinement reports that there are no namespaces here.
func Confinement() (bool, string) {
	return false, "on " + runtime.GOOS + " commands are not isolated from massgen: they run in a process group of their own, " +
		"with only their allowed environment, and a process that leaves the group can outlive its run"
}

// DisableNamespaces does nothing: there are none to disable.
func DisableNamespaces() (restore func()) { return func() {} }
