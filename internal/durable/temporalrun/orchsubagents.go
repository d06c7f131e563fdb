package temporalrun

import (
	"cmp"
	"context"

	"go.temporal.io/sdk/workflow"

	"massgen/internal/engine"
)

// The orchestrator's own subagents on Temporal: criteria_mode: bootstrap_subagent's critic
// and the round evaluator, before an agent's round, and verifiers with subagent: true, while
// the winner is presented. A session with them is held (app.NeedsMachine): the coordinator in
// the workflow decides when one runs and what its reply changes (engine.Coordinator.
// BeforeTurn, SubagentOn), and each runs as a one-off step (StepSubagent) on the holder,
// whose team's subagent manager runs it as a local session there with the worker's keys, its
// log folder carried to the starter with the agents' subagents' (subagents.go). Its events
// stream as a presentation's do; what it spent comes back in its reply, which the coordinator
// counts once. The workflow waits for it, as an agent waits for its round's critic or
// evaluator locally; the other turns' outcomes are taken in when it ends.

// StepSubagent launches one of the orchestrator's subagents (PresentInput.Subagent).
const StepSubagent = "subagent"

// beforeTurn runs what comes before agent i's round (the critic, the round evaluator), and
// reports whether the round can begin.
func (w *run) beforeTurn(i int) bool { return w.x.BeforeTurn(context.Background(), i) }

// launch runs the orchestrator's subagent c on the worker that holds the session, and again
// on another worker when that one is lost; a subagent that could not run at all is a reply
// with the reason, on which the coordinator goes on as after a failed one.
func (w *run) launch(ctx workflow.Context, c engine.SubagentCall) engine.SubagentReply {
	r, err := w.oneOff(ctx, max(w.x.AgentIndex(c.Agent), 0), PresentInput{Step: StepSubagent, Subagent: &c})
	switch {
	case err != nil:
		return engine.SubagentReply{ID: c.ID, Error: "the subagent could not run on any worker: " + err.Error()}
	case r.Subagent == nil:
		return engine.SubagentReply{ID: c.ID, Error: cmp.Or(r.Err, "the worker sent no reply")}
	}
	return *r.Subagent
}

// launchSubagent is StepSubagent on the worker: the held team's manager runs c.
func launchSubagent(ctx context.Context, held *heldSession, c *engine.SubagentCall) PresentResult {
	switch {
	case c == nil:
		return PresentResult{Err: "no subagent was named"}
	case held == nil:
		return PresentResult{Err: "the session is not held on this worker: its subagents run where its team is"}
	}
	rep := held.team.LaunchSubagent(ctx, *c)
	return PresentResult{Subagent: &rep}
}
