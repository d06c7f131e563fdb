package subagent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"massgen/internal/event"
	"massgen/internal/private"
	"massgen/internal/provider"
)

// Why a subagent's context ended, when the Manager ended it.
var (
	errBudget  = errors.New("the session's max_cost_usd is spent")
	errTimeout = errors.New("the subagent's time is up")
	errParent  = errors.New("the parent session ended")
)

// Manager is one parent session's subagents: it runs them, keeps their ids unique, caps how
// many run, shares the parent's cost budget with them, and holds background results until
// their agent reads them. Every subagent it starts ends by Close at the latest.
type Manager struct {
	set     Settings
	run     Runner
	publish func(event.Payload)

	ctx    context.Context // the session's: Close ends it
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	used     map[string]bool
	agents   map[string]*agentState
	children map[*child]struct{}
	parent   float64 // what the parent session's own events report spent (subagents' costs once billed included)
	live     float64 // what running or unbilled subagents spent
}

// agentState is one parent agent's subagents.
type agentState struct {
	sem      chan struct{}
	spawned  int
	bg       sync.WaitGroup // its background subagents
	inbox    []string
	unbilled provider.Usage // background subagents' spending not yet added to the agent's cost
}

// child is one running subagent.
type child struct {
	cancel context.CancelCauseFunc
	agent  string
	bg     bool
}

// NewManager returns the Manager of a session; publish puts events on the parent session's
// stream (it must accept calls from any goroutine). reserved are ids already used in the
// session's log (a resumed session), so that no folder is reused.
func NewManager(set Settings, run Runner, publish func(event.Payload), reserved ...string) *Manager {
	ctx, cancel := context.WithCancelCause(context.Background())
	m := &Manager{set: set, run: run, publish: publish, ctx: ctx, cancel: cancel,
		used: map[string]bool{}, agents: map[string]*agentState{}, children: map[*child]struct{}{}}
	for _, id := range reserved {
		m.used[id] = true
	}
	return m
}

// Close cancels every subagent still running and waits for them.
func (m *Manager) Close() error {
	m.cancel(errParent)
	m.wg.Wait()
	return nil
}

// Handle watches the parent session's events: its spending counts against the budget it
// shares with its subagents.
func (m *Manager) Handle(e event.Event) {
	u, ok := e.Payload.(event.UsageReported)
	if !ok || u.CostUSD == 0 {
		return
	}
	m.mu.Lock()
	m.parent += u.CostUSD
	m.mu.Unlock()
	m.checkBudget()
}

func (m *Manager) agent(id string) *agentState {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[id]
	if a == nil {
		a = &agentState{sem: make(chan struct{}, max(m.set.MaxConcurrent, 1))}
		m.agents[id] = a
	}
	return a
}

// remaining is what the budget leaves (ok false: there is no budget).
func (m *Manager) remaining() (usd float64, ok bool) {
	if m.set.MaxCostUSD <= 0 {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.set.MaxCostUSD - m.parent - m.live, true
}

// checkBudget ends every subagent once the parent and its subagents together spent the
// budget. Cancelling does not wait for anything, so it is safe from any event sink.
func (m *Manager) checkBudget() {
	left, ok := m.remaining()
	if !ok || left > 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for c := range m.children {
		c.cancel(errBudget)
	}
}

// reserve claims a unique id for agent's subagent: want (made safe for a folder name) or
// <agent>_sub<n>.
func (m *Manager) reserve(agent, want string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	base := safeID(want)
	generic := base == ""
	if generic {
		base = safeID(agent) + "_sub"
	}
	id := base
	if generic {
		id = base + "1"
	}
	for n := 2; m.used[id]; n++ {
		if generic {
			id = fmt.Sprintf("%s%d", base, n)
		} else {
			id = fmt.Sprintf("%s_%d", base, n)
		}
	}
	m.used[id] = true
	return id
}

// safeID keeps letters, digits, '-' and '_' (a model-chosen id names folders).
func safeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ' || r == '.' || r == '/':
			b.WriteRune('_')
		}
		if b.Len() >= maxIDChars {
			break
		}
	}
	return strings.Trim(b.String(), "_-")
}

// result is one subagent's end as the caller reads it.
type result struct {
	ID        string  `json:"subagent_id"`
	Status    string  `json:"status"`
	Success   bool    `json:"success"`
	Answer    string  `json:"answer,omitempty"`
	Error     string  `json:"error,omitempty"`
	LogDir    string  `json:"log_dir,omitempty"`
	Workspace string  `json:"workspace,omitempty"`
	Seconds   float64 `json:"execution_time_seconds"`
	Tokens    tokens  `json:"token_usage"`

	spent provider.Usage
}

type tokens struct {
	Input  int64    `json:"input_tokens"`
	Output int64    `json:"output_tokens"`
	Cost   *float64 `json:"estimated_cost,omitempty"` // nil: unknown
}

