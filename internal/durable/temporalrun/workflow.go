// Package durable runs sessions as Temporal workflows, so that any number of workers on any
// number of machines share them and a worker that dies loses nothing but the turns it was in
// the middle of, which another worker runs again.
//
// The workflow drives the engine's coordination (engine.Coordinator, over the pure state
// machine of internal/coord) in deterministic workflow code; each agent turn and the final
// presentation is an activity, run by the engine's own code against a replica of the state.
// A turn is one activity, not each model call: within a turn the engine decides what to send
// next from what the model streamed (enforcement retries, tool rounds, the round clock,
// output caps), and splitting it would copy that logic into the workflow.
//
// A running turn sends its events to the workflow as they happen, in batches (signals, see
// live.go), and its outcome with the last batch: the workflow shows them at once as previews,
// and logs them when the turn has ended, so that the attempt of a turn whose worker died is
// shown while it ran and never logged, and the call that made a turn's answer or vote is not
// bought again once its outcome is in the workflow. Every event the session makes is kept in
// the workflow, in order, and read by the process that started the session through a query,
// which publishes it on its own bus: its live view, events.jsonl, status.json and final/ are
// those of a local run. A session whose history grows long continues as a new run between
// turns, carrying the coordinator's state and its place in the events (carry.go).
package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/taskplan"
	"massgen/internal/usage"
)

// Names registered with Temporal. Changing one strands the sessions that run under it.
const (
	WorkflowName    = "massgen.Session"
	TurnActivity    = "massgen.Turn"
	PresentActivity = "massgen.Present"
	QueryEvents     = "massgen.events"
	// QueryDone answers whether a turn (by its key) has ended: a retried attempt asks first.
	QueryDone = "massgen.done"
	// SignalLive carries a running turn's events (a Batch).
	SignalLive = "massgen.live"
	// UpdateSteer steers the running session (a Steer).
	UpdateSteer = "massgen.steer"
)

// DefaultHeartbeat is how long a worker may go silent before its activity is run again on
// another worker: a killed worker's turns move on within about this (heartbeats go every
// quarter of it, and cost no history).
const DefaultHeartbeat = 5 * time.Second

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
	// Live is how often a running turn sends its events; 0 means DefaultLive.
	Live time.Duration `json:"live,omitempty"`
	// HistoryLimit continues the session as a new run once its history holds this many
	// events; 0 leaves it to Temporal's suggestion.
	HistoryLimit int `json:"history_limit,omitempty"`
	// Asks: the starter takes a person's answers to permission asks (asks.go); without it a
	// worker's gate follows automation_default at once.
	Asks bool `json:"asks,omitempty"`
	// Carry is set when this run continues an earlier one of the session.
	Carry *Carry `json:"carry,omitempty"`
	// Previous: the previous turn's winner workspace is in the store (StoreKey(workflow ID,
	// "previous")), and the workspaces start from it.
	Previous bool `json:"previous,omitempty"`
	// Skills: the starter's skills folder (use_skills) is in the store (StoreKey(workflow ID,
	// "skills")), and the agents' skills are those.
	Skills bool `json:"skills,omitempty"`
	// Personas are an earlier turn's, which this one keeps
	// (persona_generator.persist_across_turns), written in turn PersonasTurn.
	Personas     []event.Persona `json:"personas,omitempty"`
	PersonasTurn int             `json:"personas_turn,omitempty"`
	// PlanSeed is an execution run's plan (--execute-plan), every agent's task plan at its
	// first turn (engine.Options.PlanSeed).
	PlanSeed []taskplan.Task `json:"plan_seed,omitempty"`
	// Memory is where the agents' persistent memories are kept (memory.go); nil without.
	Memory *app.MemoryScope `json:"memory,omitempty"`
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
	// Workspace is the store key of the winner's workspace, for a session with tools.
	Workspace string `json:"workspace,omitempty"`
}

// Page is what the events query answers: the session's events (previews included) from From
// on, whether the session has ended (its last event is SessionEnded), and whether this run
// continued as a new one, which holds the events after these.
type Page struct {
	Events    []event.Event `json:"events"`
	Ended     bool          `json:"ended"`
	Continued bool          `json:"continued,omitempty"`
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
	// Key names the turn in its run, for its batches and QueryDone.
	Key string `json:"key,omitempty"`
	// AttemptBase counts the times the workflow ran the turn before, each on a worker that
	// was lost with the session's workspaces (holder.go).
	AttemptBase int `json:"attempt_base,omitempty"`
}

