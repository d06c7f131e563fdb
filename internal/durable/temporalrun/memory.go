package temporalrun

import (
	"context"

	"go.temporal.io/sdk/workflow"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
)

// Persistent memory on Temporal: the store is on the workers (the default ~/.massgen/memory
// of each, or persistent_memory.qdrant.path: a folder every worker shares when they are on
// several machines). Recall is taken with the steps before coordination (StepPrepare), and
// what it found travels in engine.Prepared; remembering is a one-off step after the final
// answer (StepRemember), on the worker holding the session when one does, before it is
// released. Both open the store with the worker's embedding keys, sent only where its
// allowlist lets them go; what fails is reported and the session goes on, as locally.

// memory is the session's memory on this worker for one step (its config cfg), publishing
// on o.Bus.
func (a *Activities) memory(in Session, cfg *config.Config, o engine.Options) *app.WorkerMemory {
	if in.Memory == nil {
		return &app.WorkerMemory{}
	}
	return app.MemoryOnWorker(cfg, o.Agents, *in.Memory, in.Turn, in.Question, a.getenv(), a.Allow.Check, o.Bus)
}

// remember has the agents remember the session, Agent having won with the final answer
// in.User, from the answers the ops hold.
func (a *Activities) remember(ctx context.Context, in PresentInput, cfg *config.Config, o engine.Options) PresentResult {
	res := engine.Result{Winner: o.Agents[in.Agent].ID, FinalAnswer: in.User}
	o.Remember = a.memory(in.Session, cfg, o).Remember(engine.LatestAnswers(o, in.Ops))
	u, cost := engine.RunRemember(ctx, o, in.Ops, res)
	return PresentResult{Usage: u, Cost: cost}
}

// remember is the coordinator's RememberFunc: the step on a worker, its spending counted
// where it runs (finishPresent). An interrupted session remembers nothing, as locally.
func (w *run) remember(pctx workflow.Context, winner int, r engine.Result) {
	if w.ctx.Err() != nil {
		return
	}
	if _, err := w.oneOff(pctx, winner, PresentInput{Step: StepRemember, User: r.FinalAnswer}); err != nil {
		w.bus.Publish(event.MemoryTrouble{Stage: "remember", Message: "no worker could take the step: " + err.Error() + "; nothing of this turn was stored"})
	}
}
