package view

import (
	"bytes"
	"testing"
	"time"

	"massgen/internal/event"
)

func conf(x float64) *float64 { return &x }

// weighedSession is a session under confidence weighting: agent3 weighs 2.5, so its one sure
// vote outweighs two votes for agent2's answer.
func weighedSession() []event.Event {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	ps := []event.Payload{
		event.SessionStarted{Question: "Capital of France?", Turn: 1, Settings: event.Settings{VoteWeighting: "confidence"},
			Agents: []event.AgentInfo{
				{ID: "a", Label: "agent1", Backend: "scripted", VoteWeight: 1},
				{ID: "b", Label: "agent2", Backend: "scripted", VoteWeight: 1},
				{ID: "c", Label: "agent3", Backend: "scripted", VoteWeight: 2.5},
				{ID: "d", Label: "agent4", Backend: "scripted", VoteWeight: 1},
			}},
		event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "Paris", Version: 1, Confidence: conf(0.9)},
		event.AnswerSubmitted{Agent: "b", Label: "agent2.1", Content: "Lyon", Version: 2},
		event.VoteCast{Agent: "a", Target: "b", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "Lyon is older.", Version: 2, Confidence: conf(0.6)},
		event.VoteCast{Agent: "c", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "Paris is the capital.", Version: 2, Confidence: conf(0.95)},
		event.VoteCast{Agent: "d", Target: "b", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "Agree with agent2.", Version: 2},
		event.CoordinationEnded{Reason: event.EndConsensus, Winner: "a", WinnerLabel: "agent1", AnswerLabel: "agent1.1",
			Tally: []event.Tally{{Agent: "a", Label: "agent1", Votes: 1, Voters: []string{"c"}, Score: 2.375},
				{Agent: "b", Label: "agent2", Votes: 2, Voters: []string{"a", "d"}, Score: 1.1}}},
		event.FinalStarted{Agent: "a", Mode: "verbatim"},
		event.FinalAnswer{Agent: "a", Label: "agent1.final", Content: "Paris", Mode: "verbatim"},
		event.SessionEnded{Status: event.StatusCompleted, DurationSeconds: 1},
	}
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.Event{Seq: int64(i + 1), Time: t0.Add(time.Duration(i) * time.Second), Payload: p}
	}
	return evs
}

// TestPlain_Why_Golden: the why block after the final answer names the rule, each vote's
// weight, confidence, worth and reason, the strongest dissent, and that no verifier ran.
func TestPlain_Why_Golden(t *testing.T) {
	var b bytes.Buffer
	p := NewPlain(&b)
	for _, e := range weighedSession() {
		p.Handle(e)
	}
	golden(t, "plain_why.golden", b.Bytes())
}
