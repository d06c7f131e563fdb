// Package cliagent runs coding-agent CLIs (Claude Code, Codex, Gemini CLI) as team members.
// Each agent is one provider.Provider: a Stream call is one run of the CLI, or the
// continuation of the run in progress. The CLI works with its own tools in the agent's
// workspace; the tools the engine offers (new_answer and vote, and any MCP or custom tool)
// reach it as MCP tools massgen serves on loopback (toolserver.go). When the CLI calls one,
// Stream yields it as a ToolCallChunk and ends, with the CLI waiting on the call; the engine
// judges the call as it judges an API agent's, and the next Stream hands its verdict back as
// the tool's result, so the CLI's own session goes on (design P6). A run that ended is
// continued by resuming the CLI's session with what the engine says next.
package cliagent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"massgen/internal/mcptool"
	"massgen/internal/provider"
)

// Workspace is where the CLI works and what else it may read or write.
type Workspace struct {
	// Dir is the agent's workspace, the CLI's working directory.
	Dir string
	// Read are folders the CLI may read besides Dir: the other agents' snapshots and the
	// read-only context paths. Write are the context paths it may also write.
	Read, Write []string
}

// Agent is one CLI agent. It is a provider.Provider for one agent at a time.
type Agent struct {
	o  Options
	fl flavour

	mu      sync.Mutex
	ws      Workspace
	tools   *toolServer
	cur     *run                 // the CLI process of the current run; nil between runs
	seen    []provider.Message   // the conversation as this agent has consumed it
	open    map[string]*toolCall // calls the CLI waits on, by id
	order   []string             // ids of open, in the order they were made
	sessID  string               // the CLI's session, resumed by later runs
	last    *provider.Request    // the last request, to estimate calls a stopped run never reported
	mcp     []mcptool.Server     // the user's MCP servers, in the CLI's own config
	sandbox SandboxFunc          // nil: the CLI runs unsandboxed
	closed  bool
}

// New returns the agent of o; the CLI is not started before the first Stream.
func New(o Options) (*Agent, error) {
	fl, ok := flavours[o.Type]
	if !ok {
		return nil, fmt.Errorf("cliagent: unknown CLI type %q", o.Type)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	return &Agent{o: o, fl: fl, open: map[string]*toolCall{}}, nil
}

// Bind sets the agent's workspace, and home, a folder of the agent under the run's
// directories where the CLI gets a throwaway HOME (and CODEX_HOME) so that the user's
// settings, hooks and history stay out. Stream refuses to run before Bind.
func (a *Agent) Bind(ws Workspace, home string) {
	a.mu.Lock()
	a.ws, a.o.Home = ws, home
	a.mu.Unlock()
}

// SessionID is the CLI's own session id, once a run has reported it.
func (a *Agent) SessionID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessID
}

// Close ends the CLI (and everything it started) and the tool server. Idempotent.
func (a *Agent) Close() error {
	a.mu.Lock()
	a.closed = true
	cur, ts := a.cur, a.tools
	a.cur, a.tools = nil, nil
	a.mu.Unlock()
	if cur != nil {
		cur.stop()
	}
	if ts != nil {
		return ts.close()
	}
	return nil
}

// Stream runs or continues the CLI for req.
func (a *Agent) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		a.mu.Lock()
		defer a.mu.Unlock()
		r, err := a.begin(req)
		if err != nil {
			yield(nil, a.fail(err))
			return
		}
		a.pump(ctx, r, yield)
	}
}

// begin delivers what is new in req to the CLI: verdicts to the calls it waits on, anything
// else as the prompt of a new or resumed run. It returns the run to read.
func (a *Agent) begin(req provider.Request) (*run, error) {
	if a.closed {
		return nil, errors.New("the agent was closed")
	}
	if a.ws.Dir == "" || a.o.Home == "" {
		return nil, errors.New("no workspace: a CLI agent needs one (massgen gives it one)")
	}
	if a.tools == nil {
		ts, err := newToolServer()
		if err != nil {
			return nil, err
		}
		a.tools = ts
	}
	a.tools.setTools(req.Tools)
	a.last = &req
	fresh := !continues(a.seen, req.Messages)
	news := req.Messages[min(len(a.seen), len(req.Messages)):]
	// The final presentation is a conversation of its own for the engine, but the winner's
	// CLI goes on in the session where it did the work (design P6): its files and reasoning
	// are there.
	keep := ""
	if fresh && req.Stage == provider.StagePresentation {
		keep = a.sessID
	}
	if fresh {
		a.reset()
		news = req.Messages
		a.sessID = keep
	}
	a.seen = append(a.seen[:0:0], req.Messages...)
	replies, rest := a.split(news)
	if a.cur != nil && len(replies) > 0 {
		// The CLI waits on these calls: the verdicts are its tool results, and anything said
		// after them goes with the last one (a CLI cannot take a message mid-run).
		last := replies[len(replies)-1]
		if len(rest) > 0 {
			last.reply.content = strings.TrimSpace(last.reply.content + "\n\n" + strings.Join(rest, "\n\n"))
		}
		for _, r := range replies {
			r.call.reply <- r.reply
			a.forget(r.call.id)
		}
		return a.cur, nil
	}
	// Nothing the CLI waits on: a new run, resuming the CLI's session unless the engine
	// started the conversation over.
	if a.cur != nil {
		a.cur.stop()
		a.cur = nil
	}
	a.dropOpen()
	for _, r := range replies {
		rest = append([]string{r.reply.content}, rest...)
	}
	prompt := strings.Join(rest, "\n\n")
	if strings.TrimSpace(prompt) == "" {
		prompt = "Continue."
	}
	resume := a.sessID
	if fresh && keep == "" {
		resume = ""
	}
	r, err := a.start(req, prompt, resume)
	if err != nil {
		return nil, err
	}
	a.cur = r
	return r, nil
}

