// Package durable runs sessions as Temporal workflows, so that any number of workers on any
// number of machines share them and a worker that dies loses nothing but the turns it was in
// the middle of, which another worker runs again.
//
// The workflow drives the engine's coordination (engine.Coordinator, over the pure state
// machine of internal/coord) in deterministic workflow code; each agent turn and the final
// presentation is an activity, run by the engine's own code against a replica of the state.
// A turn is one activity, not each model call: within a turn the engine decides what to send
// next from what the model streamed (enforcement retries, tool rounds, the round clock,
// output caps), and splitting it would copy that logic into the workflow. A dead worker costs
// the calls of one turn, never an accepted answer or vote.
//
// Every event the session makes is kept in the workflow, in order, and read by the process
// that started the session through a query, which publishes it on its own bus: its live view,
// events.jsonl, status.json and final/ are those of a local run.
package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// Names registered with Temporal. Changing one strands the sessions that run under it.
const (
	WorkflowName    = "massgen.Session"
	TurnActivity    = "massgen.Turn"
	PresentActivity = "massgen.Present"
	QueryEvents     = "massgen.events"
)

// DefaultHeartbeat is how long a worker may go silent before its activity is run again on
// another worker.
const DefaultHeartbeat = 30 * time.Second

// maxAttempts bounds how often one turn is run again after workers died in it.
const maxAttempts = 10

// Session is a workflow's input: everything a worker needs to run the session's turns, except
// the API keys, which each worker reads from its own environment. Config is the team as a
// config file in MassGen's schema (encodeConfig), which every worker reads again.
type Session struct {
	Config    string             `json:"config"`
	Question  string             `json:"question"`
	History   []provider.Message `json:"history,omitempty"`
	Turn      int                `json:"turn"`
	SessionID string             `json:"session_id,omitempty"`
	LogDir    string             `json:"log_dir,omitempty"`
	// Heartbeat is the activities' heartbeat timeout; 0 means DefaultHeartbeat.
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
}

// Outcome is a workflow's result.
type Outcome struct {
	Status      string         `json:"status"`
	ExitCode    int            `json:"exit_code"`
	EndReason   string         `json:"end_reason,omitempty"`
	Winner      string         `json:"winner,omitempty"`
	FinalAnswer string         `json:"final_answer,omitempty"`
	TruncatedBy string         `json:"truncated_by,omitempty"`
	Err         string         `json:"err,omitempty"`
	Seconds     float64        `json:"seconds"`
	Usage       provider.Usage `json:"usage,omitzero"`
	CostUSD     float64        `json:"cost_usd,omitempty"`
	// CostUnknown: a model without a price used tokens, so CostUSD is not all of it.
	CostUnknown bool `json:"cost_unknown,omitempty"`
}

// Page is what the events query answers: the session's events from From on, and whether the
// session has ended (its last event is SessionEnded).
type Page struct {
	Events []event.Event `json:"events"`
	Ended  bool          `json:"ended"`
}

// maxPage bounds the events of one query answer, well inside Temporal's payload limit.
const (
	maxPageEvents = 500
	maxPageBytes  = 1 << 20
)

// TurnInput is a turn activity's input.
type TurnInput struct {
	Session      Session             `json:"session"`
	WorkflowID   string              `json:"workflow_id"`
	Ops          []engine.Op         `json:"ops"`
	Agent        int                 `json:"agent"`
	Conversation engine.Conversation `json:"conversation"`
}

// TurnResult is a turn activity's result.
type TurnResult struct {
	Outcome engine.TurnOutcome `json:"outcome"`
	Events  []event.Event      `json:"events"`
}

// PresentInput is the presentation activity's input.
type PresentInput struct {
	Session      Session     `json:"session"`
	WorkflowID   string      `json:"workflow_id"`
	Ops          []engine.Op `json:"ops"`
	Agent        int         `json:"agent"`
	System, User string
}

// PresentResult is the presentation activity's result.
type PresentResult struct {
	Text      string         `json:"text"`
	Truncated string         `json:"truncated,omitempty"`
	Err       string         `json:"err,omitempty"`
	Usage     provider.Usage `json:"usage,omitzero"`
	Cost      float64        `json:"cost,omitempty"`
	Events    []event.Event  `json:"events"`
}

