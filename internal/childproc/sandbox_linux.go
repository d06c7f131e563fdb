package childproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"massgen/internal/childproc/reexec"
)

// A sandboxed command runs as: massgen's init (Confined's namespaces) -> bwrap -> massgen's
// sandbox init (PID 1 of the sandbox) -> massgen's exec stage, which sets the limits and the
// seccomp filter and execs the command (see package reexec). massgen's binary is shown
// read-only inside at reexec.SandboxInitPath for the last two; it holds no secret.
const (
	maxBwrapArgs     = 1 << 20          // bytes of bwrap's command line
	reservedPIDs     = 300              // Linux's RESERVED_PIDS: lower pids are not reused
	pidMaxSlack      = 16               // the init, bwrap and the sandbox init
	sandboxProbeWait = 30 * time.Second // bwrap's start, slow under -race
)

var sandboxProbe struct {
	once     sync.Once
	err      error
	pidLimit bool // the PID namespace's pid_max binds the sandbox
}

// SandboxReady reports why a Sandbox cannot run here, or nil. It checks once, by starting a
// sandbox: user namespaces, bwrap, an architecture the seccomp filter knows.
func SandboxReady() error {
	sandboxProbe.once.Do(func() { sandboxProbe.err = probeSandbox() })
	return sandboxProbe.err
}

// SandboxNote says what of a Sandbox does not hold here, or "" when everything does.
func SandboxNote() string {
	if SandboxReady() != nil || sandboxProbe.pidLimit || os.Getuid() != 0 {
		return ""
	}
	return "the sandbox's process limit does not hold: massgen runs as root, whom Linux exempts from RLIMIT_NPROC, " +
		"and this kernel is older than 6.14, the first to bound processes per PID namespace; a fork bomb runs until the command's timeout"
}

// SandboxMissing reports what a Sandbox lacks here at all, without starting one: Linux
// (ErrNotLinux) and bubblewrap (ErrNoBubblewrap). nil does not promise that one starts;
// SandboxReady tells.
func SandboxMissing() error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return ErrNoBubblewrap
	}
	return nil
}

func probeSandbox() error {
	if ok, why := Confinement(); !ok {
		return errors.New(strings.Replace(why, ": commands still", "; without them", 1))
	}
	if err := reexec.SeccompArch(); err != nil {
		return err
	}
	if err := SandboxMissing(); err != nil {
		return err
	}
	var errOut bytes.Buffer
	c := Command(nil, Confined, reexec.SandboxInitPath)
	c.Args = []string{reexec.ProbeName} // massgen's binary, inside, exits at once
	c.Stderr, c.WaitDelay, c.Dir = &errOut, time.Second, "/"
	c.Sandbox = &Sandbox{Base: []Mount{{Kind: ReadOnly, Src: "/", Dst: "/"}}}
	err := c.startInSandbox(reexec.SandboxInitPath, c.Args)
	var st Status
	if err == nil {
		done := make(chan Status, 1)
		go func() { done <- c.Wait() }() // ends with the probe, which Kill ends
		select {
		case st = <-done:
		case <-time.After(sandboxProbeWait):
			c.Kill()
			st = <-done
			err = fmt.Errorf("it did not start within %s", sandboxProbeWait)
		}
	}
	if err == nil && !st.Success() {
		err = fmt.Errorf("%s", st)
	}
	if err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, clipLine(msg))
		}
		return fmt.Errorf("bubblewrap cannot set up a sandbox here (%w)", err)
	}
	sandboxProbe.pidLimit = pidMaxFor(DefaultLimits) > 0 // the init fails the sandbox when it cannot set it
	return nil
}

func clipLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// startSandboxed starts c's command in c.Sandbox, never without it.
func (c *Cmd) startSandboxed() error {
	if c.mode != Confined {
		return errors.New("childproc: a sandboxed command must be Confined")
	}
	if err := SandboxReady(); err != nil {
		return fmt.Errorf("cannot start the sandbox: %w", err)
	}
	return c.startInSandbox(c.path, c.Args)
}

func (c *Cmd) startInSandbox(target string, args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot start the sandbox: massgen's own program: %w", err)
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("cannot start the sandbox: %w", err)
	}
	argv, err := c.Sandbox.bwrapArgs(exe, target, args, c.Dir, c.Linger)
	if err != nil {
		return fmt.Errorf("cannot start the sandbox: %w", err)
	}
	return c.start(reexec.ModeNS, launch{path: bwrap, args: argv, pidMax: pidMaxFor(c.Sandbox.Limits.withDefaults())})
}

