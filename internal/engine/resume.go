package engine

import (
	"context"
	"fmt"
	"strings"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// resume runs the session o.Restore logged from where its log stops: the answers, the votes
// still current, the failures and deaths, the cost spent, planning's and the personas'
// decisions all stand; agents holding a current vote do nothing more, an agent whose call was
// in flight makes it again, the others take their next turn. Coordination that had ended goes
// straight to the final presentation, and a final answer already written is the answer.
// SessionResumed is published first (the log already opens with SessionStarted); the bus must
// number events on from the log's last one.
func resume(ctx context.Context, o Options) Result {
	s := newSession(o)
	if o.Steering != nil {
		o.Steering.attach(s)
	}
	// The session's wall time runs from its first start, as its log and latency count it, not
	// from this process's: one session, one duration.
	start := o.Now()
	if evs := o.Restore.Events; len(evs) > 0 && !evs[0].Time.IsZero() && evs[0].Time.Before(start) {
		start = evs[0].Time
	}
	r, err := s.fold(o.Restore.Events)
	if err == nil {
		err = s.m.Restore(r.coord)
	}
	if err != nil {
		// Nothing was run: the caller refuses the resume before touching the log, so this
		// is a log that contradicts itself.
		s.publish(event.SessionResumed{Turn: o.Turn, AfterSeq: lastSeq(o.Restore), AfterType: lastType(o.Restore), Previous: o.Restore.Previous})
		return s.finish(start, Result{Status: event.StatusFailed, ExitCode: 2, Err: fmt.Errorf("the log cannot be resumed: %w", err)})
	}
	phase := event.ResumeCoordination
	switch {
	case r.final != nil && r.ended != nil:
		phase = event.ResumeFinishing
	case r.ended != nil:
		phase = event.ResumePresentation
	}
	s.publish(event.SessionResumed{Turn: o.Turn, AfterSeq: r.after.Seq, AfterType: r.after.Payload.Type(), Phase: phase,
		Previous: o.Restore.Previous, Dropped: o.Restore.Dropped, Redo: r.redo})
	for _, p := range o.Preamble {
		s.publish(p)
	}
	s.restoreBroadcasts(o.Restore.Events)
	s.restoreBootstrap(o.Restore.Events)
	s.restoreVerdicts(o.Restore.Events)
	havePlans := s.restoreTaskPlans(o.Restore.Events, r.redo)
	s.cost, s.usage, s.unpricedUsed = r.cost, r.usage, r.unpriced
	copy(s.tokens, r.tokens)
	s.overBudget = budgetSpent(o.Orchestrator.MaxCostUSD, s.cost)
	if r.plan != nil {
		s.plan = *r.plan
	}
	if r.restart != nil {
		s.attempt, s.restart = r.restart.Attempt, r.restart
		for _, a := range s.agents {
			if w, ok := a.Workspace.(attemptWorkspace); ok {
				w.NewAttempt(s.attempt)
			}
		}
	}
	s.personas = r.personas
	s.subtasks = r.subtasks
	s.variants = r.variants
	s.restored = r.convs
	s.deadWhy = r.deadWhy
	if r.ended != nil {
		// No agent goroutine takes its conversation up: the presentation may continue it.
		for i := range s.agents {
			s.convs[i] = s.restoredConversation(i)
		}
	}

	if r.final != nil && r.ended != nil {
		status, code := outcome(r.ended.Reason)
		res := Result{Status: status, ExitCode: code, EndReason: r.ended.Reason, Err: s.errorFor(r.ended.Reason),
			Winner: r.final.Agent, FinalAnswer: r.final.Content, TruncatedBy: r.final.TruncatedBy}
		if !r.submitted && s.maxAttempts() > 1 {
			// Killed before its post-evaluation decided: the check is made again.
			return s.afterPresent(ctx, start, res)
		}
		// The process may have died before the writes were applied; applying again is a no-op.
		return s.finish(start, s.deliver(ctx, res))
	}
	if r.ended != nil {
		s.mu.Lock()
		s.endLocked(r.ended.Reason)
		s.mu.Unlock()
	} else {
		if o.Orchestrator.PlanningMode && r.plan == nil {
			s.decidePlanning(ctx)
		}
		if o.Orchestrator.DSPy.Enabled && r.variants == nil {
			s.paraphraseQuestion(ctx)
		}
		if o.Orchestrator.PersonaGenerator.Enabled && r.personas == nil {
			s.generatePersonas(ctx)
		}
		if s.decomposing() && r.subtasks == nil {
			s.assignSubtasks(ctx)
		}
		s.seedPlans(havePlans)
		s.mu.Lock()
		s.checkEndLocked() // the log may stop right after the vote that completed coordination
		s.endIfOverBudgetLocked()
		s.mu.Unlock()
		s.coordinate(ctx)
	}
	return s.presentAndFinish(ctx, start)
}

func lastSeq(r *Restore) int64 {
	if len(r.Events) == 0 {
		return 0
	}
	return r.Events[len(r.Events)-1].Seq
}

func lastType(r *Restore) string {
	if len(r.Events) == 0 {
		return ""
	}
	return r.Events[len(r.Events)-1].Payload.Type()
}

// restoredConversation is agent i's conversation to start with: the one its log rebuilt, or
// a new one. Called by the agent's goroutine.
func (s *session) restoredConversation(i int) conversation {
	if i >= len(s.restored) {
		return conversation{}
	}
	c := s.restored[i]
	s.restored[i] = conversation{}
	if len(c.msgs) > 0 {
		s.mu.Lock()
		s.restoreShownLocked(i, &c)
		s.mu.Unlock()
	}
	return c
}

// restoreShownLocked works out which answers a rebuilt conversation has shown its agent, from
// the answer blocks in its messages: an answer counts as shown only if the agent read it, so
// a vote it casts is never counted for answers it had not seen. s.mu must be held.
func (s *session) restoreShownLocked(i int, c *conversation) {
	var read strings.Builder
	for _, m := range c.msgs {
		if m.Role != provider.RoleAssistant {
			read.WriteString(m.Content)
			read.WriteByte('\n')
		}
	}
	text := read.String()
	c.shown = make([]int, len(s.agents))
	for k := range s.agents {
		for n := s.m.AnswerCount(k); n > 0; n-- {
			if strings.Contains(text, prompt.Block(s.visible([]coord.Answer{s.answerOf(k, n)})[0])) {
				c.shown[k] = n
				break
			}
		}
	}
	c.ownShown = c.shown[i]
	// The tools its last request offered, which a presentation that continues the
	// conversation offers again: the vote labels as they were before its response counted.
	var labels []string
	for k, n := range c.shown {
		if n > 0 || k == i && c.resumed.ownAtCall > 0 {
			labels = append(labels, coord.Label(k))
		}
	}
	c.tools = append(append(s.agents[i].Tools.Specs(), s.workflowTools(labels)...), s.planTools()...)
	s.syncSeenLocked(i, c)
}

// answerOf is agent k's n-th answer (from 1); s.mu must be held.
func (s *session) answerOf(k, n int) coord.Answer {
	label := fmt.Sprintf("%s.%d", coord.Label(k), n)
	for _, a := range s.m.AnswersOf(k) {
		if a.Label == label {
			return a
		}
	}
	return coord.Answer{Agent: k, Label: label}
}

// redoTurnLocked takes up the turn whose request was in flight when the log stopped: the
// request goes again as it was. Updates it receives from now on count against the turn's
// max_midstream_injections_per_round as if it had used them all, since the log does not say
// how many it had; s.mu must be held.
func (s *session) redoTurnLocked(i int, c *conversation, round int) {
	c.resumed.redo = false
	if f := s.o.Orchestrator.Fairness; f.Enabled {
		c.injected = f.MaxMidstreamInjectionsPerRound
	}
	s.syncSeenLocked(i, c)
	c.round = s.roundClock(round)
}