// SessionWorkflow runs one session. Its code must stay deterministic: time from workflow.Now,
// waiting through the selector, no goroutines, no I/O; the engine code it calls is the pure
// coordination.
func SessionWorkflow(ctx workflow.Context, in Session) (Outcome, error) {
	var log []event.Event
	var ended bool
	now := func() time.Time { return workflow.Now(ctx) }
	bus := event.NewBus(now)
	bus.Subscribe(event.SinkFunc(func(e event.Event) {
		log = append(log, e)
		_, ended = e.Payload.(event.SessionEnded)
	}))
	err := workflow.SetQueryHandler(ctx, QueryEvents, func(from int) (Page, error) {
		return page(log, from, ended), nil
	})
	if err != nil {
		return Outcome{}, fmt.Errorf("events query: %w", err)
	}
	cfg, err := durable.DecodeConfig(in.Config)
	if err == nil {
		err = durable.Supported(cfg)
	}
	if err != nil {
		return Outcome{}, temporal.NewNonRetryableApplicationError(err.Error(), "unsupported", nil)
	}
	// The replica's events come with the worker's clock; their order is the workflow's.
	forward := func(evs []event.Event) {
		for _, e := range evs {
			if !engine.Decided(e.Payload) {
				bus.Publish(e.Payload)
			}
		}
	}

	o := engineOptions(in, cfg)
	o.Bus, o.Now = bus, now
	x := engine.NewCoordinator(o)
	x.Start()

	hb := in.Heartbeat
	if hb <= 0 {
		hb = DefaultHeartbeat
	}
	t := o.Timeouts
	if t.Orchestrator <= 0 {
		t.Orchestrator = 1800 * time.Second
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// A turn lasts at most the session; the heartbeat finds a dead worker much sooner.
		StartToCloseTimeout: t.Orchestrator + time.Minute,
		HeartbeatTimeout:    hb,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: maxAttempts},
	})
	wid := workflow.GetInfo(ctx).WorkflowExecution.ID
	n := len(o.Agents)
	convs := make([]engine.Conversation, n)
	rounds := make([]int, n)
	busy := make([]bool, n)
	paused := make([]bool, n)

	turnCtx, cancelTurns := workflow.WithCancel(actx)
	sel := workflow.NewSelector(ctx)
	timeout := workflow.NewTimer(turnCtx, t.Orchestrator)
	reason := ""
	var refused error // a worker refused the session: it ends without a result
	sel.AddFuture(timeout, func(f workflow.Future) {
		if f.Get(ctx, nil) == nil {
			reason = event.EndTimeout
		}
	})
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { reason = event.EndInterrupted })

	var startTurn func(i int)
	startTurn = func(i int) {
		rounds[i]++
		conv := x.BeginTurn(i, convs[i], rounds[i])
		busy[i] = true
		f := workflow.ExecuteActivity(turnCtx, TurnActivity, TurnInput{Session: in, WorkflowID: wid, Ops: x.Ops(), Agent: i, Conversation: conv})
		sel.AddFuture(f, func(f workflow.Future) {
			busy[i] = false
			var r TurnResult
			if err := f.Get(ctx, &r); err != nil {
				if x.Ended() || temporal.IsCanceledError(err) {
					return
				}
				if isRefusal(err) {
					refused = err
					return
				}
				r.Outcome = engine.TurnOutcome{Conversation: conv, Err: "the turn could not run on any worker: " + activityError(err), Fatal: isNonRetryable(err)}
			}
			forward(r.Events)
			convs[i] = x.Finish(i, r.Outcome)
			if r.Outcome.Err != "" && !x.Dead(i) && !x.Ended() {
				paused[i] = true
				sel.AddFuture(workflow.NewTimer(turnCtx, x.RetryDelay(i)), func(workflow.Future) { paused[i] = false })
			}
		})
	}
	for !x.Ended() && refused == nil {
		for i := range n {
			if !busy[i] && !paused[i] && x.Ready(i) {
				startTurn(i)
			}
		}
		if x.Ended() {
			break
		}
		sel.Select(ctx)
		if reason != "" {
			x.End(reason)
		}
	}
	cancelTurns()
	if refused != nil {
		return Outcome{}, temporal.NewNonRetryableApplicationError(activityError(refused), refusedType, nil)
	}

	// The presentation is never cut off by the session timeout, nor by a cancelled workflow
	// (an interrupted session presents the stored answer without a model call).
	pctx, _ := workflow.NewDisconnectedContext(actx)
	pres := t.Presentation
	if pres <= 0 {
		pres = 600 * time.Second
	}
	pctx = workflow.WithStartToCloseTimeout(pctx, pres+time.Minute)
	res := x.Present(context.Background(), func(_ context.Context, i int, system, user string) (string, string, error) {
		var r PresentResult
		err := workflow.ExecuteActivity(pctx, PresentActivity, PresentInput{Session: in, WorkflowID: wid, Ops: x.Ops(), Agent: i, System: system, User: user}).Get(pctx, &r)
		if err != nil {
			return "", "", errors.New("the final presentation could not run on any worker: " + activityError(err))
		}
		forward(r.Events)
		x.Account(i, r.Usage, r.Cost)
		if r.Err != "" {
			return "", "", errors.New(r.Err)
		}
		return r.Text, r.Truncated, nil
	})
	out := Outcome{Status: res.Status, ExitCode: res.ExitCode, EndReason: res.EndReason, Winner: res.Winner,
		FinalAnswer: res.FinalAnswer, TruncatedBy: res.TruncatedBy, Seconds: res.Duration.Seconds(), Usage: res.Usage, CostUSD: res.CostUSD,
		CostUnknown: res.CostUnknown}
	if res.Err != nil {
		out.Err = res.Err.Error()
	}
	return out, nil
}

