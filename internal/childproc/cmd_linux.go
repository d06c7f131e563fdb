package childproc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"massgen/internal/childproc/reexec"
)

// selfExe re-executes the running binary, even when its file was replaced or deleted since.
const selfExe = "/proc/self/exe"

// Bounds of the conversation with the init, variables so that tests can lower them.
var (
	startTimeout = 30 * time.Second // for the init to start the command (slow under -race)
	killBackstop = 3 * time.Second  // after Kill, before the init itself is SIGKILLed
)

// initEnv is the init's own environment. Under the race detector a Go program sleeps a second
// before it exits unless told otherwise; elsewhere the variable is ignored.
var initEnv = []string{"GORACE=atexit_sleep_ms=0"}

type sys struct {
	cmd    *exec.Cmd
	ns     bool
	status *bufio.Reader // the init's reports: "started", then how the command ended
	stR    *os.File

	mu       sync.Mutex
	control  *os.File // write end of the lifeline; nil once closed
	reaped   bool     // set before the init is reaped, so its pid (the group id) is ours until then
	backstop *time.Timer

	awaitOnce sync.Once
	st        Status
	waitOnce  sync.Once
}

// Start starts the init and, through it, the command; it returns once the command runs.
func (c *Cmd) Start() error {
	if c.pathErr != nil {
		return c.pathErr
	}
	if c.cmd != nil {
		return errors.New("childproc: Start called twice")
	}
	if c.Sandbox != nil {
		return c.startSandboxed()
	}
	mode := reexec.ModeTree
	if c.mode == Confined {
		mode = reexec.ModeFallback
		if namespacesWork() {
			mode = reexec.ModeNS
		}
	}
	return c.start(mode, launch{path: c.path, args: c.Args})
}

// launch is what the init starts: the command itself, or bwrap running it.
type launch struct {
	path   string
	args   []string
	pidMax int // the PID namespace's pid_max, when the kernel has one per namespace
}

func (c *Cmd) start(mode string, l launch) error {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("cannot start %s: %w", c.path, err)
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		_, _ = ctlR.Close(), ctlW.Close()
		return fmt.Errorf("cannot start %s: %w", c.path, err)
	}
	var cmd *exec.Cmd
	if c.ctx != nil {
		cmd = exec.CommandContext(c.ctx, selfExe)
		cmd.Cancel = func() error { c.Kill(); return nil }
	} else {
		cmd = exec.Command(selfExe)
	}
	cmd.Args = []string{reexec.InitName}
	cmd.Env = initEnv
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.WaitDelay = c.Dir, c.Stdin, c.Stdout, c.Stderr, c.WaitDelay
	cmd.ExtraFiles = []*os.File{ctlR, stW} // reexec.ControlFD, reexec.StatusFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if mode == reexec.ModeNS {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
		cmd.SysProcAttr.UidMappings, cmd.SysProcAttr.GidMappings, cmd.SysProcAttr.GidMappingsEnableSetgroups = reexec.IDMaps()
	}
	// Set before Start: the context's Cancel may call Kill from exec's goroutine at once.
	c.mu.Lock()
	c.cmd, c.ns, c.control, c.stR, c.status = cmd, mode == reexec.ModeNS, ctlW, stR, bufio.NewReader(stR)
	c.mu.Unlock()
	err = cmd.Start()
	_, _ = ctlR.Close(), stW.Close() // the init holds them now
	if err != nil {
		c.mu.Lock()
		c.reaped, c.control = true, nil // nothing to kill
		c.mu.Unlock()
		_, _ = ctlW.Close(), stR.Close()
		return err
	}

	err = reexec.WriteSetup(ctlW, reexec.Setup{Mode: mode, Path: l.path, Args: l.args, Env: c.Env, Linger: c.Linger,
		UID: os.Getuid(), GID: os.Getgid(), PIDMax: l.pidMax})
	line := ""
	if err == nil {
		line, err = c.report(time.Now().Add(startTimeout))
	}
	if line == "started" {
		return nil
	}
	c.Kill()
	st := c.Wait()
	switch {
	case strings.HasPrefix(line, "error "):
		return errors.New(strings.TrimPrefix(line, "error "))
	case err != nil:
		return fmt.Errorf("cannot start %s: the process supervisor did not answer (%v, %s)", c.path, err, st)
	default:
		return fmt.Errorf("cannot start %s: the process supervisor said %q (%s)", c.path, line, st)
	}
}