// bwrapArgs is bwrap's command line for target (argv args) in the sandbox, run in dir.
func (sb *Sandbox) bwrapArgs(exe, target string, args []string, dir string, linger bool) ([]string, error) {
	lim := sb.Limits.withDefaults()
	if dir == "" {
		dir = "/"
	}
	a := []string{"bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--cap-drop", "ALL", "--as-pid-1"}
	if sb.Network {
		a = append(a, "--share-net")
	}
	// Folders shown empty, made read-only once everything below them is mounted. A later
	// mount at or above one covers it; remounting that path would make the later one
	// read-only instead.
	var hidden []string
	cover := func(dst string) {
		hidden = slices.DeleteFunc(hidden, func(d string) bool { return dst == "/" || d == dst || strings.HasPrefix(d, dst+"/") })
	}
	add := func(m Mount) error {
		if err := checkMountPath(m.Dst); err != nil {
			return err
		}
		cover(m.Dst)
		switch m.Kind {
		case ReadOnly, Writable, Symlink:
			if m.Kind != Symlink {
				if err := checkMountPath(m.Src); err != nil {
					return err
				}
			}
			flag := map[MountKind]string{ReadOnly: "--ro-bind", Writable: "--bind", Symlink: "--symlink"}[m.Kind]
			a = append(a, flag, m.Src, m.Dst)
		case Hidden:
			info, err := os.Lstat(m.Dst)
			switch {
			case err != nil || info.Mode()&os.ModeSymlink != 0:
			case info.IsDir():
				a = append(a, "--tmpfs", m.Dst)
				hidden = append(hidden, m.Dst)
			default:
				a = append(a, "--ro-bind", "/dev/null", m.Dst) // nodev there: opening it fails
			}
		case Scratch:
			a = append(a, "--tmpfs", m.Dst)
		default:
			return fmt.Errorf("unknown mount kind %d for %s", m.Kind, m.Dst)
		}
		return nil
	}
	for _, m := range sb.Base {
		if err := add(m); err != nil {
			return nil, err
		}
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--size", strconv.FormatInt(lim.TmpSize, 10), "--tmpfs", "/tmp", "--tmpfs", "/run")
	for _, d := range []string{"/proc", "/dev", "/tmp", "/run"} {
		cover(d)
	}
	for _, m := range sb.Mounts {
		if err := add(m); err != nil {
			return nil, err
		}
	}
	a = append(a, "--ro-bind", exe, reexec.SandboxInitPath)
	if sb.Proxy != "" {
		if err := checkMountPath(sb.Proxy); err != nil {
			return nil, err
		}
		a = append(a, "--ro-bind", sb.Proxy, reexec.SandboxProxyPath)
	}
	if sb.Tools != "" {
		if err := checkMountPath(sb.Tools); err != nil {
			return nil, err
		}
		a = append(a, "--ro-bind", sb.Tools, reexec.SandboxToolsPath)
	}
	for _, d := range hidden {
		a = append(a, "--remount-ro", d)
	}
	a = append(a, "--remount-ro", "/", "--chdir", dir)
	spec := reexec.SandboxSpec{Path: target, Linger: linger, Proxy: sb.Proxy != "", Tools: sb.Tools != "",
		NProc: uint64(lim.Processes), FSize: uint64(lim.FileSize), CPU: uint64(lim.CPU / time.Second), AS: uint64(lim.AddressSpace)}
	a = append(append(a, "--", reexec.SandboxInitPath, spec.Encode()), args...)
	size := 0
	for _, s := range a {
		size += len(s) + 1
	}
	if size > maxBwrapArgs {
		return nil, fmt.Errorf("the sandbox needs %d mounts, more than bwrap's command line holds", len(sb.Base)+len(sb.Mounts))
	}
	return a, nil
}

func checkMountPath(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("sandbox path %q must be absolute and clean", p)
	}
	return nil
}

// pidMaxFor is the pid_max that bounds a sandbox to lim.Processes, or 0 where pid_max is not
// per PID namespace. Before Linux 6.14 it is one value for the whole machine, which root in a
// user namespace could still write: it must never be written there.
func pidMaxFor(lim Limits) int {
	if !kernelAtLeast(6, 14) {
		return 0
	}
	return lim.Processes + reservedPIDs + pidMaxSlack
}

func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err1 := strconv.Atoi(parts[0])
	mnr, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return maj > major || maj == major && mnr >= minor
}
