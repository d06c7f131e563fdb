package command

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"massgen/internal/childproc"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// Background shells are MassGen's start_background_shell and its companions: commands that
// keep running while the agent goes on working (dev servers, watchers, long builds). They obey
// execute_command's rules (the same filter, allow and block lists, work_dir confinement,
// allow-listed environment and childproc.Confined) and run in a process group of their own,
// without stdin and without a timeout. The last lines of stdout and stderr are kept in memory,
// per stream. What the shell started may outlive the shell's own process (childproc's Linger),
// until it is killed; in the srt sandbox the shell then counts as running until all of it has
// ended, and kill_background_shell ends it without a grace period.
//
// Nothing outlives the run: Run.Close (the end of the session, normal or not) stops every
// shell of every agent: SIGTERM to its process group, then, once the group is gone or after
// shellGrace, the whole tree is killed, processes that left the group (setsid, daemons)
// included, and its output readers stop. kill_background_shell does the same to one shell. Until
// then the tree's init is not reaped (see childproc.Cmd.Await), so its process group id stays
// reserved and signalling the group never reaches another process. When massgen dies, even by
// SIGKILL, every tree dies with it.

// Limits, variables so that tests can lower them.
var (
	shellMaxRunning  = 10                     // background shells running at once, per agent
	shellMaxKept     = 50                     // shells listed, running or not; the oldest finished one goes first
	shellBufferLines = 10_000                 // lines kept per stream
	shellBufferBytes = 4 << 20                // bytes kept per stream
	shellLineBytes   = 8 << 10                // longer lines are cut
	shellGrace       = 2 * time.Second        // between SIGTERM and SIGKILL
	shellDrain       = 500 * time.Millisecond // for the last output after the group died
)

// shellDefaultLines is what get_background_shell_output returns without lines.
const shellDefaultLines = 100

// shellTools returns the background shell tools of Tools.
func (a *agent) shellTools(opts Options, filter commandFilter) tool.Set {
	idParam := map[string]any{"shell_id": map[string]any{"type": "string", "description": "The id start_background_shell returned (shell_ and 8 hex digits)."}}
	return tool.Set{
		{
			Spec: tool.Spec("start_background_shell", fmt.Sprintf("Start a shell command (sh -c) in the background in your workspace %s and return its id (shell_ and 8 hex digits) at once, "+
				"without waiting for it: for dev servers, watchers and other long-running commands. It has no timeout and no stdin; it runs until it exits, "+
				"kill_background_shell stops it, or the session ends, which kills it and every process it started. At most %d run at once. "+
				"The last %d lines of its stdout and of its stderr are kept (lines over %d KiB are cut); read them with get_background_shell_output. "+
				"Same rules as execute_command: only the allowed environment variables, no API keys; sudo, su, chmod, chown, dd, rm -rf / and similar commands are refused; writes belong in your workspace.",
				a.ws.Dir(), shellMaxRunning, shellBufferLines, shellLineBytes>>10), map[string]any{
				"command":  map[string]any{"type": "string", "description": "Shell command line, e.g. \"npm run dev\"."},
				"work_dir": map[string]any{"type": "string", "description": "Directory to run in, relative to your workspace (default: the workspace)."},
			}, "command"),
			Run: func(_ context.Context, args string) tool.Result { return a.startShell(args, opts, filter) },
		},
		{
			Spec: tool.Spec("get_background_shell_output", fmt.Sprintf("Return the last lines of a background shell's stdout and of its stderr, separately, and whether it still runs. "+
				"lines defaults to %d; at most the last %d lines of each stream are kept, and each stream's part of the answer is capped at %d KiB (its last bytes are shown).",
				shellDefaultLines, shellBufferLines, opts.OutputLimit>>10), map[string]any{
				"shell_id": idParam["shell_id"],
				"lines":    map[string]any{"type": "integer", "description": fmt.Sprintf("How many of the last lines of each stream to return (default %d).", shellDefaultLines)},
			}, "shell_id"),
			Run: func(_ context.Context, args string) tool.Result { return a.shellOutput(args, opts) },
		},
		{
			Spec: tool.Spec("get_background_shell_status", "Return a background shell's status as JSON: running, exited (with its exit_code, or the signal that ended it) or killed, "+
				"its runtime in seconds, and how many lines it wrote to stdout and stderr.", idParam, "shell_id"),
			Run: func(_ context.Context, args string) tool.Result { return a.shellStatus(args) },
		},
		{
			Spec: tool.Spec("kill_background_shell", fmt.Sprintf("Stop a background shell and every process it started: SIGTERM to its process group, then, once that group has ended or after %s, "+
				"every process it started is killed, even ones that detached (setsid, nohup). "+
				"On a shell that already exited it kills what the shell left running, if anything. Its output stays readable.", shellGrace), idParam, "shell_id"),
			Run: func(_ context.Context, args string) tool.Result { return a.killShell(args) },
		},
		{
			Spec: tool.Spec("list_background_shells", fmt.Sprintf("List your background shells, running and finished, as JSON: id, command, work_dir, status, exit code, runtime. "+
				"At most %d run at once; the %d most recent are listed.", shellMaxRunning, shellMaxKept), map[string]any{}),
			Run: func(_ context.Context, _ string) tool.Result { return a.listShells() },
		},
	}
}