// report reads the init's next line, waiting until deadline (zero: for ever).
func (c *Cmd) report(deadline time.Time) (string, error) {
	_ = c.stR.SetReadDeadline(deadline)
	line, err := c.status.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// Pid is the init's process id, which is also the id of the tree's process group.
func (c *Cmd) Pid() int { return c.cmd.Process.Pid }

// Signal sends sig to the tree's process group (whatever left the group is not reached; Kill
// reaches everything).
func (c *Cmd) Signal(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return os.ErrProcessDone
	}
	return syscall.Kill(-c.cmd.Process.Pid, sig)
}

// Kill ends the whole tree at once, whatever its processes did to detach. It does not wait:
// Await or Wait do.
func (c *Cmd) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return
	}
	if c.control != nil {
		_ = c.control.Close() // EOF tells the init to kill everything and exit
		c.control = nil
	}
	if c.ns {
		_ = c.cmd.Process.Kill() // the namespace's init: the kernel kills all of it
		return
	}
	if c.backstop == nil {
		c.backstop = time.AfterFunc(killBackstop, c.forceKill)
	}
}

// forceKill is for an init that did not end after Kill (stopped, or stuck): its group and
// itself are killed; processes outside the group may then escape.
func (c *Cmd) forceKill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		_ = c.cmd.Process.Kill()
	}
}

// Await blocks until the command's main process has ended (and, without Linger, the whole
// tree) and returns how it ended. It does not reap the init: the process group id stays reserved
// until Wait, so signalling the group meanwhile never reaches a stranger.
func (c *Cmd) Await() Status {
	c.awaitOnce.Do(func() {
		line, err := c.report(time.Time{})
		if st, ok := parseStatus(line); err == nil && ok {
			c.st = st
			return
		}
		// The init ended without a word (killed): its own end is all there is to tell.
		c.st = Status{Code: -1, Signal: syscall.SIGKILL}
		if own, ok := waitNoReap(c.cmd.Process.Pid); ok {
			c.st = own
		}
	})
	return c.st
}

// Wait waits for the whole tree to end and for the output copying, releases everything and
// returns how the command's main process ended. It may be called more than once.
func (c *Cmd) Wait() Status {
	st := c.Await()
	c.waitOnce.Do(func() {
		waitNoReap(c.cmd.Process.Pid) // the init's end, which is the tree's
		c.mu.Lock()
		c.reaped = true
		if c.backstop != nil {
			c.backstop.Stop()
		}
		c.mu.Unlock()
		_ = c.cmd.Wait() // the init's own status is not the command's; Await has that
		c.mu.Lock()
		if c.control != nil {
			_ = c.control.Close()
			c.control = nil
		}
		c.mu.Unlock()
		_ = c.stR.Close()
	})
	return st
}

// parseStatus reads the init's last report: "exit N", "signal N" or "signal N core".
func parseStatus(line string) (Status, bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return Status{}, false
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return Status{}, false
	}
	switch f[0] {
	case "exit":
		return Status{Code: n}, true
	case "signal":
		return Status{Code: -1, Signal: syscall.Signal(n), Core: len(f) > 2 && f[2] == "core"}, true
	}
	return Status{}, false
}

// Namespaces: probed once, by starting the probe through a confined init.
var (
	probeOnce  sync.Once
	probeErr   error
	nsDisabled atomic.Bool
)

func namespacesWork() bool {
	if nsDisabled.Load() {
		return false
	}
	probeOnce.Do(func() {
		c := Command(nil, Confined, selfExe)
		c.Args = []string{reexec.ProbeName}
		if err := c.start(reexec.ModeNS, launch{path: c.path, args: c.Args}); err != nil {
			probeErr = err
			return
		}
		if st := c.Wait(); !st.Success() {
			probeErr = fmt.Errorf("the probe ended with %s", st)
		}
	})
	return probeErr == nil
}

// Confinement reports whether Confined children get their namespaces here and, when they do
// not, why and what that means.
func Confinement() (bool, string) {
	if namespacesWork() {
		return true, ""
	}
	why := "disabled"
	if probeErr != nil {
		why = probeErr.Error()
	}
	return false, "user namespaces are unavailable (" + why + "): commands still get only their allowed environment and end with their run, " +
		"but they can see other processes of the same user in /proc"
}

// DisableNamespaces makes Confined children run without namespaces, as where user namespaces
// are unavailable, until restore is called. For tests of that fallback.
func DisableNamespaces() (restore func()) {
	old := nsDisabled.Swap(true)
	return func() { nsDisabled.Store(old) }
}
