package temporalrun

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/trust"
	"massgen/internal/usage"
)

// Activities run the turns and presentations of sessions on one worker.
type Activities struct {
	// Getenv reads API keys on this worker; nil means os.Getenv.
	Getenv func(string) string
	// Allow is where this worker sends requests besides the backends' own endpoints (nil:
	// only those).
	Allow *durable.Allowlist
	// Client sends a running turn's events to its workflow as they happen (nil: they go
	// with its result, when it ends). Worker sets it.
	Client client.Client
	// NewProvider builds an agent's provider (nil: app.NewProvider).
	NewProvider func(b config.Backend, key, keyEnv string) (provider.Provider, error)
	// TrustSessions lets sessions start programs (MCP servers, custom tools, commands,
	// coding-agent CLIs) and open folders on this machine, as their configs say.
	TrustSessions bool
	// WorkspaceRoot holds the workspaces of the sessions this worker holds; "" means
	// .massgen/workspaces.
	WorkspaceRoot string
	// Store is where held sessions' snapshots and final workspaces go; nil means a
	// FolderStore in durable.DefaultStoreDir().
	Store durable.Store
	// Version is massgen's, told to MCP servers.
	Version string

	// queue is this worker's own task queue, where the turns of the sessions it holds go.
	queue  string
	heldMu sync.Mutex
	held   map[string]*heldSession // by workflow ID

	mu    sync.Mutex
	cache map[string][]provider.Provider // providers per workflow, kept for the next turn here
	order []string
}

// maxCached bounds the sessions whose providers a worker keeps.
const maxCached = 256

// heartbeatEvery is how often a running activity tells Temporal its worker is alive.
func heartbeatEvery(timeout time.Duration) time.Duration {
	return max(timeout/4, 100*time.Millisecond)
}

// Turn runs one agent turn, sending its events to the workflow as they happen.
func (a *Activities) Turn(ctx context.Context, in TurnInput) (TurnResult, error) {
	stop := heartbeat(ctx)
	defer stop()
	attempt := attemptOf(ctx, in.AttemptBase)
	if done(ctx, a.Client, in.Key, attempt) {
		return TurnResult{Done: true}, nil // its outcome is in the workflow: nothing is bought again
	}
	o, held, _, err := a.options(ctx, in.WorkflowID, in.Session, in.Agent)
	if err != nil {
		return TurnResult{}, err
	}
	st := newStreamer(ctx, a.Client, in.Key, attempt, in.Session.Live)
	o.Bus = event.NewBus(nil)
	o.Bus.Subscribe(st)
	detach := held.attach(in.Agent, o.Bus)
	unfollow := held.followAnswers(ctx, a.Client, in.WorkflowID, "")
	o.PeerContext = peerContext(ctx, a.Client, in.WorkflowID)
	out := engine.RunTurn(ctx, o, in.Ops, in.Agent, in.Conversation)
	unfollow()
	detach()
	if ctx.Err() != nil {
		// Cancelled (the session ended, the agent was stopped) or the worker is stopping:
		// what the turn paid for still reaches the workflow.
		st.finish(nil)
		return TurnResult{}, ctx.Err()
	}
	if answered(out) {
		// Before the outcome leaves: a worker that takes the session over starts from it.
		held.keep(ctx, a.store(), in.Agent, o.Bus)
	}
	streamed, from, rest := st.finish(func(b *Batch) { b.Turn = &out })
	if streamed {
		return TurnResult{Attempt: attempt, Streamed: true}, nil
	}
	return TurnResult{Outcome: out, Events: rest, From: from, Attempt: attempt}, nil
}

