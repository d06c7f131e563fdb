package view

import (
	"bytes"
	"strings"
	"testing"

	"massgen/internal/event"
)

// A final answer cut off by the token limit was shown as if complete (issue 9 item 10).
func TestViews_MarkTruncatedFinalAnswer(t *testing.T) {
	evs := []event.Payload{
		event.SessionStarted{LogDir: "logs/x", Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}}},
		event.FinalStarted{Agent: "a", Mode: "regenerate"},
		event.TextDelta{Agent: "a", Text: "Paris is the capital of", Presentation: true},
		event.FinalAnswer{Agent: "a", Label: "agent1.final", Content: "Paris is the capital of", Mode: "regenerate",
			Truncated: true, TruncatedBy: event.TruncatedTokenLimit},
		event.SessionEnded{Status: event.StatusCompleted},
	}
	for _, tc := range []struct {
		name string
		sink func(*bytes.Buffer) event.Sink
		want string
	}{
		{"plain", func(b *bytes.Buffer) event.Sink { return NewPlain(b) }, "(truncated at the token limit)"},
		{"automation", func(b *bytes.Buffer) event.Sink { return NewAutomation(b) }, "ANSWER_PREVIEW: Paris is the capital of (truncated at the token limit)\n"},
	} {
		var b bytes.Buffer
		s := tc.sink(&b)
		for i, p := range evs {
			s.Handle(event.Event{Seq: int64(i + 1), Payload: p})
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s lacks %q:\n%s", tc.name, tc.want, b.String())
		}
	}
}
