package view

import (
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// The closing summary names the critical path next to the wall time: what each call led to
// and when, from the start (review 2026-12-02: durations of steps all named initial_answer
// were hard to read).
func TestPlain_LatencyLine(t *testing.T) {
	var b strings.Builder
	p := NewPlain(&b)
	t0 := time.Unix(1000, 0)
	for _, e := range []struct {
		s float64
		p event.Payload
	}{
		{0, event.SessionStarted{Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}}}},
		{0, event.ModelCalled{Agent: "a", Stage: provider.StageInitial}},
		{1, event.UsageReported{Agent: "a", Usage: provider.Usage{InputTokens: 1}}},
		{1.5, event.ModelCalled{Agent: "a", Stage: provider.StagePresentation}},
		{2, event.FinalAnswer{Agent: "a", Content: "x"}},
		{2, event.SessionEnded{Status: "completed", DurationSeconds: 2}},
	} {
		p.Handle(event.Event{Time: t0.Add(time.Duration(e.s * float64(time.Second))), Payload: e.p})
	}
	want := "latency: wall 2.00s, critical path 1.50s over 2 of 2 calls: a's call with no answer at +1.0s → final answer at +2.0s"
	if !strings.Contains(b.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, b.String())
	}
}

// The final answer is written as it streams, before the presentation ends.
func TestPlain_FinalAnswerStreams(t *testing.T) {
	var b strings.Builder
	p := NewPlain(&b)
	p.Handle(event.Event{Payload: event.SessionStarted{Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}}}})
	p.Handle(event.Event{Payload: event.FinalStarted{Agent: "a"}})
	p.Handle(event.Event{Payload: event.TextDelta{Agent: "a", Text: "First half, ", Presentation: true}})
	if !strings.Contains(b.String(), "First half, ") {
		t.Fatalf("the first delta is not out before the answer ends:\n%s", b.String())
	}
	p.Handle(event.Event{Payload: event.TextDelta{Agent: "a", Text: "second half.", Presentation: true}})
	if !strings.Contains(b.String(), "First half, second half.") {
		t.Fatalf("deltas not written in order:\n%s", b.String())
	}
}