// Present runs the final presentation's model calls, or another one-off step (in.Step),
// streaming as Turn does.
func (a *Activities) Present(ctx context.Context, in PresentInput) (PresentResult, error) {
	stop := heartbeat(ctx)
	defer stop()
	attempt := attemptOf(ctx, in.AttemptBase)
	if done(ctx, a.Client, in.Key, attempt) {
		return PresentResult{Done: true}, nil
	}
	o, held, cfg, err := a.options(ctx, in.WorkflowID, in.Session, in.Agent)
	if err != nil {
		return PresentResult{}, err
	}
	st := newStreamer(ctx, a.Client, in.Key, attempt, in.Session.Live)
	o.Bus = event.NewBus(nil)
	o.Bus.Subscribe(st)
	detach := held.attach(in.Agent, o.Bus)
	unfollow := held.followAnswers(ctx, a.Client, in.WorkflowID, "")
	var r PresentResult
	switch in.Step {
	case StepPrepare:
		o.Paraphraser = a.paraphraser(cfg)
		o.Recall = a.memory(in.Session, cfg, o).Recall()
		p, u, cost := engine.RunPrepare(ctx, o, in.Ops)
		r = PresentResult{Prepared: &p, Usage: u, Cost: cost}
	case StepGather:
		if g, ok := engine.RunGather(o, in.Ops, in.Agent); ok {
			r.Gathered = &g
		}
	case StepSubagent:
		r = launchSubagent(ctx, held, in.Subagent)
	case StepRemember:
		r = a.remember(ctx, in, cfg, o)
	case StepVerify:
		text, u, cost, err := engine.RunVerify(ctx, o, in.Ops, in.Agent, in.User)
		r = PresentResult{Text: text, Usage: u, Cost: cost}
		if err != nil {
			r.Err = err.Error()
		}
	case StepEvaluate:
		e, u, cost, err := engine.RunEvaluation(ctx, o, in.Ops, in.Agent, in.User)
		r = PresentResult{Evaluated: &e, Usage: u, Cost: cost}
		if err != nil {
			r.Err, r.Evaluated = err.Error(), nil
		}
	default:
		text, cut, u, cost, err := engine.RunPresentation(ctx, o, in.Ops, in.Agent, in.System, in.User)
		r = PresentResult{Text: text, Truncated: cut, Usage: u, Cost: cost}
		if err != nil {
			r.Err = err.Error()
		}
	}
	unfollow()
	detach()
	if ctx.Err() != nil {
		st.finish(nil)
		return PresentResult{}, ctx.Err()
	}
	r.Attempt = attempt
	streamed, from, rest := st.finish(func(b *Batch) { b.Present = &r })
	if streamed {
		return PresentResult{Attempt: r.Attempt, Streamed: true}, nil
	}
	r.Events, r.From = rest, from
	return r, nil
}

// options builds the session's agents on this worker, reusing the providers it built for an
// earlier turn of the same session (a scripted agent remembers what it did); a session whose
// agents keep things on the machine runs with the team this worker holds for it (holder.go).
//
// Whoever can start workflows on the task queue writes in, so the config is read again here
// as the CLI reads a file, checked as the starter checks it, and every agent's endpoint is
// checked against this worker's allowlist before any provider exists.
func (a *Activities) options(ctx context.Context, wid string, in Session, agent int) (engine.Options, *heldSession, *config.Config, error) {
	cfg, err := a.receive(in)
	if err != nil {
		return engine.Options{}, nil, nil, err
	}
	if agent < 0 || agent >= len(cfg.Agents) {
		return engine.Options{}, nil, nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %d: the session has %d agents", agent, len(cfg.Agents)), "config", nil)
	}
	o := engineOptions(in, cfg)
	o.Price = usage.Cost
	if app.NeedsMachine(cfg) {
		h := a.heldFor(wid)
		if h == nil {
			return o, nil, nil, temporal.NewNonRetryableApplicationError("this worker no longer holds the session", movedType, nil)
		}
		o.Agents = slices.Clone(h.team.Agents)
		return o, h, cfg, nil
	}
	ps, err := a.providers(wid+"\x00"+in.Config, cfg)
	if err != nil {
		kind := "config"
		if _, refused := err.(*refusedError); refused {
			kind = refusedType
		}
		return o, nil, nil, temporal.NewNonRetryableApplicationError(err.Error(), kind, nil)
	}
	for i := range o.Agents {
		o.Agents[i].Provider = ps[i]
	}
	app.CompressionOnWorker(cfg, o.Agents) // a held session's team has it from BuildTeam
	return o, nil, cfg, nil
}

// getenv reads this worker's environment (Getenv, else the process's).
func (a *Activities) getenv() func(string) string {
	if a.Getenv != nil {
		return a.Getenv
	}
	return os.Getenv
}

