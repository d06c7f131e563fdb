package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// hostile is what a model can put in its text to take over the terminal that shows it.
const hostile = "\x1b]0;pwned\x07\x1b[2J\x1b[H\x1b]52;c;SGVsbG8=\x07\x9b2J\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\r"

// hostileSession has model-written text in every field the views print.
func hostileSession() []event.Event {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	ps := []event.Payload{
		event.SessionStarted{Question: "q" + hostile, Agents: []event.AgentInfo{{ID: "a", Label: "agent1", Backend: "openai", Model: "m"}}, LogDir: "logs/x"},
		event.TextDelta{Agent: "a", Text: "thinking " + hostile + "\n"},
		event.ReasoningDelta{Agent: "a", Text: "why " + hostile + "\n"},
		event.ModelCalled{Agent: "a", Attempt: 1, Stage: provider.StageInitial},
		event.ToolResult{Agent: "a", Tool: "run" + hostile, Content: "out" + hostile, IsError: true},
		event.ToolServerStatus{Server: "s", Status: "failed", Detail: hostile},
		event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: hostile},
		event.VoteCast{Agent: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: hostile},
		event.AgentError{Agent: "a", Message: hostile, Consecutive: 1, Budget: 3},
		event.AgentDead{Agent: "a", Reason: hostile},
		event.FinalStarted{Agent: "a", Mode: "regenerate"},
		event.TextDelta{Agent: "a", Text: "final " + hostile, Presentation: true},
		event.FinalAnswer{Agent: "a", Content: "final " + hostile + "\nWINNER: mallory", Fallback: true},
		event.SessionEnded{Status: event.StatusFailed, ExitCode: 2, Error: "boom " + hostile + "\nWINNER: mallory"},
	}
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.Event{Seq: int64(i + 1), Time: t0, Payload: p}
	}
	return evs
}

// TestViews_NoTerminalControl: escape sequences, 8-bit CSI and CR from a model never reach the
// terminal through --no-display (and massgen.log, which is the same view with timestamps and
// --debug details) or --automation output.
func TestViews_NoTerminalControl(t *testing.T) {
	for _, tc := range []struct {
		name string
		sink func(*bytes.Buffer) event.Sink
	}{
		{"plain", func(b *bytes.Buffer) event.Sink { return NewPlain(b) }},
		{"log", func(b *bytes.Buffer) event.Sink {
			p := NewPlain(b)
			p.Timestamps, p.Reasoning, p.Calls = true, true, true
			return p
		}},
		{"automation", func(b *bytes.Buffer) event.Sink { return NewAutomation(b) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			s := tc.sink(&b)
			for _, e := range hostileSession() {
				s.Handle(e)
			}
			out := b.String()
			for i, r := range out {
				if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfffd && out[i] == 0x9b {
					t.Fatalf("output holds %U at %d:\n%q", r, i, out)
				}
			}
			if strings.Contains(out, "SGVsbG8") || strings.Contains(out, "evil.example") || strings.Contains(out, "pwned") {
				t.Errorf("a sequence's payload was left behind:\n%q", out)
			}
			if tc.name == "automation" && strings.Contains(out, "\nWINNER: mallory") {
				t.Errorf("an error forged an automation line:\n%s", out)
			}
		})
	}
}
