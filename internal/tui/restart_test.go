package tui

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

// TestHeader_Attempts: with orchestration restarts the header says which attempt runs, that
// the presenter is evaluating, and a restart leaves its banner (why) under the header.
func TestHeader_Attempts(t *testing.T) {
	s := started(2)
	st := s.events[0].Payload.(event.SessionStarted)
	st.Settings.MaxOrchestrationRestarts = 2
	s.events[0].Payload = st
	s.add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "Lennon.", Version: 1})
	s.add(ms, event.CoordinationEnded{Reason: event.EndConsensus, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"})
	s.add(ms, event.FinalStarted{Agent: "alice", Mode: "verbatim"})
	s.add(ms, event.FinalAnswer{Agent: "alice", Label: "agent1.final", Content: "Lennon.", Mode: "verbatim"})
	s.add(ms, event.PostEvaluationStarted{Agent: "alice", Attempt: 1, MaxAttempts: 3})
	if v := screenText(newModel(120, 30, s.events)); !strings.Contains(v, "evaluating the final answer") || !strings.Contains(v, "attempt 1/3") {
		t.Errorf("evaluating, attempt 1/3 not shown:\n%s", v)
	}
	s.add(ms, event.OrchestrationRestarted{Agent: "alice", Attempt: 2, MaxAttempts: 3, Reason: "McCartney is missing", Instructions: "both"})
	v := screenText(newModel(120, 30, s.events))
	for _, want := range []string{"answering", "attempt 2/3", "! orchestration restart: attempt 2/3, asked by agent1: McCartney is missing"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q not shown:\n%s", want, v)
		}
	}
}
