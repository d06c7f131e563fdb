package temporalrun

// The session's one-off steps: everything a worker runs for the session besides its agents'
// turns (the presentation, the steps before coordination, gathering decomposition's parts,
// the verifiers' checks, the post-evaluation, the orchestrator's subagents, remembering),
// each through the presentation activity (PresentInput.Step) on the holder when the session
// is held, streamed as a turn is and run again on a new holder when one is lost.

import (
	"cmp"
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// PresentInput is the presentation activity's input. Step makes it one of the session's
// other one-off steps instead: StepPrepare (engine.RunPrepare, the first agent's model making
// the calls), StepGather (engine.RunGather into Agent's workspace), StepVerify
// (engine.RunVerify: a verifier's check, User, with Agent's model) or StepRemember
// (engine.RunRemember: Agent won with the final answer User).
type PresentInput struct {
	Session      Session     `json:"session"`
	WorkflowID   string      `json:"workflow_id"`
	Ops          []engine.Op `json:"ops"`
	Agent        int         `json:"agent"`
	System, User string
	Key          string `json:"key,omitempty"`
	AttemptBase  int    `json:"attempt_base,omitempty"`
	Step         string `json:"step,omitempty"`
	// Subagent is the orchestrator's subagent StepSubagent launches.
	Subagent *engine.SubagentCall `json:"subagent,omitempty"`
}

// The one-off steps besides the presentation (PresentInput.Step).
const (
	StepPrepare  = "prepare"
	StepGather   = "gather"
	StepVerify   = "verify"
	StepRemember = "remember"
	// StepEvaluate: engine.RunEvaluation, Agent's post-evaluation of the final answer, User.
	StepEvaluate = "evaluate"
)

// PresentResult is the presentation activity's result; Attempt, From, Streamed and Done as
// in TurnResult. Prepared is what the steps before coordination decided (StepPrepare);
// Gathered what gathering the parts did (StepGather; nil when the presenter has no
// workspace).
type PresentResult struct {
	Prepared  *engine.Prepared       `json:"prepared,omitempty"`
	Gathered  *event.PartsIntegrated `json:"gathered,omitempty"`
	Evaluated *engine.Evaluated      `json:"evaluated,omitempty"` // StepEvaluate
	Text      string                 `json:"text"`
	Truncated string                 `json:"truncated,omitempty"`
	Err       string                 `json:"err,omitempty"`
	Usage     provider.Usage         `json:"usage,omitzero"`
	Cost      float64                `json:"cost,omitempty"`
	Events    []event.Event          `json:"events"`
	Attempt   int                    `json:"attempt,omitempty"`
	From      int                    `json:"from,omitempty"`
	Streamed  bool                   `json:"streamed,omitempty"`
	Done      bool                   `json:"done,omitempty"`
	// Subagent is StepSubagent's reply.
	Subagent *engine.SubagentReply `json:"subagent,omitempty"`
}

// presentAttempt presents what an attempt's coordination ended with, making the one-off
// steps (the verifiers' checks, gathering parts, the post-evaluation) on workers.
func (w *run) presentAttempt(actx workflow.Context, t config.Timeouts) engine.Result {
	w.finishSubagents()

	// The presentation is never cut off by the session timeout, nor by a cancelled workflow
	// (an interrupted session presents the stored answer without a model call).
	pctx, _ := workflow.NewDisconnectedContext(actx)
	pres := t.Presentation
	if pres <= 0 {
		pres = 600 * time.Second
	}
	pctx = workflow.WithStartToCloseTimeout(pctx, pres+time.Minute)
	if w.machine {
		w.x.GatherOn(func(_ context.Context, presenter int) (event.PartsIntegrated, bool) { return w.gather(pctx, presenter) })
	}
	w.x.SubagentOn(func(_ context.Context, c engine.SubagentCall) engine.SubagentReply { return w.launch(pctx, c) })
	if w.in.Memory != nil {
		w.x.RememberOn(func(_ context.Context, i int, r engine.Result) { w.remember(pctx, i, r) })
	}
	w.x.VerifyOn(func(_ context.Context, i int, user string) (string, error) {
		r, err := w.oneOff(pctx, i, PresentInput{Step: StepVerify, User: user})
		switch {
		case err != nil:
			return "", errors.New("the check could not run on any worker: " + err.Error())
		case r.Err != "":
			return "", errors.New(r.Err)
		}
		return r.Text, nil
	})
	w.x.EvaluateOn(func(_ context.Context, i int, answer string) engine.Evaluated { return w.evaluate(pctx, i, answer) })
	return w.x.Present(context.Background(), func(_ context.Context, i int, system, user string) (string, string, error) {
		return w.present(pctx, i, system, user)
	})
}

// present runs the final presentation's model calls on a worker, showing its text as it
// streams.
func (w *run) present(pctx workflow.Context, i int, system, user string) (string, string, error) {
	r, err := w.oneOff(pctx, i, PresentInput{System: system, User: user})
	if err != nil {
		return "", "", errors.New("the final presentation could not run on any worker: " + err.Error())
	}
	if r.Err != "" {
		return "", "", errors.New(r.Err)
	}
	return r.Text, r.Truncated, nil
}

// prepare takes the steps before coordination on a worker (on the holder, whose agents have
// their tools: planning mode judges the MCP tools) and applies what they decided. Steps that
// could not run fall back as a failed call does; an interrupted session takes none.
func (w *run) prepare(actx workflow.Context) {
	r, err := w.oneOff(actx, 0, PresentInput{Step: StepPrepare})
	switch {
	case w.ctx.Err() != nil:
		w.x.End(event.EndInterrupted)
	case err != nil:
		w.x.Prepare(w.x.PrepareFailed("no worker could take the step: " + err.Error()))
	case r.Prepared == nil:
		w.x.Prepare(w.x.PrepareFailed(cmp.Or(r.Err, "the worker sent no decision")))
	default:
		w.x.Prepare(*r.Prepared)
	}
}

// gather gathers decomposition mode's parts into the presenter's workspace on the worker that
// holds the session. Parts that could not be gathered are reported, and the presentation
// goes on.
func (w *run) gather(pctx workflow.Context, presenter int) (event.PartsIntegrated, bool) {
	r, err := w.oneOff(pctx, presenter, PresentInput{Step: StepGather})
	switch {
	case err != nil:
		return event.PartsIntegrated{Error: "the parts could not be gathered on any worker: " + err.Error()}, true
	case r.Gathered == nil:
		return event.PartsIntegrated{}, false
	}
	return *r.Gathered, true
}

// oneOff runs one presentation activity (a presentation, or the steps before coordination)
// for agent i on a worker, showing its events as they stream, and again on another worker
// when the one holding the session was lost. It returns the activity's result, or why no
// worker could run it.
func (w *run) oneOff(actx workflow.Context, i int, in PresentInput) (PresentResult, error) {
	ctx := w.ctx
	lt := w.newTurn(i)
	lt.present = true
	for !lt.done {
		hctx, epoch := w.onHolder(actx, lt)
		in.Session, in.WorkflowID, in.Ops, in.Agent, in.Key, in.AttemptBase = w.in, w.wid, w.x.Ops(), i, lt.key, lt.tries-1
		f := workflow.ExecuteActivity(hctx, PresentActivity, in)
		for !lt.done && !f.IsReady() {
			sel := workflow.NewSelector(ctx)
			sel.AddFuture(f, func(workflow.Future) {})
			sel.AddReceive(w.live, func(c workflow.ReceiveChannel, _ bool) {
				var b Batch
				c.Receive(ctx, &b)
				w.onBatch(b)
			})
			sel.Select(ctx)
		}
		w.drainLive()
		if lt.done {
			break
		}
		var r PresentResult
		if err := f.Get(hctx, &r); err != nil {
			if !temporal.IsCanceledError(err) && w.again(lt, err) && w.reclaim(epoch) == nil {
				continue
			}
			w.commit(lt, true) // what its last attempt did stands
			lt.done = true
			return PresentResult{}, errors.New(activityError(err))
		}
		w.received(lt, r.Attempt, r.From, r.Events, false)
		w.finishPresent(lt, r)
	}
	return lt.presented, nil
}
