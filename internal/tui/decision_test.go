package tui

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

func conf(x float64) *float64 { return &x }

// weighedSession is a session under confidence weighting: alice weighs 2, carol 0.5, and
// carol's vote for bob's answer is the strongest dissent.
func weighedSession() *stream {
	s := started(3)
	st := s.events[0].Payload.(event.SessionStarted)
	st.Settings.VoteWeighting = "confidence"
	st.Agents[0].VoteWeight, st.Agents[2].VoteWeight = 2, 0.5
	s.events[0].Payload = st
	return s.add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "Write programs from day one.", Version: 1, Confidence: conf(0.9)}).
		add(ms, event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: bobAnswer, Version: 2, Confidence: conf(0.4)}).
		add(ms, event.VoteCast{Agent: "alice", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "Mine is complete.", Version: 2, Confidence: conf(0.8)}).
		add(ms, event.VoteCast{Agent: "bob", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "Better sources.", Version: 2}).
		add(ms, event.VoteCast{Agent: "carol", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "Shorter and right.", Version: 2, Confidence: conf(0.9)}).
		add(ms, event.CoordinationEnded{Reason: event.EndConsensus, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1",
			Tally: []event.Tally{{Agent: "alice", Label: "agent1", Votes: 2, Voters: []string{"alice", "bob"}}, {Agent: "bob", Label: "agent2", Votes: 1, Voters: []string{"carol"}}}}).
		add(ms, event.FinalAnswer{Agent: "alice", Label: "agent1.final", Mode: "verbatim", Content: "Write programs from day one."}).
		add(ms, event.SessionEnded{Status: event.StatusCompleted})
}

// TestFinal_Decision: the final screen shows the decision record compactly: each answer's
// score and its author's confidence, what each vote weighs, the strongest dissent and the
// verifiers (none ran).
func TestFinal_Decision(t *testing.T) {
	v := screenText(newModel(160, 60, weighedSession().events))
	for _, s := range []string{
		"agent1.1  2 votes, score 2.1, its author's confidence 0.9",
		"agent1 (alice) (weight 2, confidence 0.8, worth 1.6): Mine is complete.",
		"agent2 (bob) (weight 1, worth 0.5): Better sources.",
		"agent2.1  1 vote, score 0.45, its author's confidence 0.4",
		`strongest dissent: agent3 for agent2.1 (weight 0.5, confidence 0.9, worth 0.45): "Shorter and right."`,
		"verifiers: none ran",
	} {
		if !strings.Contains(v, s) {
			t.Errorf("final screen lacks %q", s)
		}
	}
	if t.Failed() {
		t.Log("\n" + v)
	}
	plain := screenText(newModel(160, 60, session().events))
	if !strings.Contains(plain, "no dissent: every counted vote went to the winner") || strings.Contains(plain, "score") {
		t.Errorf("a plain vote shows no dissent and no scores:\n%s", plain)
	}
}
