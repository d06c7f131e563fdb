package tui

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

// A final answer cut off by the token limit looked complete on the final screen (issue 9 item 10).
func TestFinal_MarksTruncatedAnswer(t *testing.T) {
	s := started(1)
	s.add(ms, event.FinalStarted{Agent: "alice", Mode: "regenerate"}).
		add(ms, event.FinalAnswer{Agent: "alice", Label: "agent1.final", Content: "Paris is the capital of", Mode: "regenerate",
			Truncated: true, TruncatedBy: event.TruncatedTokenLimit}).
		add(ms, event.SessionEnded{Status: event.StatusCompleted})
	v := screenText(newModel(120, 40, s.events))
	if !strings.Contains(v, "agent1.final · (truncated at the token limit)\n  written by the winner after reading all answers\n") {
		t.Errorf("final screen lacks the truncation mark:\n%s", v)
	}
}