// paraphraser is orchestrator.dspy's writer for cfg on this worker, with its keys and its
// allowlist (nil when paraphrasing is off).
func (a *Activities) paraphraser(cfg *config.Config) *engine.Paraphraser {
	return app.ParaphraserOn(cfg, a.getenv(), a.NewProvider, a.Allow.Check)
}

// receive reads and checks the config of a session this worker was handed.
func (a *Activities) receive(in Session) (*config.Config, error) {
	cfg, err := durable.DecodeConfig(in.Config)
	if err == nil {
		err = durable.Supported(cfg)
	}
	if err == nil {
		_, err = durable.ForWorkers(cfg)
	}
	if err == nil && !a.TrustSessions {
		if why := trust.OnMachine(cfg); len(why) > 0 {
			err = fmt.Errorf("this worker runs no session that starts programs or opens folders on its machine, and this one would:\n  %s\n"+
				"start the worker with --trust-sessions if only trusted callers can start sessions on its task queue", strings.Join(why, "\n  "))
		}
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("the session's config on this worker: "+err.Error(), refusedType, nil)
	}
	return cfg, nil
}

// refusedType marks an activity error that refuses the whole session: the session workflow
// ends with it instead of counting it as an agent's failed turn.
const refusedType = "refused"

// refusedError is an agent this worker does not run: a config it does not send keys for.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }

// providers builds the agents' providers of the session with the given key (its workflow and
// config), or reuses those built for an earlier turn. An agent whose key would go where this
// worker does not send it is refused, as a Refused error, before any request.
func (a *Activities) providers(session string, cfg *config.Config) ([]provider.Provider, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ps, ok := a.cache[session]; ok {
		return ps, nil
	}
	getenv := a.getenv()
	ps := make([]provider.Provider, len(cfg.Agents))
	for i, ag := range cfg.Agents {
		key, from, err := app.APIKey(ag.Backend, getenv)
		if err != nil {
			return nil, fmt.Errorf("agent %s on this worker: %w", ag.ID, err)
		}
		if err := a.Allow.Check(ag, from); err != nil {
			return nil, &refusedError{err}
		}
		newProvider := a.NewProvider
		if newProvider == nil {
			newProvider = app.NewProvider
		}
		p, err := newProvider(ag.Backend, key, from)
		if err != nil {
			return nil, fmt.Errorf("agent %s on this worker: %w", ag.ID, redact.New(key).Error(err))
		}
		ps[i] = p
	}
	if a.cache == nil {
		a.cache = map[string][]provider.Provider{}
	}
	if len(a.order) >= maxCached {
		delete(a.cache, a.order[0])
		a.order = a.order[1:]
	}
	a.cache[session] = ps
	a.order = append(a.order, session)
	return ps, nil
}

// heartbeat tells Temporal, until stop, that this worker is still running the activity; it
// also learns of a cancelled activity this way, which cancels ctx.
func heartbeat(ctx context.Context) (stop func()) {
	every := heartbeatEvery(activity.GetInfo(ctx).HeartbeatTimeout)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// maxDeltaBytes bounds the streamed text and reasoning of one attempt: it travels in the
// workflow's history, and the text the model wrote is in the conversation and the answer
// events besides.
const maxDeltaBytes = 512 << 10

// deltaLen is the streamed text an event carries (0 for other events).
func deltaLen(p event.Payload) int {
	switch p := p.(type) {
	case event.TextDelta:
		return len(p.Text)
	case event.ReasoningDelta:
		return len(p.Text)
	}
	return 0
}

// merge appends e to evs, joining it to the last event when both are text (or reasoning)
// deltas of one agent: a delta per token would cost the history an entry each.
func merge(evs []event.Event, e event.Event) []event.Event {
	if n := len(evs); n > 0 {
		switch p := e.Payload.(type) {
		case event.TextDelta:
			if q, ok := evs[n-1].Payload.(event.TextDelta); ok && q.Agent == p.Agent && q.Presentation == p.Presentation {
				q.Text += p.Text
				evs[n-1].Payload = q
				return evs
			}
		case event.ReasoningDelta:
			if q, ok := evs[n-1].Payload.(event.ReasoningDelta); ok && q.Agent == p.Agent && q.Presentation == p.Presentation {
				q.Text += p.Text
				evs[n-1].Payload = q
				return evs
			}
		}
	}
	return append(evs, e)
}