// TurnResult is a turn activity's result. When the turn's outcome went to the workflow with
// its last batch (Streamed), it holds nothing else; otherwise Events are the attempt's
// events from From on (those before went as batches).
type TurnResult struct {
	Outcome  engine.TurnOutcome `json:"outcome"`
	Events   []event.Event      `json:"events"`
	Attempt  int                `json:"attempt,omitempty"`
	From     int                `json:"from,omitempty"`
	Streamed bool               `json:"streamed,omitempty"`
	// Done: an earlier attempt had already ended the turn; this one did nothing.
	Done bool `json:"done,omitempty"`
}

// SessionWorkflow runs one session. Its code must stay deterministic: time from workflow.Now,
// waiting through the selector, no goroutines, no I/O; the engine code it calls is the pure
// coordination.
func SessionWorkflow(ctx workflow.Context, in Session) (Outcome, error) {
	w := &run{ctx: ctx, in: in, turns: map[string]*liveTurn{}}
	now := func() time.Time { return workflow.Now(ctx) }
	w.bus = event.NewBus(now)
	if c := in.Carry; c != nil {
		w.base, w.seq, w.nturns = c.Base, c.Seq, c.Turns
		w.bus.ResumeAt(c.Seq)
	}
	w.bus.Subscribe(event.SinkFunc(func(e event.Event) {
		w.tail = append(w.tail, e)
		w.seq = e.Seq
		_, w.ended = e.Payload.(event.SessionEnded)
	}))
	err := workflow.SetQueryHandler(ctx, QueryEvents, func(from int) (Page, error) { return w.page(from), nil })
	if err == nil {
		err = workflow.SetQueryHandler(ctx, QueryDone, func(key string) (bool, error) {
			lt := w.turns[key]
			return lt != nil && lt.done, nil
		})
	}
	if err == nil {
		err = workflow.SetQueryHandler(ctx, QueryAnswers, func() ([]AskAnswer, error) { return w.answers, nil })
	}
	if err == nil {
		err = workflow.SetQueryHandler(ctx, QueryPeer, func(k int) ([]provider.Message, error) { return w.peer(k), nil })
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("queries: %w", err)
	}
	cfg, err := durable.DecodeConfig(in.Config)
	if err == nil {
		err = durable.Supported(cfg)
	}
	if err != nil {
		return Outcome{}, temporal.NewNonRetryableApplicationError(err.Error(), "unsupported", nil)
	}
	w.live = workflow.GetSignalChannel(ctx, SignalLive)
	w.wake = workflow.NewBufferedChannel(ctx, 1)

	o := engineOptions(in, cfg)
	o.Bus, o.Now = w.bus, now
	if w.machine = app.NeedsMachine(cfg); w.machine {
		o.Deliver = w.deliver
	}
	w.subagents = w.machine && cfg.Orchestrator.Subagents.Enabled && !cfg.Orchestrator.Subagents.NoBackground
	n := len(o.Agents)
	w.convs, w.begun, w.rounds = make([]engine.Conversation, n), make([]engine.Conversation, n), make([]int, n)
	w.busy, w.paused, w.running = make([]bool, n), make([]bool, n), make([]*liveTurn, n)
	t := o.Timeouts
	if t.Orchestrator <= 0 {
		t.Orchestrator = 1800 * time.Second
	}
	if c := in.Carry; c != nil {
		if w.x, err = engine.ResumeCoordinator(o, c.Coord); err == nil && (len(c.Convs) != n || len(c.Rounds) != n) {
			err = fmt.Errorf("the carried state is for %d agents, the session has %d", len(c.Convs), n)
		}
		if err != nil {
			return Outcome{}, temporal.NewNonRetryableApplicationError("continue the session: "+err.Error(), "carry", nil)
		}
		copy(w.convs, c.Convs)
		copy(w.rounds, c.Rounds)
		w.deadline = c.Deadline
	} else {
		w.x = engine.NewCoordinator(o)
		w.x.Start()
		w.deadline = now().Add(t.Orchestrator)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSteer, w.steer, workflow.UpdateHandlerOptions{Validator: w.validSteer}); err != nil {
		return Outcome{}, fmt.Errorf("steering: %w", err)
	}

	hb := in.Heartbeat
	if hb <= 0 {
		hb = DefaultHeartbeat
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// A turn lasts at most the session; the heartbeat finds a dead worker much sooner.
		StartToCloseTimeout: t.Orchestrator + time.Minute,
		HeartbeatTimeout:    hb,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: maxAttempts},
	})
	w.wid = workflow.GetInfo(ctx).WorkflowExecution.ID
	w.actx = actx
	if w.machine {
		if c := in.Carry; c != nil {
			w.queue = c.Queue
		}
		if w.queue == "" {
			if err := w.claim(); err != nil {
				return Outcome{}, err
			}
		}
	}
	if w.x.NeedsPrepare() {
		w.prepare(actx)
	}
	var res engine.Result
	for {
		// The orchestrator's subagents launched between turns run under the turns' context
		// (the presentation's launches under its own, presentAttempt).
		w.x.SubagentOn(func(_ context.Context, c engine.SubagentCall) engine.SubagentReply { return w.launch(w.turnCtx, c) })
		if out, done, err := w.coordinate(actx); done {
			if !w.moved { // a run that continues as new leaves the session where it is held
				_, _ = w.releaseHeld("")
			}
			return out, err
		}
		res = w.presentAttempt(actx, t)
		if !w.x.Restarting() {
			break
		}
		w.newAttempt(t.Orchestrator) // the presenter asked for a restart (restarts.go)
	}
	out := Outcome{Status: res.Status, ExitCode: res.ExitCode, EndReason: res.EndReason, Winner: res.Winner,
		FinalAnswer: res.FinalAnswer, TruncatedBy: res.TruncatedBy, Seconds: res.Duration.Seconds(), Usage: res.Usage, CostUSD: res.CostUSD,
		CostUnknown: res.CostUnknown}
	if res.Err != nil {
		out.Err = res.Err.Error()
	}
	// No final answer stood (Deliver did not run): the team stops; a holder that is gone
	// has nothing to stop, and its worker's sweep stops what a silent one still runs.
	_, _ = w.releaseHeld("")
	out.Workspace = w.workspace
	return out, nil
}

