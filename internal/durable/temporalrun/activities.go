package temporalrun

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/usage"
)

// Activities run the turns and presentations of sessions on one worker.
type Activities struct {
	// Getenv reads API keys on this worker; nil means os.Getenv.
	Getenv func(string) string
	// Allow is where this worker sends requests besides the backends' own endpoints (nil:
	// only those).
	Allow *durable.Allowlist

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

// Turn runs one agent turn.
func (a *Activities) Turn(ctx context.Context, in TurnInput) (TurnResult, error) {
	stop := heartbeat(ctx)
	defer stop()
	o, err := a.options(in.WorkflowID, in.Session, in.Agent)
	if err != nil {
		return TurnResult{}, err
	}
	var evs []event.Event
	o.Bus = collector(&evs)
	out := engine.RunTurn(ctx, o, in.Ops, in.Agent, in.Conversation)
	if ctx.Err() != nil {
		// Cancelled (the session ended) or the worker is stopping: another attempt, if any.
		return TurnResult{}, ctx.Err()
	}
	return TurnResult{Outcome: out, Events: fit(coalesce(evs))}, nil
}

// Present runs the final presentation's model calls.
func (a *Activities) Present(ctx context.Context, in PresentInput) (PresentResult, error) {
	stop := heartbeat(ctx)
	defer stop()
	o, err := a.options(in.WorkflowID, in.Session, in.Agent)
	if err != nil {
		return PresentResult{}, err
	}
	var evs []event.Event
	o.Bus = collector(&evs)
	text, cut, u, cost, err := engine.RunPresentation(ctx, o, in.Ops, in.Agent, in.System, in.User)
	if ctx.Err() != nil {
		return PresentResult{}, ctx.Err()
	}
	r := PresentResult{Text: text, Truncated: cut, Usage: u, Cost: cost, Events: fit(coalesce(evs))}
	if err != nil {
		r.Err = err.Error()
	}
	return r, nil
}

// options builds the session's agents on this worker, reusing the providers it built for an
// earlier turn of the same session (a scripted agent remembers what it did).
//
// Whoever can start workflows on the task queue writes in, so the config is read again here
// as the CLI reads a file, checked as the starter checks it, and every agent's endpoint is
// checked against this worker's allowlist before any provider exists.
func (a *Activities) options(wid string, in Session, agent int) (engine.Options, error) {
	cfg, err := a.receive(in)
	if err != nil {
		return engine.Options{}, err
	}
	if agent < 0 || agent >= len(cfg.Agents) {
		return engine.Options{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %d: the session has %d agents", agent, len(cfg.Agents)), "config", nil)
	}
	o := engineOptions(in, cfg)
	o.Price = usage.Cost
	ps, err := a.providers(wid+"\x00"+in.Config, cfg)
	if err != nil {
		kind := "config"
		if _, refused := err.(*refusedError); refused {
			kind = refusedType
		}
		return o, temporal.NewNonRetryableApplicationError(err.Error(), kind, nil)
	}
	for i := range o.Agents {
		o.Agents[i].Provider = ps[i]
	}
	return o, nil
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
	getenv := a.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	ps := make([]provider.Provider, len(cfg.Agents))
	for i, ag := range cfg.Agents {
		key, from, err := app.APIKey(ag.Backend, getenv)
		if err != nil {
			return nil, fmt.Errorf("agent %s on this worker: %w", ag.ID, err)
		}
		if err := a.Allow.Check(ag, from); err != nil {
			return nil, &refusedError{err}
		}
		p, err := app.NewProvider(ag.Backend, key, from)
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

func collector(evs *[]event.Event) *event.Bus {
	bus := event.NewBus(nil)
	bus.Subscribe(event.SinkFunc(func(e event.Event) { *evs = append(*evs, e) }))
	return bus
}

// maxDeltaBytes bounds the streamed text and reasoning an activity result carries: Temporal
// refuses a payload over 2 MB, and the text the model wrote is in the conversation and the
// answer events besides.
const maxDeltaBytes = 512 << 10

// fit drops the deltas past maxDeltaBytes.
func fit(evs []event.Event) []event.Event {
	budget := maxDeltaBytes
	out := evs[:0]
	for _, e := range evs {
		n := 0
		switch p := e.Payload.(type) {
		case event.TextDelta:
			n = len(p.Text)
		case event.ReasoningDelta:
			n = len(p.Text)
		}
		if n > budget {
			continue
		}
		budget -= n
		out = append(out, e)
	}
	return out
}

// coalesce merges runs of text and reasoning deltas of one agent: the result travels in the
// workflow's history, where a delta per token would cost an entry each.
func coalesce(in []event.Event) []event.Event {
	var out []event.Event
	for _, e := range in {
		if n := len(out); n > 0 {
			switch p := e.Payload.(type) {
			case event.TextDelta:
				if q, ok := out[n-1].Payload.(event.TextDelta); ok && q.Agent == p.Agent && q.Presentation == p.Presentation {
					q.Text += p.Text
					out[n-1].Payload = q
					continue
				}
			case event.ReasoningDelta:
				if q, ok := out[n-1].Payload.(event.ReasoningDelta); ok && q.Agent == p.Agent && q.Presentation == p.Presentation {
					q.Text += p.Text
					out[n-1].Payload = q
					continue
				}
			}
		}
		out = append(out, e)
	}
	return out
}
