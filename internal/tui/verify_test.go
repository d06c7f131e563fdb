package tui

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

// TestPane_Verdict: a verifier's verdict is the checking agent's latest activity.
func TestPane_Verdict(t *testing.T) {
	s := started(2)
	s.add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "5", Version: 1})
	s.add(ms, event.AnswerVerified{Agent: "bob", Verifier: 1, Aspect: "correctness", Candidate: "alice", AnswerLabel: "agent1.1",
		Verdict: event.VerdictFail, Reason: "2 + 2 is 4"})
	v := screenText(newModel(160, 30, s.events))
	if !strings.Contains(v, "verifier 1 (correctness) on agent1.1: fail: 2 + 2 is 4") {
		t.Errorf("the verdict is not shown:\n%s", v)
	}
}