// run is one run of a session's workflow: the coordinator, the agents' turns and the events.
type run struct {
	ctx workflow.Context
	in  Session
	wid string
	x   *engine.Coordinator
	bus *event.Bus

	tail   []event.Event // this run's events and previews, in the order the query serves them
	base   int           // the query's index of tail[0]: entries of the runs before
	seq    int64         // the last event's number
	ended  bool          // the last event is SessionEnded
	moved  bool          // the run continued as a new one
	nturns int           // activities started, for their keys

	live     workflow.ReceiveChannel // SignalLive
	wake     workflow.Channel        // steering changed what the loop waits for
	sel      workflow.Selector
	turnCtx  workflow.Context     // the turns' and their pauses', cancelled when coordination ends
	turns    map[string]*liveTurn // by key, this run's turns and presentations
	running  []*liveTurn          // each agent's turn in progress
	convs    []engine.Conversation
	begun    []engine.Conversation // each agent's conversation as its running turn began
	rounds   []int
	busy     []bool
	paused   []bool
	deadline time.Time // coordination times out
	draining bool      // no new turns: the run continues as new once the running ones end

	// A session with tools is held by one worker (holder.go): machine is set, queue is that
	// worker's task queue, and epoch counts the claims this run made.
	answers   []AskAnswer // a person's answers to the workers' permission asks (asks.go)
	machine   bool
	queue     string
	epoch     int
	actx      workflow.Context // the activities' options, on the shared task queue
	released  bool             // the holder has stopped the team
	workspace string           // the store key of the winner's workspace
	subagents bool             // the holder runs the agents' background subagents (subagents.go)
}

// coordinate runs the agents' turns until coordination ends. done reports that the workflow
// returns (out, err) now: a worker refused the session, or the run continues as new.
func (w *run) coordinate(actx workflow.Context) (out Outcome, done bool, err error) {
	ctx, x := w.ctx, w.x
	turnCtx, cancelTurns := workflow.WithCancel(actx)
	defer cancelTurns()
	w.turnCtx = turnCtx
	w.sel = workflow.NewSelector(ctx)
	timeout := workflow.NewTimer(turnCtx, max(w.deadline.Sub(workflow.Now(ctx)), time.Millisecond))
	reason := ""
	var refused error // a worker refused the session: it ends without a result
	w.sel.AddFuture(timeout, func(f workflow.Future) {
		if f.Get(ctx, nil) == nil {
			reason = event.EndTimeout
		}
	})
	w.sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { reason = event.EndInterrupted })
	w.sel.AddReceive(w.live, func(c workflow.ReceiveChannel, _ bool) {
		var b Batch
		c.Receive(ctx, &b)
		w.onBatch(b)
	})
	w.sel.AddReceive(w.wake, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })

	for !x.Ended() && refused == nil {
		for i := range w.busy {
			if !w.draining && !w.busy[i] && !w.paused[i] && x.Ready(i) && w.beforeTurn(i) {
				w.startTurn(turnCtx, i, &refused)
			}
		}
		if x.Ended() {
			break
		}
		if !w.draining && w.tooLong() {
			w.draining = true
		}
		if w.draining && w.idle() {
			w.drainLive()
			return Outcome{}, true, w.continueAsNew()
		}
		w.sel.Select(ctx)
		if reason != "" {
			x.End(reason)
		}
	}
	cancelTurns()
	w.settleRunning()
	if refused != nil {
		return Outcome{}, true, temporal.NewNonRetryableApplicationError(activityError(refused), refusedType, nil)
	}
	return Outcome{}, false, nil
}

