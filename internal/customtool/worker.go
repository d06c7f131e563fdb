package customtool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"massgen/internal/tool"
)

// worker is one tool process, started when needed: at Start to describe its tools, and again
// for the next call whenever one crashed, hung or broke the protocol. One request runs at a
// time.
type worker struct {
	label string // names the process in messages
	argv  []string
	dir   string
	env   []string
	// marked: the process marks the end of each request on stderr (the Python worker does).
	marked bool

	mu     sync.Mutex // held for a whole request
	pmu    sync.Mutex // guards p and closed, so that close never waits for a request
	p      *proc
	closed bool
	nextID int64

	omu sync.Mutex
	out tool.OutputFunc // the running call's, for stderr lines; nil between calls
}

// failure is a request that did not get the tool's answer: the process could not start,
// ended, timed out or broke the protocol. The process is gone; the next request starts another.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

// reply is one line the process sends: progress output of the running call, or its answer.
type reply struct {
	ID     *int64          `json:"id"`
	OK     *bool           `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
	Output *string         `json:"output"`
}

// request sends req (the id is added) and waits up to timeout for the answer. It returns the
// result, or toolErr when the tool answered with an error, or a *failure.
func (w *worker) request(ctx context.Context, timeout time.Duration, req map[string]any, out tool.OutputFunc) (result json.RawMessage, toolErr string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.proc()
	if err != nil {
		return nil, "", err
	}
	w.setOutput(out)
	defer w.setOutput(nil)
	w.nextID++
	id := w.nextID
	req["id"] = id
	data, err := json.Marshal(req)
	if err != nil {
		return nil, "", fmt.Errorf("the arguments cannot be sent: %w", err)
	}
	deadline := time.Now().Add(timeout)
	if err := p.write(append(data, '\n'), deadline); err != nil {
		return nil, "", w.fail(p, fmt.Sprintf("%s could not be sent the request: %v; %s", w.label, err, p.ended()))
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return nil, "", w.fail(p, fmt.Sprintf("%s stopped answering: %s", w.label, p.ended()))
			}
			if l.tooLong {
				return nil, "", w.fail(p, fmt.Sprintf("%s sent a reply longer than %d MiB", w.label, maxLine>>20))
			}
			var r reply
			trimmed := bytes.TrimSpace(l.data)
			if len(trimmed) == 0 {
				continue
			}
			if json.Unmarshal(trimmed, &r) != nil {
				// Not the protocol: something the program printed. Kept for error messages.
				p.tail.Add("stdout: " + clip(string(trimmed), maxStderrLine))
				continue
			}
			switch {
			case r.ID == nil && r.OK != nil && !*r.OK:
				return nil, "", w.fail(p, fmt.Sprintf("%s could not read the request: %s", w.label, r.Error))
			case r.ID == nil || *r.ID != id:
				continue // an answer to an earlier request, or not one at all
			case r.Output != nil:
				if out != nil {
					out(*r.Output)
				}
				continue
			case r.OK == nil:
				return nil, "", w.fail(p, fmt.Sprintf("%s answered without \"ok\"", w.label))
			}
			if w.marked {
				p.awaitEnd(id, 500*time.Millisecond)
			}
			if !*r.OK {
				if r.Error == "" {
					r.Error = "the tool failed without saying why"
				}
				return nil, r.Error, nil
			}
			return r.Result, "", nil
		case <-timer.C:
			return nil, "", w.fail(p, fmt.Sprintf("timed out after %s; its process was stopped and starts again for the next call "+
				"(a slow tool can be given more time with its custom_tools entry's timeout)%s", timeout, p.stderrNote()))
		case <-ctx.Done():
			return nil, "", w.fail(p, fmt.Sprintf("stopped: %v", context.Cause(ctx)))
		}
	}
}

// proc returns the running process, starting one when there is none.
func (w *worker) proc() (*proc, error) {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	if w.closed {
		return nil, &failure{w.label + " has been stopped: the session is ending"}
	}
	if w.p != nil {
		return w.p, nil
	}
	p, err := startProc(w.argv, w.dir, w.env, w.stderrLine)
	if err != nil {
		return nil, &failure{fmt.Sprintf("cannot start %s: %v", w.label, err)}
	}
	w.p = p
	return p, nil
}

// fail stops p, which the next request replaces, and returns msg as a *failure.
func (w *worker) fail(p *proc, msg string) error {
	w.pmu.Lock()
	if w.p == p {
		w.p = nil
	}
	w.pmu.Unlock()
	p.kill()
	return &failure{msg}
}

func (w *worker) setOutput(f tool.OutputFunc) {
	w.omu.Lock()
	w.out = f
	w.omu.Unlock()
}

// stderrLine shows what the process writes to stderr as the running call's output.
func (w *worker) stderrLine(s string) {
	w.omu.Lock()
	f := w.out
	w.omu.Unlock()
	if f != nil {
		f(s)
	}
}

// close stops the process, at once even during a request, which then fails.
func (w *worker) close() {
	w.pmu.Lock()
	p := w.p
	w.p, w.closed = nil, true
	w.pmu.Unlock()
	if p != nil {
		p.kill()
	}
}

func isFailure(err error) bool {
	var f *failure
	return errors.As(err, &f)
}

// clip shortens s to n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutAt(s, n) + "…"
}
