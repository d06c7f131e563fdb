package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// Orchestration restarts (coordination.max_orchestration_restarts, MassGen's post_evaluate_answer
// and handle_restart): after the final answer the presenter checks it with submit or
// restart_orchestration. A restart runs the whole turn again as a new attempt: a new session
// state (answers, votes, conversations) whose agents read the reason, the instructions and the
// previous final answer first. What the turn decided once (planning, personas, paraphrases,
// subtasks) and what it spent carry over, so max_cost_usd covers every attempt. The last
// attempt is not evaluated; its answer stands.

// restartInfo is why the current attempt began, nil in the first.
type restartInfo = event.OrchestrationRestarted

// maxAttempts is how many attempts the turn may run.
func (s *session) maxAttempts() int { return coord.Attempts(s.o.Orchestrator.MaxOrchestrationRestarts) }

// afterPresent ends the turn after an attempt's final presentation: the post-evaluation, and
// on a restart the next attempts, each coordinated and presented in turn.
func (s *session) afterPresent(ctx context.Context, start time.Time, res Result) Result {
	for {
		next := s.evaluate(ctx, res)
		s.awaitStragglers()
		if next == nil {
			res = s.deliver(ctx, res)
			s.remember(ctx, res)
			return s.finish(start, res)
		}
		prev := res
		s = next
		if s.o.Orchestrator.SkipCoordinationRounds {
			s.mu.Lock()
			s.endLocked(event.EndSkipped)
			s.mu.Unlock()
		} else {
			s.mu.Lock()
			s.endIfOverBudgetLocked()
			s.mu.Unlock()
			s.coordinate(ctx)
		}
		s.presenting.Store(true)
		res = s.keepPrevious(s.present(ctx), prev)
	}
}

// evaluate runs the post-evaluation of res when the turn has attempts left, and returns the
// next attempt's session when the presenter asked for a restart, nil when res stands.
func (s *session) evaluate(ctx context.Context, res Result) *session {
	if s.maxAttempts() <= 1 || s.attempt >= s.maxAttempts() || res.Winner == "" || res.ExitCode != 0 || ctx.Err() != nil {
		// MassGen evaluates neither the last attempt nor a timed-out one.
		return nil
	}
	i := s.index(res.Winner)
	if i < 0 {
		return nil
	}
	accept := func(why string) *session {
		s.publish(event.AnswerSubmittedFinal{Agent: res.Winner, Attempt: s.attempt, Auto: why != "", Why: why})
		return nil
	}
	if s.spent() {
		return accept("max_cost_usd is spent, so the answer is not evaluated")
	}
	answer, debug := res.FinalAnswer, false
	if d := s.o.Orchestrator.DebugFinalAnswer; d != "" && s.attempt == 1 {
		answer, debug = d, true
	}
	s.publish(event.PostEvaluationStarted{Agent: res.Winner, Attempt: s.attempt, MaxAttempts: s.maxAttempts(), Debug: debug})
	var ev coord.Evaluation
	var why string
	if s.remote.evaluate != nil {
		// On Temporal the presenter's model and tools are on a worker (remote_restart.go).
		ev, why = s.remote.evaluate(ctx, i, answer).evaluation()
	} else {
		ev, why = s.postEvaluation(ctx, i, answer)
	}
	switch {
	case ev.Verdict != coord.Restart:
		return accept(why)
	case ctx.Err() != nil:
		return accept("interrupted before the restart")
	case s.spent():
		return accept("restart_orchestration was called, but max_cost_usd is spent")
	}
	r := event.OrchestrationRestarted{Agent: res.Winner, Attempt: s.attempt + 1, MaxAttempts: s.maxAttempts(),
		Reason: ev.Reason, Instructions: ev.Instructions, PreviousAnswer: res.FinalAnswer}
	s.publish(r)
	return s.nextAttempt(&r)
}

// spent reports whether max_cost_usd is spent.
func (s *session) spent() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overBudget
}

// nextAttempt is the session of the attempt r starts: new coordination state, with what the
// turn decided and spent so far.
func (s *session) nextAttempt(r *restartInfo) *session {
	n := s.attemptAfter(r)
	for _, a := range n.agents {
		if w, ok := a.Workspace.(attemptWorkspace); ok {
			w.NewAttempt(r.Attempt)
		}
	}
	return n
}

// attemptAfter is the session state of the attempt r starts, without telling the workspaces:
// a replica rebuilding it from the ops (OpRestart) tells no one.
func (s *session) attemptAfter(r *restartInfo) *session {
	n := newSession(s.o)
	n.replaying = s.replaying
	n.agents = s.agents // Options.Recall's additions stay
	n.attempt, n.restart = r.Attempt, r
	s.mu.Lock()
	n.cost, n.usage, n.unpricedUsed, n.overBudget = s.cost, s.usage, s.unpricedUsed, s.overBudget
	s.mu.Unlock()
	n.plan, n.personas, n.variants, n.subtasks = s.plan, s.personas, s.variants, s.subtasks
	n.remote = s.remote
	n.hostedSeq.Store(s.hostedSeq.Load())
	if st := s.o.Steering; st != nil {
		st.attach(n)
	}
	return n
}

// attemptWorkspace is a Workspace that keeps something per attempt (the log's copies of its
// snapshots): NewAttempt(k) is called when attempt k starts, k from 2.
type attemptWorkspace interface{ NewAttempt(k int) }