// page is the events from index from on, within the page bounds.
func page(log []event.Event, from int, ended bool) Page {
	if from < 0 || from > len(log) {
		from = len(log)
	}
	size := 0
	end := from
	for end < len(log) && end-from < maxPageEvents {
		size += approxSize(log[end])
		if size > maxPageBytes && end > from {
			break
		}
		end++
	}
	return Page{Events: log[from:end], Ended: ended && end == len(log)}
}

// approxSize estimates an event's encoded size from its longest parts: deltas and contents.
func approxSize(e event.Event) int {
	switch p := e.Payload.(type) {
	case event.TextDelta:
		return len(p.Text) + 100
	case event.ReasoningDelta:
		return len(p.Text) + 100
	case event.ModelCalled:
		n := len(p.System) + 200
		for _, m := range p.Messages {
			n += len(m.Content) + 100
			for _, c := range m.ToolCalls {
				n += len(c.Arguments) + 100
			}
		}
		return n
	case event.AnswerSubmitted:
		return len(p.Content) + 200
	case event.FinalAnswer:
		return len(p.Content) + 200
	case event.ToolResult:
		return len(p.Content) + 200
	}
	return 300
}

// engineOptions are the coordinator's options for a session: the agents as the config names
// them, without providers (those live on the workers).
func engineOptions(in Session, cfg *config.Config) engine.Options {
	agents := make([]engine.Agent, len(cfg.Agents))
	for i, a := range cfg.Agents {
		agents[i] = engine.Agent{ID: a.ID, Backend: a.Backend.Type, Model: a.Backend.Model, System: a.SystemMessage,
			Params: a.Backend.Params, VotingSensitivity: a.VotingSensitivity, BaseURL: a.Backend.BaseURL,
			Unpriced: !usage.Known(a.Backend.Type, a.Backend.Model)}
	}
	return engine.Options{Question: in.Question, History: in.History, Turn: in.Turn, SessionID: in.SessionID, LogDir: in.LogDir,
		Agents: agents, Orchestrator: cfg.Orchestrator, Timeouts: cfg.Timeouts}
}

func activityError(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return fmt.Sprintf("timed out (%s) %d times", te.TimeoutType(), maxAttempts)
	}
	return err.Error()
}

// isRefusal reports whether a worker refused the session (refusedType).
func isRefusal(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == refusedType
}

func isNonRetryable(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.NonRetryable()
}
