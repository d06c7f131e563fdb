package temporalrun

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"massgen/internal/engine"
)

// A session's workflow history grows with every batch and turn; Temporal refuses a history
// past about 50,000 events. Before that (when Temporal suggests it, or past
// Session.HistoryLimit) the session stops starting turns, lets the running ones end, and
// continues as a new run of the same workflow ID, carrying what it needs: the coordinator's
// state, the agents' conversations, and its place in the events, so that the caller's events
// query goes on where it was (Page.Continued sends it to the new run).

// Carry is what a run hands the run that continues it.
type Carry struct {
	// Base is the events query's index of the new run's first event; Seq the last event's
	// number.
	Base int   `json:"base"`
	Seq  int64 `json:"seq"`
	// Coord is the coordinator between turns; Convs and Rounds each agent's conversation
	// and turns so far.
	Coord  engine.CoordinatorState `json:"coord"`
	Convs  []engine.Conversation   `json:"convs"`
	Rounds []int                   `json:"rounds"`
	// Turns counts the activities started, so that keys stay unique.
	Turns int `json:"turns"`
	// Deadline is when coordination times out.
	Deadline time.Time `json:"deadline"`
	// Runs counts the runs before the new one.
	Runs int `json:"runs"`
	// Queue is the task queue of the worker holding the session (holder.go), if one does.
	Queue string `json:"queue,omitempty"`
}

// minHistoryLimit keeps a run long enough to start its turns: a run continues as new only
// after the turns it started have ended.
const minHistoryLimit = 20

// tooLong reports whether the run should continue as new.
func (w *run) tooLong() bool {
	info := workflow.GetInfo(w.ctx)
	limit := w.in.HistoryLimit
	return info.GetContinueAsNewSuggested() || limit > 0 && info.GetCurrentHistoryLength() >= max(limit, minHistoryLimit)
}

// continueAsNew ends the run, between turns, with the error that starts the next one.
func (w *run) continueAsNew() error {
	next := w.in
	runs := 0
	if w.in.Carry != nil {
		runs = w.in.Carry.Runs
	}
	next.Carry = &Carry{Base: w.base + len(w.tail), Seq: w.seq, Coord: w.x.State(), Convs: w.convs, Rounds: w.rounds,
		Turns: w.nturns, Deadline: w.deadline, Runs: runs + 1, Queue: w.queue}
	w.moved = true
	return workflow.NewContinueAsNewError(w.ctx, WorkflowName, next)
}