// keepPrevious keeps the previous attempt's final answer when this attempt produced none (its
// agents all failed, or the budget ran out before an answer): the answer the team had is
// better than none, though its evaluation found it short.
func (s *session) keepPrevious(res, prev Result) Result {
	if res.Winner != "" || prev.Winner == "" {
		return res
	}
	s.publish(event.FinalAnswer{Agent: prev.Winner, Label: coord.Label(s.index(prev.Winner)) + ".final", Content: prev.FinalAnswer, Mode: "verbatim", Fallback: true,
		Truncated: prev.TruncatedBy != "", TruncatedBy: prev.TruncatedBy})
	res.Winner, res.FinalAnswer, res.TruncatedBy = prev.Winner, prev.FinalAnswer, prev.TruncatedBy
	res.Status, res.ExitCode = outcome(res.EndReason)
	res.Err = errors.Join(s.errorFor(res.EndReason),
		fmt.Errorf("attempt %d produced no answer, so attempt %d's final answer stands", s.attempt, s.attempt-1))
	return res
}

// restartBlock is what every agent's first message starts with in a restarted attempt.
func (s *session) restartBlock() string {
	r := s.restart
	if r == nil {
		return ""
	}
	return prompt.RestartContext(r.Attempt, r.MaxAttempts, r.Reason, r.Instructions, r.PreviousAnswer) + "\n\n"
}

// postEvaluation is agent i's check of answer: its own tools in a loop until it calls submit or
// restart_orchestration. Bounded for a model that does not follow it: a response without any
// call accepts the answer (as MassGen does), wrong calls are refused once and accept it the
// second time, and so do an error, a cut-off response and maxToolRounds rounds of its own
// tools; why says which, "" when the model decided.
func (s *session) postEvaluation(ctx context.Context, i int, answer string) (ev coord.Evaluation, why string) {
	w := s.agents[i]
	system := prompt.PostEvaluationSystem(w.System)
	msgs := []provider.Message{{Role: provider.RoleUser, Content: prompt.PostEvaluationUser(s.o.Question, s.o.History, answer)}}
	tools := append(w.Tools.Specs(), prompt.PostEvaluationTools()...)
	sent, missed := 0, false
	for round := 0; ; round++ {
		req := provider.Request{Model: w.Model, System: system, Stage: provider.StagePostEvaluation, Params: w.Params,
			Messages: msgs, Tools: tools, CacheKey: s.cacheKey(w.Model)}
		mc := event.ModelCalled{Agent: w.ID, Stage: provider.StagePostEvaluation, Attempt: round + 1, Fresh: sent == 0, Messages: msgs[sent:]}
		if mc.Fresh {
			mc.System = system
		}
		s.publish(mc)
		sent = len(msgs)
		out, err := s.call(ctx, i, req, true, time.Time{})
		if err != nil {
			s.publish(event.AgentError{Agent: w.ID, Message: fmt.Sprintf("post-evaluation failed, so the final answer stands: %v", err),
				Budget: s.o.Orchestrator.FailureBudget, Timeout: errors.Is(err, errCallTimeout)})
			return coord.Evaluation{}, "the evaluation failed"
		}
		calls := make([]coord.Call, len(out.calls))
		var own, other []provider.ToolCall
		for k, tc := range out.calls {
			calls[k] = coord.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
			switch _, mine := w.Tools.Find(tc.Name); {
			case mine:
				own = append(own, tc)
			case !coord.IsPostEvaluation(tc.Name):
				other = append(other, tc)
			}
		}
		ev = coord.Evaluate(calls)
		switch {
		case out.incomplete():
			return coord.Evaluation{}, "the evaluation was cut off before it decided"
		case ev.Verdict == coord.Submitted || ev.Verdict == coord.Restart:
			return ev, ""
		case len(out.calls) == 0 && out.dropped == nil:
			return coord.Evaluation{}, "the evaluation called neither submit nor restart_orchestration"
		case ev.Verdict == coord.Refused || len(other) > 0:
			if missed {
				return coord.Evaluation{}, "the evaluation called its tools wrongly twice"
			}
			missed = true
		}
		if round >= maxToolRounds {
			return coord.Evaluation{}, fmt.Sprintf("the evaluation did not decide in %d rounds of tool calls", maxToolRounds)
		}
		msgs = append(msgs, out.message())
		c := conversation{msgs: msgs}
		for _, f := range ev.Feedback {
			s.publish(event.ToolRejected{Agent: w.ID, CallID: f.CallID, Tool: f.Tool, Error: f.Error})
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: f.CallID, Content: "Error: " + f.Error, IsError: true})
		}
		for _, tc := range other {
			refusal := fmt.Sprintf("%s cannot be called now. %s", tc.Name, prompt.PostEvaluationRetry)
			s.publish(event.ToolRejected{Agent: w.ID, CallID: tc.ID, Tool: tc.Name, Error: refusal})
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: "Error: " + refusal, IsError: true})
		}
		if d := out.dropped; d != nil {
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: d.ID,
				Content: "Error: " + prompt.TooManyCalls(s.o.Orchestrator.MaxToolCallsPerResponse), IsError: true})
		}
		s.runTools(ctx, i, &c, own)
		msgs = c.msgs
	}
}
