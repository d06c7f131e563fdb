package engine

import (
	"context"
	"fmt"
	"slices"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// Orchestration restarts for a driver that runs the model calls elsewhere: the
// post-evaluation is a one-off step on a replica (RunEvaluation) whose decision the
// coordinator applies as Run does (restart.go evaluate); a restart is an op (OpRestart), so
// that every later replica, and a coordinator resumed from its state, rebuilds the new
// attempt's state (fresh coordination, what the turn decided and spent kept) from the ops.

// OpRestart starts the attempt Op.Restart says, after the previous attempt's answer
// (Op.Restart.Agent's, Op.Restart.PreviousAnswer, cut off by Op.Reason when it was).
const OpRestart = "restart"

// Evaluated is what a post-evaluation decided, as it travels between processes: a restart
// with its reason and instructions, or the answer accepted (Why says why when the model did
// not decide).
type Evaluated struct {
	Restart      bool   `json:"restart,omitempty"`
	Reason       string `json:"reason,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	Why          string `json:"why,omitempty"`
}

func evaluated(ev coord.Evaluation, why string) Evaluated {
	if ev.Verdict != coord.Restart {
		return Evaluated{Why: why}
	}
	return Evaluated{Restart: true, Reason: ev.Reason, Instructions: ev.Instructions}
}

func (e Evaluated) evaluation() (coord.Evaluation, string) {
	if !e.Restart {
		return coord.Evaluation{Verdict: coord.Submitted}, e.Why
	}
	return coord.Evaluation{Verdict: coord.Restart, Reason: e.Reason, Instructions: e.Instructions}, ""
}

// EvaluateFunc makes the post-evaluation of answer with agent i's model and tools elsewhere
// (RunEvaluation); a call that could not run accepts the answer, saying why.
type EvaluateFunc func(ctx context.Context, i int, answer string) Evaluated

// EvaluateOn has Present make the post-evaluation with f, for a session whose providers are
// elsewhere.
func (x *Coordinator) EvaluateOn(f EvaluateFunc) { x.s.remote.evaluate = f }

// RunEvaluation makes agent i's post-evaluation of answer for the session ops rebuild,
// publishing on o.Bus what Run publishes for its calls, and returns what it decided and what
// it spent.
func RunEvaluation(ctx context.Context, o Options, ops []Op, i int, answer string) (Evaluated, provider.Usage, float64, error) {
	s := replica(o, ops)
	if i < 0 || i >= len(s.agents) {
		return Evaluated{}, provider.Usage{}, 0, fmt.Errorf("agent %d: the session has %d agents", i, len(s.agents))
	}
	s.presenting.Store(true) // as in Run: the check follows the presentation
	startCost, startUsage := s.cost, s.usage
	e := evaluated(s.postEvaluation(ctx, i, answer))
	s.awaitStragglers()
	return e, subUsage(s.usage, startUsage), s.cost - startCost, nil
}

// Restarting reports whether the last Present started a new attempt instead of ending the
// session: the driver coordinates the attempt from fresh conversations and presents again.
func (x *Coordinator) Restarting() bool { return x.restarting }

// Attempt is the attempt the coordinator runs, from 1.
func (x *Coordinator) Attempt() int { return x.s.attempt }

// restart moves the coordinator to next, the attempt the post-evaluation of res asked for.
func (x *Coordinator) restart(next *session, res Result) {
	x.ops = append(x.ops, Op{Kind: OpRestart, Restart: next.restart, Reason: res.TruncatedBy})
	x.s = next
	x.restarting = true
	clear(x.waiting)
	if next.o.Orchestrator.SkipCoordinationRounds {
		x.End(event.EndSkipped)
	} else if next.overBudget {
		x.End(event.EndBudget)
	}
}

// previous is the answer the attempt before this one ended with, for an attempt that
// produces none (keepPrevious); false in the first attempt.
func (x *Coordinator) previous() (Result, bool) {
	for _, op := range slices.Backward(x.ops) {
		if op.Kind == OpRestart && op.Restart != nil {
			return Result{Winner: op.Restart.Agent, FinalAnswer: op.Restart.PreviousAnswer, TruncatedBy: op.Reason}, true
		}
	}
	return Result{}, false
}