func (a *agent) startShell(args string, opts Options, filter commandFilter) tool.Result {
	var in struct {
		Command string `json:"command"`
		WorkDir string `json:"work_dir"`
	}
	if r, ok := tool.Decode(args, &in, `{"command": "npm run dev"}`); !ok {
		return r
	}
	dir, msg := a.checkCommand(in.Command, in.WorkDir, filter)
	if msg != "" {
		return tool.Errorf(msg)
	}
	s, err := a.shells.start(in.Command, func(cmd *childproc.Cmd) error { return a.prepare(cmd, opts, dir) })
	if err != nil {
		return tool.Errorf(err.Error())
	}
	return jsonResult(struct {
		shellInfo
		Note string `json:"note"`
	}{s.info(), "Read its output with get_background_shell_output; stop it with kill_background_shell."})
}

// lookup finds the shell named in args.
func (a *agent) lookup(args string) (*shell, tool.Result, bool) {
	var in struct {
		ShellID string `json:"shell_id"`
	}
	return a.lookupInto(args, &in, &in.ShellID)
}

func (a *agent) lookupInto(args string, v any, id *string) (*shell, tool.Result, bool) {
	if r, ok := tool.Decode(args, v, `{"shell_id": "shell_1a2b3c4d"}`); !ok {
		return nil, r, false
	}
	if *id == "" {
		return nil, tool.Errorf(`shell_id is missing; send {"shell_id": "shell_1a2b3c4d"} with an id from start_background_shell or list_background_shells`), false
	}
	s := a.shells.get(*id)
	if s == nil {
		return nil, tool.Errorf(fmt.Sprintf("no background shell %s; list_background_shells shows yours", tool.Quote(*id))), false
	}
	return s, tool.Result{}, true
}

func (a *agent) shellOutput(args string, opts Options) tool.Result {
	var in struct {
		ShellID string `json:"shell_id"`
		Lines   *int   `json:"lines"`
	}
	s, r, ok := a.lookupInto(args, &in, &in.ShellID)
	if !ok {
		return r
	}
	n := shellDefaultLines
	if in.Lines != nil {
		if *in.Lines < 1 {
			return tool.Errorf(fmt.Sprintf("lines must be at least 1 (default %d)", shellDefaultLines))
		}
		n = *in.Lines
	}
	var b strings.Builder
	b.WriteString(s.info().summary() + "\n")
	writeStream(&b, "stdout", s.stdout, n, opts.OutputLimit)
	writeStream(&b, "stderr", s.stderr, n, opts.OutputLimit)
	return tool.Result{Content: strings.TrimRight(b.String(), "\n")}
}

func (a *agent) shellStatus(args string) tool.Result {
	s, r, ok := a.lookup(args)
	if !ok {
		return r
	}
	return jsonResult(s.info())
}

func (a *agent) killShell(args string) tool.Result {
	s, r, ok := a.lookup(args)
	if !ok {
		return r
	}
	first, wasRunning := s.stop()
	in := s.info()
	switch {
	case !first:
		return tool.Result{Content: fmt.Sprintf("%s was already stopped: %s.", s.id, in.summary())}
	case wasRunning:
		return tool.Result{Content: fmt.Sprintf("%s and the processes it started are stopped: %s. Its output stays readable with get_background_shell_output.", s.id, in.summary())}
	default:
		return tool.Result{Content: fmt.Sprintf("%s had already ended (%s); the processes it left running, if any, were killed.", s.id, in.summary())}
	}
}

func (a *agent) listShells() tool.Result {
	shells := a.shells.all()
	out := struct {
		Shells     []shellInfo `json:"shells"`
		Running    int         `json:"running"`
		MaxRunning int         `json:"max_running"`
	}{Shells: []shellInfo{}, MaxRunning: shellMaxRunning}
	for _, s := range shells {
		in := s.info()
		if in.Status == "running" {
			out.Running++
		}
		out.Shells = append(out.Shells, in)
	}
	return jsonResult(out)
}

func jsonResult(v any) tool.Result {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return tool.Errorf(err.Error())
	}
	return tool.Result{Content: string(b)}
}

