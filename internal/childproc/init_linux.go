package childproc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"massgen/internal/childproc/procfs"
)

// The init is massgen re-executed with argv[0] initName (the "reexec" pattern): detected here,
// in a package init function, it works in the massgen binary and in test binaries alike, before
// anything else of the program runs. Its file descriptors controlFD and statusFD are pipes to
// massgen: it reads its setup from the first, then waits for EOF there (massgen gone, or Kill);
// it writes "started" and, at the end, the command's status to the second.
const (
	initName  = "massgen-childproc-init"
	probeName = "massgen-childproc-probe"
	controlFD = 3
	statusFD  = 4
	maxSetup  = 64 << 20
)

func init() {
	if len(os.Args) == 0 {
		return
	}
	switch os.Args[0] {
	case initName:
		os.Exit(runInit())
	case probeName:
		os.Exit(0)
	case sandboxInitPath:
		// Nothing to flush; and os.Exit would sleep a second under the race detector, whose
		// setting (GORACE) the command's environment does not carry.
		syscall.Exit(runSandboxInit())
	case sandboxExecName:
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
var readerCaps = []int{unix.CAP_SYS_PTRACE, unix.CAP_SYS_RAWIO, unix.CAP_SYS_MODULE, unix.CAP_SYS_ADMIN, unix.CAP_BPF, unix.CAP_PERFMON}

func runInit() int {
	control, status := os.NewFile(controlFD, "control"), os.NewFile(statusFD, "status")
	if control == nil || status == nil {
		return 126
	}
	syscall.CloseOnExec(controlFD) // the command must not hold massgen's pipes
	syscall.CloseOnExec(statusFD)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(status, "error "+format+"\n", a...)
		return 126
	}
	var s setup
	if err := readSetup(control, &s); err != nil {
		return fail("the process supervisor could not read its setup: %v", err)
	}
	switch s.Mode {
	case modeNS:
		// Mounts stay inside the namespace; the fresh /proc shows the namespace's processes only.
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			return fail("cannot make the mounts private: %v", err)
		}
		if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
			return fail("cannot mount /proc: %v", err)
		}
		if s.PIDMax > 0 {
			if err := setPIDMax(s.PIDMax); err != nil {
				return fail("%v", err)
			}
		}
	case modeTree, modeFallback:
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fail("cannot become a child subreaper: %v", err)
		}
	default:
		return fail("unknown mode %q", s.Mode)
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)

	// The bounding set and Pdeathsig below belong to this thread: keep the goroutine on it.
	runtime.LockOSThread()
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	switch {
	case s.Mode == modeNS:
		// The command gets a user and mount namespace of its own below the init's. Mounts it
		// inherits are locked there, so that even as root it cannot unmount the fresh /proc,
		// nor mount another (that takes rights in the init's namespace). Others than root get
		// their own ids back (the init is uid 0, to mount /proc), and with them no capability.
		attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		if s.UID == 0 && s.GID == 0 {
			attr.UidMappings, attr.GidMappings, attr.GidMappingsEnableSetgroups = idMaps()
		} else {
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: s.UID, HostID: 0, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: s.GID, HostID: 0, Size: 1}}
		}
	case s.Mode == modeFallback && os.Geteuid() == 0:
		// root without namespaces: without these the command cannot read a non-dumpable
		// massgen (see Harden), nor reach its memory through the kernel's (kcore, modules, BPF).
		for _, c := range readerCaps {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != syscall.EINVAL {
				return fail("cannot drop capability %d: %v", c, err)
			}
		}
	}
	pid, err := syscall.ForkExec(s.Path, s.Args, &syscall.ProcAttr{Env: s.Env, Files: []uintptr{0, 1, 2}, Sys: attr})
	if err != nil {
		return fail("cannot start %s: %v", s.Path, err)
	}
	fmt.Fprintln(status, "started")
	ws, ok := supervise(pid, s.Mode == modeNS, s.Linger, control, sigs, func(ws syscall.WaitStatus) {
		if ws.Signaled() {
			core := ""
			if ws.CoreDump() {
				core = " core"
			}
			fmt.Fprintf(status, "signal %d%s\n", ws.Signal(), core)
		} else {
			fmt.Fprintf(status, "exit %d\n", ws.ExitStatus())
		}
	})
	switch {
	case !ok:
		fmt.Fprintln(status, "error lost track of the command")
		return 126
	case ws.Signaled():
		return 128 + int(ws.Signal())
	default:
		return ws.ExitStatus()
	}
}

func readSetup(r io.Reader, s *setup) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxSetup {
		return fmt.Errorf("setup of %d bytes", size)
	}
	blob := make([]byte, size)
	if _, err := io.ReadFull(r, blob); err != nil {
		return err
	}
	return json.Unmarshal(blob, s)
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
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(self) + "/children"); err != nil {
		killDescendantsScan(self)
		return
	}
	stack := childrenOf(self)
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		_ = syscall.Kill(p, syscall.SIGSTOP) // no more forks while its children are listed
		stack = append(stack, childrenOf(p)...)
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// childrenOf lists the children of every thread of pid.
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
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
