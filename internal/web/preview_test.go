package web

import (
	"testing"

	"massgen/internal/event"
)

// A stream taken up after Last-Event-ID starts after that event, previews (a session on
// Temporal) or not.
func TestSession_IndexAfterSkipsPreviews(t *testing.T) {
	ss := &session{changed: make(chan struct{}), started: make(chan struct{})}
	for _, e := range []event.Event{
		{Seq: 1, Payload: event.TurnStarted{Agent: "a"}},
		{Seq: 1, Payload: event.TextDelta{Agent: "a", Text: "Par"}, Preview: true},
		{Seq: 1, Payload: event.TextDelta{Agent: "a", Text: "is"}, Preview: true},
		{Seq: 2, Payload: event.UsageReported{Agent: "a"}},
		{Seq: 3, Payload: event.TurnStarted{Agent: "a"}},
	} {
		ss.events = append(ss.events, e)
	}
	for after, want := range map[int64]int{0: 0, 1: 3, 2: 4, 3: 5, 9: 5} {
		if got := ss.indexAfter(after); got != want {
			t.Errorf("after %d: index %d, want %d", after, got, want)
		}
	}
}
