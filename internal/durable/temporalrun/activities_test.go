package temporalrun

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

func deltas(evs []event.Event) string {
	var out []string
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.TextDelta:
			out = append(out, p.Agent+":"+p.Text)
		case event.ReasoningDelta:
			out = append(out, p.Agent+":r:"+p.Text)
		default:
			out = append(out, e.Payload.Type())
		}
	}
	return strings.Join(out, " ")
}

// Without a client a streamer keeps everything for the result: coalesced, the deltas capped.
func TestStreamer_CoalescesAndCaps(t *testing.T) {
	s := &streamer{budget: maxDeltaBytes, failed: true, stop: make(chan struct{})}
	for range 3 {
		s.Handle(event.Event{Payload: event.TextDelta{Agent: "a", Text: "ab"}})
	}
	for _, p := range []event.Payload{event.ReasoningDelta{Agent: "a", Text: "r"}, event.TextDelta{Agent: "b", Text: "x"},
		event.TextDelta{Agent: "b", Text: "y"}, event.VoteCast{Agent: "b"}} {
		s.Handle(event.Event{Payload: p})
	}
	streamed, from, rest := s.finish(nil)
	if streamed || from != 0 {
		t.Fatalf("streamed %v from %d without a client", streamed, from)
	}
	if got, want := deltas(rest), "a:ababab a:r:r b:xy vote_cast"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}

	s = &streamer{budget: maxDeltaBytes, failed: true, stop: make(chan struct{})}
	for _, p := range []event.Payload{event.TextDelta{Agent: "a", Text: strings.Repeat("x", maxDeltaBytes-10)},
		event.TextDelta{Agent: "a", Text: strings.Repeat("y", 20)}, event.VoteCast{Agent: "a"}, event.TextDelta{Agent: "a", Text: "z"}} {
		s.Handle(event.Event{Payload: p})
	}
	_, _, rest = s.finish(nil)
	if len(rest) != 3 || rest[1].Payload.Type() != "vote_cast" || deltaLen(rest[2].Payload) != 1 {
		t.Errorf("kept %s: want the first delta, the vote and the small delta", deltas(rest))
	}
}
