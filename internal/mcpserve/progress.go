package mcpserve

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

// progress is a session's event sink: it folds every event into a readmodel.State (the result
// reads winner, votes and cost from it) and, when the client asked for progress with a
// progressToken, turns the events that matter to a caller (the session starting, each answer
// and vote, an agent failing, coordination ending, the presentation, the end) into MCP
// progress notifications. Handle runs under the event bus's lock, so it only queues; one
// goroutine, started by start and waited for by finish, sends.
type progress struct {
	mu    sync.Mutex
	state *readmodel.State
	queue []string
	wake  chan struct{} // capacity 1: a pending wake-up
	done  chan struct{} // closed by finish: send what is queued, then stop
	sent  chan struct{} // closed when the sender has stopped

	notify func(ctx context.Context, n float64, msg string) error // nil: the client wants no progress
}

func newProgress(req *mcp.CallToolRequest) *progress {
	p := &progress{state: readmodel.NewState(), wake: make(chan struct{}, 1), done: make(chan struct{}), sent: make(chan struct{})}
	var token any
	if req != nil && req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	if token != nil && req.Session != nil {
		p.notify = func(ctx context.Context, n float64, msg string) error {
			return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
		}
	}
	return p
}

// Handle implements event.Sink.
func (p *progress) Handle(e event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state.Apply(e)
	if p.notify == nil {
		return
	}
	if msg := describe(e.Payload); msg != "" {
		p.queue = append(p.queue, msg)
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// start runs the sender until finish; ctx is the request's, so a client that has gone stops
// the sending at once.
func (p *progress) start(ctx context.Context) {
	go func() {
		defer close(p.sent)
		var n float64
		for {
			var stop bool
			select {
			case <-p.wake:
			case <-p.done:
				stop = true
			}
			p.mu.Lock()
			msgs := p.queue
			p.queue = nil
			p.mu.Unlock()
			for _, m := range msgs {
				n++ // MCP: progress increases with every notification
				if ctx.Err() == nil {
					_ = p.notify(ctx, n, m) // a client that cannot take it loses only the progress
				}
			}
			if stop {
				return
			}
		}
	}()
}

// finish sends what is still queued and waits for the sender: the notifications reach the
// client before the result does. Without a sender it only returns.
func (p *progress) finish() {
	close(p.done)
	if p.notify != nil {
		<-p.sent
	}
}

// snapshot returns the state; valid once the session's events have all been handled.
func (p *progress) snapshot() *readmodel.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// maxReason bounds a vote's reason or an error in a progress message.
const maxReason = 300

// describe is the progress message for payload; "" for events that are not progress a caller
// wants to hear about (streamed text, tool calls, ...).
func describe(payload event.Payload) string {
	switch p := payload.(type) {
	case event.SessionStarted:
		ids := make([]string, len(p.Agents))
		for i, a := range p.Agents {
			ids[i] = a.ID
		}
		msg := fmt.Sprintf("session started: %d agents (%s)", len(p.Agents), strings.Join(ids, ", "))
		if p.LogDir != "" {
			msg += "; log " + p.LogDir
		}
		return msg
	case event.AnswerSubmitted:
		msg := fmt.Sprintf("%s answered (%s)", p.Agent, p.Label)
		if len(p.Invalidated) > 0 {
			msg += fmt.Sprintf("; the votes of %s no longer count", strings.Join(p.Invalidated, ", "))
		}
		return msg
	case event.VoteCast:
		return fmt.Sprintf("%s voted for %s (%s): %s", p.Agent, p.Target, p.AnswerLabel, clip(p.Reason))
	case event.AgentDead:
		return fmt.Sprintf("%s is out of the session: %s", p.Agent, clip(p.Reason))
	case event.CoordinationEnded:
		if p.Winner == "" {
			return fmt.Sprintf("coordination ended (%s) without an answer", p.Reason)
		}
		return fmt.Sprintf("coordination ended (%s): winner %s (%s)", p.Reason, p.Winner, p.AnswerLabel)
	case event.FinalStarted:
		return fmt.Sprintf("%s presents the final answer", p.Agent)
	case event.SessionEnded:
		msg := fmt.Sprintf("session %s in %.1f s", p.Status, p.DurationSeconds)
		if p.Error != "" {
			msg += ": " + clip(p.Error)
		}
		return msg
	}
	return ""
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxReason {
		return string(r[:maxReason]) + "…"
	}
	return s
}
