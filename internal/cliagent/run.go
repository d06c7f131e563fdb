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

// event is what a line of the CLI's output says: a chunk to stream, the session id, or a
// failure of the run.
type event struct {
	chunk   provider.Chunk
	session string
	err     error
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
				if ev.err != nil {
					r.mu.Lock()
					r.failed = ev.err
					r.mu.Unlock()
					continue
				}
				r.send(ev)
			}
		})
		stderrDone.Wait()
	}()
	return r, nil
}

// send hands ev to the Stream reading the run, unless the run was stopped.
func (r *run) send(ev event) {
	select {
	case r.events <- ev:
	case <-r.stopCh:
	}
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
	for range r.events { // the reader ends once the pipe closes
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
