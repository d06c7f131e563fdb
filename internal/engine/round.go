package engine

import (
	"errors"
	"fmt"
	"time"

	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// errRoundCut marks a turn cut off by its round timeout plus round_timeout_grace_seconds.
var errRoundCut = errors.New("round timed out")

// roundClock returns the round timeout of an agent's round n (1 for its first):
// initial_round_timeout_seconds for the first, subsequent_round_timeout_seconds for the others.
//
// MassGen fires the soft timeout after a tool call (a hook) and, once the grace period is
// over, refuses every tool but vote and new_answer, so a round that never calls a tool is
// never bounded. Here the round is cut off at the end of the grace period, whatever it is
// doing: the bound holds for a single slow model call too, and the per-call
// agent_timeout_seconds and the session's orchestrator_timeout_seconds still apply within it.
func (s *session) roundClock(n int) roundClock {
	limit := s.o.Timeouts.SubsequentRound
	if n == 1 {
		limit = s.o.Timeouts.InitialRound
	}
	rc := roundClock{n: n}
	if limit <= 0 {
		return rc
	}
	now := s.o.Now()
	rc.start, rc.limit, rc.grace = now, limit, s.o.Timeouts.RoundGrace
	rc.soft, rc.cut = now.Add(limit), now.Add(limit+s.o.Timeouts.RoundGrace)
	return rc
}

// checkRound runs before each model call of a turn: past the soft timeout it tells the agent,
// once, to submit now; past the cut it ends the turn with errRoundCut.
func (s *session) checkRound(i int, c *conversation) error {
	rc := &c.round
	if rc.soft.IsZero() {
		return nil
	}
	now := s.o.Now()
	if !now.Before(rc.cut) {
		s.roundCut(i, c)
		return s.roundError(rc)
	}
	if rc.warned || now.Before(rc.soft) {
		return nil
	}
	rc.warned = true
	elapsed := now.Sub(rc.start)
	s.publish(event.RoundTimeout{Agent: s.agents[i].ID, Round: rc.n, Phase: event.RoundSoft,
		LimitSeconds: rc.limit.Seconds(), GraceSeconds: rc.grace.Seconds(), ElapsedSeconds: elapsed.Seconds()})
	note := prompt.RoundTimeUp(rc.n == 1, !s.skipVoting, elapsed, rc.limit, rc.cut.Sub(now))
	s.publish(event.EnforcementSent{Agent: s.agents[i].ID, Message: note})
	c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: note})
	return nil
}

// roundCut publishes that agent i's round was cut off.
func (s *session) roundCut(i int, c *conversation) {
	rc := &c.round
	s.publish(event.RoundTimeout{Agent: s.agents[i].ID, Round: rc.n, Phase: event.RoundCut,
		LimitSeconds: rc.limit.Seconds(), GraceSeconds: rc.grace.Seconds(), ElapsedSeconds: s.o.Now().Sub(rc.start).Seconds()})
}

func (s *session) roundError(rc *roundClock) error {
	key := "subsequent_round_timeout_seconds"
	if rc.n == 1 {
		key = "initial_round_timeout_seconds"
	}
	return fmt.Errorf("%w: round %d went over %s (%s) plus round_timeout_grace_seconds (%s) without a new_answer or vote",
		errRoundCut, rc.n, key, rc.limit, rc.grace)
}

// callLimit is how long a model call or tool run may take: agent_timeout_seconds, or less when
// the round is cut off sooner; byRound says which. A round already cut gives 0.
func (s *session) callLimit(cut time.Time) (limit time.Duration, byRound bool) {
	limit = s.o.Timeouts.Agent
	if cut.IsZero() {
		return limit, false
	}
	if left := cut.Sub(s.o.Now()); left < limit {
		return max(left, 0), true
	}
	return limit, false
}
