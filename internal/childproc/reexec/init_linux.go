package reexec

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"massgen/internal/childproc/procfs"
)

func init() {
	if len(os.Args) == 0 {
		return
	}
	switch os.Args[0] {
	case InitName:
		os.Exit(runInit())
	case ProbeName:
		os.Exit(0)
	case SandboxInitPath:
		// Nothing to flush; and os.Exit would sleep a second under the race detector, whose
		// setting (GORACE) the command's environment does not carry.
		syscall.Exit(runSandboxInit())
	case SandboxExecName:
		os.Exit(runSandboxExec())
	}
}

// forwarded are the signals the init catches. A namespace's init ignores signals it has no
// handler for, and a Tree init must not die of a group-wide SIGTERM before it killed the tree;
// execve gives the command their default handling back.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

// readerCaps are the capabilities a root command loses in the fallback: those that read other
// processes' memory. (EINVAL: a kernel too old to know one.)
var readerCaps = []int{capSysPtrace, capSysRawio, capSysModule, capSysAdmin, capBPF, capPerfmon}

func runInit() int {
	control, status := os.NewFile(ControlFD, "control"), os.NewFile(StatusFD, "status")
	if control == nil || status == nil {
		return 126
	}
	syscall.CloseOnExec(ControlFD) // the command must not hold massgen's pipes
	syscall.CloseOnExec(StatusFD)
	fail := func(msg string, err error) int {
		if err != nil {
			msg += ": " + err.Error()
		}
		_, _ = status.WriteString("error " + msg + "\n")
		return 126
	}
	s, err := readSetup(control)
	if err != nil {
		return fail("the process supervisor could not read its setup", err)
	}
	switch s.Mode {
	case ModeNS:
		// Mounts stay inside the namespace; the fresh /proc shows the namespace's processes only.
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			return fail("cannot make the mounts private", err)
		}
		if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
			return fail("cannot mount /proc", err)
		}
		if s.PIDMax > 0 {
			if err := setPIDMax(s.PIDMax); err != nil {
				return fail("cannot bound the sandbox's processes", err)
			}
		}
	case ModeTree, ModeFallback:
		if err := prctl(prSetChildSubreaper, 1); err != nil {
			return fail("cannot become a child subreaper", err)
		}
	default:
		return fail("unknown mode "+strconv.Quote(s.Mode), nil)
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)

	// The bounding set and Pdeathsig below belong to this thread: keep the goroutine on it.
	runtime.LockOSThread()
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	switch {
	case s.Mode == ModeNS:
		// The command gets a user and mount namespace of its own below the init's. Mounts it
		// inherits are locked there, so that even as root it cannot unmount the fresh /proc,
		// nor mount another (that takes rights in the init's namespace). Others than root get
		// their own ids back (the init is uid 0, to mount /proc), and with them no capability.
		attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		if s.UID == 0 && s.GID == 0 {
			attr.UidMappings, attr.GidMappings, attr.GidMappingsEnableSetgroups = IDMaps()
		} else {
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: s.UID, HostID: 0, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: s.GID, HostID: 0, Size: 1}}
		}
	case s.Mode == ModeFallback && os.Geteuid() == 0:
		// root without namespaces: without these the command cannot read a non-dumpable
		// massgen (see Harden), nor reach its memory through the kernel's (kcore, modules, BPF).
		for _, c := range readerCaps {
			if err := prctl(prCapbsetDrop, uintptr(c)); err != nil && err != syscall.EINVAL {
				return fail("cannot drop capability "+strconv.Itoa(c), err)
			}
		}
	}
	pid, err := syscall.ForkExec(s.Path, s.Args, &syscall.ProcAttr{Env: s.Env, Files: []uintptr{0, 1, 2}, Sys: attr})
	if err != nil {
		return fail("cannot start "+s.Path, err)
	}
	_, _ = status.WriteString("started\n")
	ws, ok := supervise(pid, s.Mode == ModeNS, s.Linger, control, sigs, func(ws syscall.WaitStatus) {
		if ws.Signaled() {
			core := ""
			if ws.CoreDump() {
				core = " core"
			}
			_, _ = status.WriteString("signal " + strconv.Itoa(int(ws.Signal())) + core + "\n")
		} else {
			_, _ = status.WriteString("exit " + strconv.Itoa(ws.ExitStatus()) + "\n")
		}
	})
	switch {
	case !ok:
		_, _ = status.WriteString("error lost track of the command\n")
		return 126
	case ws.Signaled():
		return 128 + int(ws.Signal())
	default:
		return ws.ExitStatus()
	}
}

// readSetup reads a Setup framed by WriteSetup.
func readSetup(r io.Reader) (Setup, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return Setup{}, err
	}
	size := uint32(n[0])<<24 | uint32(n[1])<<16 | uint32(n[2])<<8 | uint32(n[3])
	if size > maxSetup {
		return Setup{}, errors.New("setup of " + strconv.FormatUint(uint64(size), 10) + " bytes")
	}
	blob := make([]byte, size)
	if _, err := io.ReadFull(r, blob); err != nil {
		return Setup{}, err
	}
	return DecodeSetup(blob)
}