type pendingReply struct {
	call  *toolCall
	reply toolReply
}

// split sorts new messages into verdicts on open calls and text for the CLI.
func (a *Agent) split(news []provider.Message) ([]pendingReply, []string) {
	var replies []pendingReply
	var rest []string
	for _, m := range news {
		switch m.Role {
		case provider.RoleTool:
			if c, ok := a.open[m.ToolCallID]; ok {
				replies = append(replies, pendingReply{c, toolReply{content: m.Content, isError: m.IsError}})
				continue
			}
			if m.Content != "" {
				rest = append(rest, m.Content)
			}
		case provider.RoleUser:
			if m.Content != "" {
				rest = append(rest, m.Content)
			}
		}
	}
	return replies, rest
}

// continues reports whether msgs extends the conversation seen so far.
func continues(seen, msgs []provider.Message) bool {
	if len(seen) == 0 || len(msgs) < len(seen) {
		return false
	}
	for k := range seen {
		if !sameMessage(seen[k], msgs[k]) {
			return false
		}
	}
	return true
}

func sameMessage(x, y provider.Message) bool {
	if x.Role != y.Role || x.Content != y.Content || x.ToolCallID != y.ToolCallID || len(x.ToolCalls) != len(y.ToolCalls) {
		return false
	}
	for k := range x.ToolCalls {
		if x.ToolCalls[k] != y.ToolCalls[k] {
			return false
		}
	}
	return true
}

// reset forgets the conversation: the next run starts a new CLI session.
func (a *Agent) reset() {
	if a.cur != nil {
		a.cur.stop()
		a.cur = nil
	}
	a.dropOpen()
	a.seen = nil
	a.sessID = ""
}

// dropOpen answers the calls no process waits on any more.
func (a *Agent) dropOpen() {
	for _, id := range a.order {
		a.open[id].reply <- toolReply{content: "Error: superseded", isError: true}
	}
	a.open, a.order = map[string]*toolCall{}, nil
}

func (a *Agent) forget(id string) {
	delete(a.open, id)
	for k, o := range a.order {
		if o == id {
			a.order = append(a.order[:k], a.order[k+1:]...)
			break
		}
	}
}

// pump streams the run's output until the CLI calls a served tool (the stream ends with the
// call, the CLI waiting on it), the run ends, or ctx is done (the run is stopped).
func (a *Agent) pump(ctx context.Context, r *run, yield func(provider.Chunk, error) bool) {
	for {
		select {
		case <-ctx.Done():
			// What the stopped run is known to have used goes to the engine, which estimates
			// the rest of a cut-off call.
			a.stopRun(r)
			if u := r.unreported(); u != (provider.Usage{}) {
				u.Estimated = true
				if !yield(provider.UsageChunk{Usage: u}, nil) {
					return
				}
			}
			yield(nil, ctx.Err())
			return
		case c := <-a.tools.calls:
			a.open[c.id] = c
			a.order = append(a.order, c.id)
			if !yield(provider.ToolCallChunk{Call: provider.ToolCall{ID: c.id, Name: c.name, Arguments: c.args}}, nil) {
				return
			}
			yield(provider.Done{StopReason: "tool_use"}, nil)
			return
		case ev, ok := <-r.events:
			if !ok {
				a.finish(r, yield)
				return
			}
			if ev.session != "" && ev.session != a.sessID {
				a.sessID = ev.session
				if !yield(provider.SessionChunk{ID: ev.session}, nil) {
					a.stopRun(r)
					return
				}
			}
			if ev.err != nil {
				a.stopRun(r)
				yield(nil, a.fail(ev.err))
				return
			}
			if ev.chunk != nil && !yield(ev.chunk, nil) {
				a.stopRun(r)
				return
			}
		}
	}
}

// finish ends a Stream whose run has ended: a clean exit ends the model's turn, anything
// else fails it with the CLI's last words.
func (a *Agent) finish(r *run, yield func(provider.Chunk, error) bool) {
	st := r.wait()
	a.cur = nil
	a.dropOpen()
	if err := r.outcome(st); err != nil {
		yield(nil, a.fail(err))
		return
	}
	yield(provider.Done{StopReason: "end_turn"}, nil)
}

func (a *Agent) stopRun(r *run) {
	r.stop()
	if a.cur == r {
		a.cur = nil
	}
	a.dropOpen()
}

// fail wraps err as the provider error of this agent's type; a missing CLI or login is fatal.
func (a *Agent) fail(err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return err
	}
	var fe *fatalError
	return &provider.Error{Provider: a.o.Type, Fatal: errors.As(err, &fe), Err: err}
}

// fatalError is a failure retrying cannot help: the CLI is missing, too old, or not logged in.
type fatalError struct{ msg string }

func (e *fatalError) Error() string { return e.msg }
