package cliagent

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	"massgen/internal/childproc"
	"massgen/internal/provider"
)

// Output bounds: one line of the CLI's JSON stream (a tool result, a whole answer), and the
// stderr kept for error messages.
const (
	maxLine      = 16 << 20
	maxStderr    = 4 << 10
	stderrLines  = 20
	maxBadLines  = 5
	eventsBuffer = 64
)

// event is what a line of the CLI's output says: a chunk to stream, the session id, a
// failure of the run, or what the run has used so far.
type event struct {
	chunk   provider.Chunk
	session string
	err     error
	// streamed is the usage of the run's model calls so far, as the CLI's stream tells it
	// message by message (Claude Code); the run's total, when it comes, replaces it.
	streamed *provider.Usage
}

// run is one CLI process: its output parsed into events until it ends.
type run struct {
	cmd    *childproc.Cmd
	events chan event // closed once stdout has ended
	stopCh chan struct{}
	once   sync.Once

	mu      sync.Mutex
	tail    *childproc.Tail // last stderr lines
	failed  error           // the CLI's own account of a failed run (an error event)
	status  *childproc.Status
	stopped bool
	// seen is the usage the stream told of that no total covers yet, and lost the totals
	// nobody read because the run was stopped: what a stopped run is known to have used.
	seen, lost provider.Usage
}

// start launches the CLI for one run in the agent's workspace.
func (a *Agent) start(req provider.Request, prompt, resume string) (*run, error) {
	inv, err := a.fl.invocation(a, req, prompt, resume)
	if err != nil {
		return nil, err
	}
	bin := a.o.Binary
	if bin == "" {
		bin = a.fl.binary
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, &fatalError{fmt.Sprintf("the %s CLI %q was not found: install it with `npm install -g %s` (version %s or later)",
			a.o.Type, bin, a.fl.npm, a.fl.minVersion)}
	}
	if err := checkVersion(path, a.fl, inv.env); err != nil {
		return nil, err
	}
	mode := childproc.Tree
	if a.sandbox != nil {
		mode = childproc.Confined
	}
	cmd := childproc.Command(nil, mode, bin, inv.args...)
	cmd.Dir = a.ws.Dir
	cmd.Env = inv.env
	if err := a.sandboxed(cmd, bin); err != nil {
		return nil, err
	}
	pp, err := cmd.StartPiped(false)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	outR, errR := pp.Stdout, pp.Stderr
	r := &run{cmd: cmd, events: make(chan event, eventsBuffer), stopCh: make(chan struct{}), tail: childproc.NewTail(stderrLines)}
	if inv.session != "" {
		r.events <- event{session: inv.session} // the buffer is empty: this cannot block
	}
	var stderrDone sync.WaitGroup
	stderrDone.Add(1)
	go func() {
		defer stderrDone.Done()
		defer errR.Close()
		childproc.ReadLines(errR, maxStderr, r.tail.Add)
	}()
	p := a.fl.newParser(a)
	go func() {
		defer close(r.events)
		defer outR.Close()
		bad := 0
		childproc.ReadLines(outR, maxLine, func(line string) {
			if strings.TrimSpace(line) == "" {
				return
			}
			evs, perr := p.parse([]byte(line))
			if perr != nil {
				// A line that is not the CLI's JSON (a warning printed to stdout) is skipped;
				// a stream of them is a protocol break.
				if bad++; bad > maxBadLines {
					r.send(event{err: fmt.Errorf("the %s CLI's output is not its JSON stream: %q", a.o.Type, provider.Clip(line, 200))})
				}
				return
			}
			for _, ev := range evs {
				if r.note(ev) {
					continue
				}
				r.send(ev)
			}
		})
		stderrDone.Wait()
	}()
	return r, nil
}

// note keeps what ev says about the run itself (a failure, the usage so far) and reports
// whether that is all it says.
func (r *run) note(ev event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case ev.err != nil:
		r.failed = ev.err
		return true
	case ev.streamed != nil:
		r.seen = *ev.streamed
		return true
	}
	if _, ok := ev.chunk.(provider.UsageChunk); ok {
		r.seen = provider.Usage{} // the run's total covers what its stream told
	}
	return false
}

// send hands ev to the Stream reading the run, unless the run was stopped.
func (r *run) send(ev event) {
	select {
	case r.events <- ev:
	case <-r.stopCh:
		r.drop(ev)
	}
}

// drop keeps the usage of an event nobody will read.
func (r *run) drop(ev event) {
	if uc, ok := ev.chunk.(provider.UsageChunk); ok {
		r.mu.Lock()
		r.lost = r.lost.Add(uc.Usage)
		r.mu.Unlock()
	}
}

// unreported is what the run is known to have used beyond the usage its reader passed on:
// its stream's per-message usage and totals that arrived as it was stopped. Meaningful once
// the run was stopped.
func (r *run) unreported() provider.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen.Add(r.lost)
}

// stderrTail is the CLI's last stderr lines, for error messages.
func (r *run) stderrTail() string { return provider.Clip(r.tail.String(), maxStderr) }

// stop kills the process tree and waits for it. Idempotent.
func (r *run) stop() {
	r.once.Do(func() {
		r.mu.Lock()
		r.stopped = true
		r.mu.Unlock()
		close(r.stopCh)
		r.cmd.Kill()
	})
	r.wait()
	for ev := range r.events { // the reader ends once the pipe closes
		r.drop(ev)
	}
}

// wait waits for the process tree to end.
func (r *run) wait() childproc.Status {
	st := r.cmd.Wait()
	return st
}

// outcome is the error of a run that ended with st, nil for a clean one.
func (r *run) outcome(st childproc.Status) error {
	r.mu.Lock()
	failed := r.failed
	r.mu.Unlock()
	tail := r.stderrTail()
	switch {
	case failed != nil && tail != "":
		return fmt.Errorf("%w (%s; stderr: %s)", failed, st, tail)
	case failed != nil:
		return fmt.Errorf("%w (%s)", failed, st)
	case !st.Success() && tail != "":
		return fmt.Errorf("the CLI failed: %s; stderr: %s", st, tail)
	case !st.Success():
		return fmt.Errorf("the CLI failed: %s, without a word on stderr", st)
	}
	return nil
}

var errNoResult = errors.New("the CLI ended without a result")