// WriteSetup sends s to an init, as readSetup reads it: its size (4 bytes, big-endian), then
// its encoding.
func WriteSetup(w io.Writer, s Setup) error {
	b := s.Encode()
	if len(b) > maxSetup {
		return errors.New("the command's arguments and environment take " + strconv.Itoa(len(b)) + " bytes, more than " + strconv.Itoa(maxSetup))
	}
	n := uint32(len(b))
	_, err := w.Write(append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, b...))
	return err
}

type reapedChild struct {
	pid int
	ws  syscall.WaitStatus
}

// supervise reaps every process that comes back to the init until the command's main process
// pid has ended, tells ended, then makes sure the rest of the tree ends too (with linger, waits
// for it to end by itself), and returns pid's status. EOF on control (massgen closed it or died)
// ends the whole tree at once.
func supervise(pid int, ns, linger bool, control io.Reader, sigs <-chan os.Signal, ended func(syscall.WaitStatus)) (syscall.WaitStatus, bool) {
	reaps := make(chan reapedChild)
	go func() { // ends with the process
		defer close(reaps)
		for {
			var ws syscall.WaitStatus
			p, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return // ECHILD: nothing is left
			}
			reaps <- reapedChild{p, ws}
		}
	}()
	gone := make(chan struct{})
	go func() { // ends with the process
		_, _ = io.Copy(io.Discard, control)
		close(gone)
	}()

	var (
		child     syscall.WaitStatus
		childDone bool
		killing   bool
		tick      <-chan time.Time
	)
	killAll := func() {
		if ns && os.Getpid() == 1 {
			_ = syscall.Kill(-1, syscall.SIGKILL) // every process of the namespace but the init
		} else {
			killDescendants()
		}
	}
	startKilling := func() {
		killing = true
		killAll()
		if !ns {
			tick = time.NewTicker(10 * time.Millisecond).C // orphans keep coming back to the subreaper
		}
	}
	for {
		select {
		case r, ok := <-reaps:
			if !ok {
				return child, childDone
			}
			if r.pid != pid {
				continue
			}
			child, childDone = r.ws, true
			ended(child)
			switch {
			case linger:
			case ns:
				return child, true // the kernel kills what is left when the init exits
			case !killing:
				// Not at once: when nothing is left, reaps closes first, without a scan of /proc.
				killing = true
				tick = time.NewTicker(10 * time.Millisecond).C
			}
		case <-gone:
			gone = nil
			if !killing {
				startKilling()
			}
		case sig := <-sigs:
			forward(pid, sig, childDone)
		case <-tick:
			killAll()
		}
	}
}

// forward passes a signal sent to the init alone on to the command. Signals sent to the whole
// process group reach the command directly, so it is not sent twice.
func forward(pid int, sig os.Signal, done bool) {
	if done {
		return
	}
	if pg, err := syscall.Getpgid(pid); err == nil && pg == syscall.Getpgrp() {
		return
	}
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(pid, s)
	}
}

// killDescendants SIGKILLs every process below the init. It walks the tree through
// /proc/PID/task/TID/children, which lists only the tree's processes; where the kernel has no
// such files it scans all of /proc. A process forked meanwhile is found on the next round: its
// parent dies and it comes back to the init.
func killDescendants() {
	self := os.Getpid()
	if !procfs.HasChildren() {
		killDescendantsScan(self)
		return
	}
	stack := procfs.Children(self)
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		_ = syscall.Kill(p, syscall.SIGSTOP) // no more forks while its children are listed
		stack = append(stack, procfs.Children(p)...)
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// killDescendantsScan is killDescendants from a scan of all of /proc.
func killDescendantsScan(self int) {
	procs, err := procfs.Processes()
	if err != nil {
		return
	}
	children := map[int][]int{}
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p.PID)
	}
	stack := children[self]
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		_ = syscall.Kill(p, syscall.SIGKILL)
		stack = append(stack, children[p]...)
	}
}

// IDMaps map the caller's ids into the new user namespace. root is mapped whole, identically,
// so that its access to other users' files is unchanged; anyone else can map only their own ids,
// which become 0 there so that the init may mount /proc (the command gets them back, see
// runInit).
func IDMaps() (uids, gids []syscall.SysProcIDMap, setgroups bool) {
	if os.Getuid() == 0 && os.Getgid() == 0 {
		all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		return all, all, true
	}
	return []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		[]syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}, false
}

// setPIDMax bounds the init's PID namespace, and every namespace below it, to n pids. massgen
// asks for it only for an init in a new user namespace, on a kernel whose pid_max is per
// namespace.
func setPIDMax(n int) error {
	return os.WriteFile(PIDMaxSysctl, []byte(strconv.Itoa(n)), 0)
}