// startTurn starts agent i's next turn as an activity.
func (w *run) startTurn(turnCtx workflow.Context, i int, refused *error) {
	x := w.x
	w.rounds[i]++
	conv := x.BeginTurn(i, w.convs[i], w.rounds[i])
	w.begun[i] = conv // what the turn's first call sends, for side calls in its name (QueryPeer)
	w.busy[i] = true
	lt := w.newTurn(i)
	w.running[i] = lt
	tctx, cancel := workflow.WithCancel(turnCtx)
	lt.cancel = cancel
	w.execTurn(tctx, lt, TurnInput{Session: w.in, WorkflowID: w.wid, Ops: x.Ops(), Agent: i, Conversation: conv, Key: lt.key}, refused)
}

// execTurn runs the turn's activity, and again on another worker when the one holding the
// session was lost.
func (w *run) execTurn(tctx workflow.Context, lt *liveTurn, in TurnInput, refused *error) {
	ctx, x, i := w.ctx, w.x, lt.agent
	actx, epoch := w.onHolder(tctx, lt)
	in.AttemptBase = lt.tries - 1
	f := workflow.ExecuteActivity(actx, TurnActivity, in)
	w.sel.AddFuture(f, func(f workflow.Future) {
		// Batches that reached the workflow before the activity ended come first.
		w.drainLive()
		if lt.done {
			return
		}
		var r TurnResult
		if err := f.Get(ctx, &r); err != nil {
			if x.Ended() || temporal.IsCanceledError(err) {
				w.cancelled(lt)
				return
			}
			if isRefusal(err) {
				*refused = err
				w.busy[i] = false
				lt.done = true
				return
			}
			if w.again(lt, err) {
				if err = w.reclaim(epoch); err == nil {
					w.execTurn(tctx, lt, in, refused)
					return
				}
				if isRefusal(err) {
					*refused = err
					w.busy[i] = false
					lt.done = true
					return
				}
			}
			w.failed(lt, engine.TurnOutcome{Conversation: in.Conversation, Err: "the turn could not run on any worker: " + activityError(err), Fatal: isNonRetryable(err)})
			return
		}
		if r.Done {
			// An earlier attempt's outcome ended the turn, and was lost on the way: the
			// turn failed as a whole (this cannot happen while batches arrive in order).
			w.failed(lt, engine.TurnOutcome{Conversation: in.Conversation, Err: "the turn's outcome was lost"})
			return
		}
		w.received(lt, r.Attempt, r.From, r.Events, false)
		w.finishTurn(lt, r.Outcome, false)
	})
}

// afterTurn applies what a turn's outcome leaves to do: a paused agent after a failed turn.
func (w *run) afterTurn(i int, out engine.TurnOutcome) {
	x := w.x
	if out.Err != "" && !x.Dead(i) && !x.Ended() {
		w.paused[i] = true
		w.sel.AddFuture(workflow.NewTimer(w.turnCtx, x.RetryDelay(i)), func(workflow.Future) { w.paused[i] = false })
	}
}

// page is the events from the query's index from on, within the page bounds.
func (w *run) page(from int) Page {
	log := w.tail
	from -= w.base
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
	return Page{Events: log[from:end], Ended: w.ended && end == len(log), Continued: w.moved && end == len(log)}
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
			CustomEndpoint: app.CustomEndpoint(a.Backend), Subtask: a.Subtask,
			Unpriced: !usage.Known(a.Backend.Type, a.Backend.Model),
			// A coding-agent CLI's turns continue its conversation, as locally: each resumes
			// the CLI's own session on the holder instead of starting a new one.
			HoldsSession: config.BackendTypes[a.Backend.Type].Protocol == config.ProtocolCLI}
	}
	return engine.Options{Question: in.Question, History: in.History, Turn: in.Turn, SessionID: in.SessionID, LogDir: in.LogDir,
		Agents: agents, Orchestrator: cfg.Orchestrator, Timeouts: cfg.Timeouts, Personas: in.Personas, PersonasTurn: in.PersonasTurn,
		PlanSeed: in.PlanSeed, RemoteMemory: in.Memory != nil}
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