// writeStream writes the last n lines of r, at most limit bytes of them, under a header.
func writeStream(b *strings.Builder, name string, r *lineRing, n, limit int) {
	lines, total := r.tail(n)
	if total == 0 {
		fmt.Fprintf(b, "[%s: no output]\n", name)
		return
	}
	text := strings.Join(lines, "\n")
	shown, cut := len(lines), false
	if len(text) > limit {
		text, cut = text[len(text)-limit:], true
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
		for len(text) > 0 && !utf8.RuneStart(text[0]) {
			text = text[1:]
		}
		shown = strings.Count(text, "\n") + 1
	}
	switch {
	case shown == total:
		fmt.Fprintf(b, "[%s: %s]\n", name, plural(total, "line"))
	default:
		fmt.Fprintf(b, "[%s: last %d of %d lines", name, shown, total)
		if cut {
			fmt.Fprintf(b, ", cut to the last %d bytes", limit)
		} else if n > shown {
			fmt.Fprintf(b, "; older lines are no longer kept")
		}
		b.WriteString("]\n")
	}
	b.WriteString(text)
	b.WriteByte('\n')
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// exitStatus is how a shell's process ended.
type exitStatus struct {
	code   int    // the exit code, or -1 when a signal ended it
	signal string // the signal's name, when one ended it
}

func statusOf(st childproc.Status) exitStatus {
	if st.Code >= 0 {
		return exitStatus{code: st.Code}
	}
	name := st.Signal.String()
	if st.Core {
		name += " (core dumped)"
	}
	return exitStatus{code: -1, signal: name}
}

// shellSet holds an agent's background shells. Run.Close stops them (stopAll).
type shellSet struct {
	mu       sync.Mutex
	closed   bool
	list     []*shell       // in start order
	evicting sync.WaitGroup // shells dropped from list by start, being stopped
}

func (set *shellSet) get(id string) *shell {
	set.mu.Lock()
	defer set.mu.Unlock()
	for _, s := range set.list {
		if s.id == id {
			return s
		}
	}
	return nil
}

func (set *shellSet) all() []*shell {
	set.mu.Lock()
	defer set.mu.Unlock()
	return slices.Clone(set.list)
}

// start runs `sh -c command`, confined, as prepare sets it up.
func (set *shellSet) start(command string, prepare func(*childproc.Cmd) error) (*shell, error) {
	var evicted *shell
	defer func() {
		if evicted != nil {
			evicted.stop()
			set.evicting.Done()
		}
	}()
	set.mu.Lock()
	defer set.mu.Unlock() // before the eviction above
	if set.closed {
		return nil, errors.New("the session has ended: no background shell can start")
	}
	running := 0
	for _, s := range set.list {
		if s.running() {
			running++
		}
	}
	if running >= shellMaxRunning {
		return nil, fmt.Errorf("%d background shells are already running, the most allowed at once; "+
			"stop one with kill_background_shell first (list_background_shells shows them)", running)
	}
	if len(set.list) >= shellMaxKept {
		for i, s := range set.list {
			if !s.running() {
				evicted = s
				set.evicting.Add(1)
				set.list = slices.Delete(set.list, i, i+1)
				break
			}
		}
	}
	id := ""
	for id == "" || slices.ContainsFunc(set.list, func(s *shell) bool { return s.id == id }) {
		var b [4]byte
		_, _ = rand.Read(b[:])
		id = "shell_" + hex.EncodeToString(b[:])
	}
	s, err := startShell(id, command, prepare)
	if err != nil {
		return nil, err
	}
	set.list = append(set.list, s)
	return s, nil
}

// stopAll stops every shell, all at once, and refuses new ones. It returns once their
// processes are gone and their goroutines have ended.
func (set *shellSet) stopAll() {
	set.mu.Lock()
	set.closed = true
	shells := slices.Clone(set.list)
	set.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range shells {
		wg.Go(func() { s.stop() })
	}
	wg.Wait()
	set.evicting.Wait()
}

// shell is one background shell. Its goroutines (wait and two readers) end by themselves
// when the process and everything holding its output pipes have ended, and stop makes sure
// they do.
type shell struct {
	id, command, dir string
	pid              int // of the tree's init: the id of its process group
	cmd              *childproc.Cmd
	started          time.Time
	grace, drain     time.Duration
	stdout, stderr   *lineRing
	outR, errR       *os.File      // read ends of the output pipes
	exited           chan struct{} // closed when the shell's process has exited
	readersLeft      atomic.Int32
	readersDone      chan struct{} // closed when both readers have returned

	mu     sync.Mutex
	ended  time.Time // zero while the process runs
	how    exitStatus
	killed bool // stop began while the process ran

	stopMu  sync.Mutex // serialises stop
	stopped bool
}

func startShell(id, command string, prepare func(*childproc.Cmd) error) (*shell, error) {
	cmd := childproc.Command(nil, childproc.Confined, "sh", "-c", command)
	if err := prepare(cmd); err != nil {
		return nil, err
	}
	cmd.Linger = true
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot start the shell: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_, _ = outR.Close(), outW.Close()
		return nil, fmt.Errorf("cannot start the shell: %w", err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	_, _ = outW.Close(), errW.Close() // the shell holds them now
	if err != nil {
		_, _ = outR.Close(), errR.Close()
		return nil, fmt.Errorf("cannot start the shell: %w", err)
	}
	s := &shell{
		id: id, command: command, dir: cmd.Dir, cmd: cmd, started: time.Now(), pid: cmd.Pid(),
		grace: shellGrace, drain: shellDrain,
		stdout: newLineRing(), stderr: newLineRing(), outR: outR, errR: errR,
		exited: make(chan struct{}), readersDone: make(chan struct{}),
	}
	s.readersLeft.Store(2)
	go s.read(outR, s.stdout)
	go s.read(errR, s.stderr)
	go s.wait()
	return s, nil
}

// wait records the end of the shell's process.
func (s *shell) wait() {
	how := statusOf(s.cmd.Await())
	s.mu.Lock()
	s.ended, s.how = time.Now(), how
	s.mu.Unlock()
	close(s.exited)
}

// read copies f into r until every writer has closed f or stop closes it.
func (s *shell) read(f *os.File, r *lineRing) {
	defer func() {
		if s.readersLeft.Add(-1) == 0 {
			close(s.readersDone)
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		_, _ = r.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

func (s *shell) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended.IsZero()
}

// stop ends the shell and its tree: SIGTERM to its process group, then, once the group is gone
// or after the grace period, the whole tree is killed; it then reaps the tree's init and stops
// the readers, after a short wait for the last output. first is false when the shell was
// already stopped; wasRunning reports whether its process still ran.
func (s *shell) stop() (first, wasRunning bool) {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopped {
		return false, false
	}
	s.mu.Lock()
	wasRunning = s.ended.IsZero()
	s.killed = wasRunning
	s.mu.Unlock()
	_ = s.cmd.Signal(syscall.SIGTERM)
	grace := time.NewTimer(s.grace)
	tick := time.NewTicker(20 * time.Millisecond)
	exited := s.exited
wait:
	for {
		select {
		case <-grace.C:
			break wait
		case <-exited:
			exited = nil
		case <-tick.C:
		}
		if exited == nil && !groupAlive(s.pid, s.pid) {
			break wait
		}
	}
	grace.Stop()
	tick.Stop()
	s.cmd.Kill()
	<-s.exited
	s.cmd.Wait() // the tree is gone when its init has ended
	drain := time.NewTimer(s.drain)
	select {
	case <-s.readersDone:
	case <-drain.C: // a process outside the tree still holds a pipe (non-Linux systems)
	}
	drain.Stop()
	_, _ = s.outR.Close(), s.errR.Close()
	<-s.readersDone
	s.stopped = true
	return true, wasRunning
}

// shellInfo is what status and list report of a shell.
type shellInfo struct {
	ID             string  `json:"shell_id"`
	Command        string  `json:"command"`
	WorkDir        string  `json:"work_dir"`
	PID            int     `json:"pid"`
	Status         string  `json:"status"` // running, exited or killed
	ExitCode       *int    `json:"exit_code,omitempty"`
	Signal         string  `json:"signal,omitempty"`
	RuntimeSeconds float64 `json:"runtime_seconds"`
	StdoutLines    int     `json:"stdout_lines"`
	StderrLines    int     `json:"stderr_lines"`
}

func (s *shell) info() shellInfo {
	in := shellInfo{ID: s.id, Command: provider.Clip(s.command, 200), WorkDir: s.dir, PID: s.pid, Status: "running"}
	s.mu.Lock()
	end, how, killed := s.ended, s.how, s.killed
	s.mu.Unlock()
	if end.IsZero() {
		end = time.Now()
	} else {
		in.Status = "exited"
		if killed {
			in.Status = "killed"
		}
		if how.code >= 0 {
			in.ExitCode = &how.code
		}
		in.Signal = how.signal
	}
	in.RuntimeSeconds = math.Round(end.Sub(s.started).Seconds()*10) / 10
	_, in.StdoutLines = s.stdout.tail(0)
	_, in.StderrLines = s.stderr.tail(0)
	return in
}

// summary is one line about the shell's state.
func (in shellInfo) summary() string {
	var how string
	switch {
	case in.Status == "running":
		return fmt.Sprintf("%s is running (for %.1f s)", in.ID, in.RuntimeSeconds)
	case in.ExitCode != nil:
		how = fmt.Sprintf("exit code %d", *in.ExitCode)
	default:
		how = "signal " + in.Signal
	}
	return fmt.Sprintf("%s %s (%s) after %.1f s", in.ID, in.Status, how, in.RuntimeSeconds)
}
