package temporalrun

import (
	"cmp"
	"time"

	"go.temporal.io/sdk/workflow"

	"massgen/internal/engine"
)

// Orchestration restarts (coordination.max_orchestration_restarts): after an attempt's final
// presentation the presenter checks the answer on a worker (StepEvaluate, on the holder for a
// held session, where its tools are); when it asks for a restart the coordinator is in the
// next attempt (its ops say so, for every later replica and for a run that continues as new)
// and the workflow coordinates again from fresh conversations, with the orchestrator timeout
// anew, as a local run's attempts each have it.

// evaluate makes agent i's post-evaluation of answer on a worker. A check no worker could
// make accepts the answer, saying why, as a failed call does locally.
func (w *run) evaluate(pctx workflow.Context, i int, answer string) engine.Evaluated {
	r, err := w.oneOff(pctx, i, PresentInput{Step: StepEvaluate, User: answer})
	switch {
	case err != nil:
		return engine.Evaluated{Why: "the evaluation could not run on any worker: " + err.Error()}
	case r.Evaluated == nil:
		return engine.Evaluated{Why: "the evaluation failed: " + cmp.Or(r.Err, "the worker sent no decision")}
	}
	return *r.Evaluated
}

// newAttempt readies the run for the attempt the coordinator has moved to: every agent starts
// from an empty conversation at round 0, and coordination times out limit from now.
func (w *run) newAttempt(limit time.Duration) {
	n := len(w.convs)
	w.convs, w.rounds = make([]engine.Conversation, n), make([]int, n)
	w.busy, w.paused, w.running = make([]bool, n), make([]bool, n), make([]*liveTurn, n)
	w.draining = false
	w.deadline = workflow.Now(w.ctx).Add(limit)
}