// launch runs one subagent on ctx (the caller's call, or the session's for a background
// one), publishing its start and end; it returns when the subagent has ended.
func (m *Manager) launch(ctx context.Context, r Request, bg bool) result {
	a := m.agent(r.Agent)
	start := time.Now()
	logDir := ""
	if r.LogRoot != "" {
		if err := private.MkdirAll(filepath.Join(r.LogRoot, r.ID)); err != nil {
			r.LogRoot = "" // the subagent runs without its log rather than not at all
		} else {
			logDir = filepath.Join(r.LogRoot, r.ID, "turn_1")
		}
	}
	m.publish(event.SubagentStarted{Agent: r.Agent, ID: r.ID, Kind: r.Kind, Task: r.Question, Background: bg, LogDir: m.set.shown(logDir),
		TimeoutSeconds: r.Timeout.Seconds()})
	cctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(m.ctx, func() { cancel(context.Cause(m.ctx)) })
	c := &child{cancel: cancel, agent: r.Agent, bg: bg}
	m.mu.Lock()
	m.children[c] = struct{}{}
	m.mu.Unlock()
	var spent float64
	r.OnCost = func(usd float64, _ bool) {
		m.mu.Lock()
		m.live += usd
		spent += usd
		m.mu.Unlock()
		m.checkBudget()
	}
	if left, ok := m.remaining(); ok {
		r.MaxCostUSD = max(left, 0.000001)
	}
	hctx, hcancel := context.WithTimeoutCause(cctx, r.Timeout+r.Presentation+hardGrace, errTimeout)
	var out Outcome
	select {
	case a.sem <- struct{}{}:
		out = m.run(hctx, r)
		<-a.sem
	case <-hctx.Done():
		out = Outcome{Err: errors.New("it never started: no room among this agent's running subagents before it ended")}
	}
	cause, ended := context.Cause(hctx), hctx.Err() != nil
	hcancel()
	stop()
	cancel(nil)
	m.mu.Lock()
	delete(m.children, c)
	m.live -= spent // what the child reported live is replaced by its total, billed below
	m.mu.Unlock()

	res := result{ID: r.ID, LogDir: m.set.shown(cmpOr(out.LogDir, logDir)), Workspace: m.set.shown(out.Workspace), Seconds: time.Since(start).Seconds(),
		Answer: clip(out.Answer, maxAnswerChars), Tokens: tokens{Input: out.Usage.InputTokens, Output: out.Usage.OutputTokens}}
	res.spent = provider.Usage{CostUSD: out.CostUSD, Unknown: out.CostUnknown}
	if !out.CostUnknown {
		cost := out.CostUSD
		res.Tokens.Cost = &cost
	}
	res.Status, res.Error = status(out, cause, ended)
	res.Success = res.Status == event.SubagentCompleted || res.Status == event.SubagentCompletedTimeout ||
		(res.Status == event.SubagentBudget && out.Answer != "")
	m.publish(event.SubagentFinished{Agent: r.Agent, ID: r.ID, Status: res.Status, Answer: res.Answer, Error: res.Error,
		LogDir: res.LogDir, CostUSD: out.CostUSD, CostUnknown: out.CostUnknown, DurationSeconds: res.Seconds, Background: bg})
	return res
}

// status names how a subagent ended, and the error the caller reads when it gave no answer.
func status(out Outcome, cause error, ended bool) (string, string) {
	answered := strings.TrimSpace(out.Answer) != ""
	switch {
	case errors.Is(cause, errBudget):
		return event.SubagentBudget, "the session's max_cost_usd was spent; the subagent was stopped" + bestSoFar(answered)
	case errors.Is(cause, errTimeout) || out.TimedOut:
		if answered {
			return event.SubagentCompletedTimeout, ""
		}
		return event.SubagentTimeout, "the subagent's time ran out before it had an answer; its log folder shows how far it got. " +
			"Split the task, or raise subagent_default_timeout"
	case ended:
		return event.SubagentCancelled, "the subagent was cancelled: its parent ended first" + bestSoFar(answered)
	case out.Err != nil && !answered:
		return event.SubagentError, out.Err.Error()
	case !answered:
		return event.SubagentError, "the subagent's team gave no answer"
	}
	return event.SubagentCompleted, ""
}

func bestSoFar(answered bool) string {
	if answered {
		return " (its best answer so far is given)"
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// clip cuts s to n bytes on a rune boundary, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[... cut: the answer is %d bytes; the rest is in its log folder]", len(s))
}

// Inbox returns what agent's finished background subagents left for it, for engine.Agent's
// Inbox: their results as one message, and what they spent.
func (m *Manager) Inbox(agent string) func() (string, provider.Usage) {
	return func() (string, provider.Usage) {
		a := m.agent(agent)
		m.mu.Lock()
		defer m.mu.Unlock()
		text := strings.Join(a.inbox, "\n\n")
		spent := a.unbilled
		a.inbox, a.unbilled = nil, provider.Usage{}
		m.live -= spent.CostUSD // the agent's cost holds it now
		return text, spent
	}
}

// Finish ends agent's background subagents (coordination is over: nothing could read their
// results) and returns what they spent that the agent was not billed yet. It waits until
// they have ended or ctx ends.
func (m *Manager) Finish(ctx context.Context, agent string) provider.Usage {
	a := m.agent(agent)
	m.mu.Lock()
	for c := range m.children {
		if c.bg && c.agent == agent {
			c.cancel(errParent)
		}
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { a.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	spent := a.unbilled
	a.unbilled, a.inbox = provider.Usage{}, nil
	m.live -= spent.CostUSD
	return spent
}
