package temporalrun

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

func TestCoalesceAndFit(t *testing.T) {
	var in []event.Event
	for range 3 {
		in = append(in, event.Event{Payload: event.TextDelta{Agent: "a", Text: "ab"}})
	}
	in = append(in, event.Event{Payload: event.ReasoningDelta{Agent: "a", Text: "r"}}, event.Event{Payload: event.TextDelta{Agent: "b", Text: "x"}},
		event.Event{Payload: event.TextDelta{Agent: "b", Text: "y"}}, event.Event{Payload: event.VoteCast{Agent: "b"}})
	got := coalesce(in)
	var types []string
	for _, e := range got {
		switch p := e.Payload.(type) {
		case event.TextDelta:
			types = append(types, p.Agent+":"+p.Text)
		case event.ReasoningDelta:
			types = append(types, p.Agent+":r:"+p.Text)
		default:
			types = append(types, e.Payload.Type())
		}
	}
	if want := "a:ababab a:r:r b:xy vote_cast"; strings.Join(types, " ") != want {
		t.Errorf("coalesce: %q, want %q", strings.Join(types, " "), want)
	}

	big := []event.Event{{Payload: event.TextDelta{Agent: "a", Text: strings.Repeat("x", maxDeltaBytes-10)}},
		{Payload: event.TextDelta{Agent: "a", Text: strings.Repeat("y", 20)}}, {Payload: event.VoteCast{Agent: "a"}},
		{Payload: event.TextDelta{Agent: "a", Text: "z"}}}
	out := fit(big)
	if len(out) != 3 || out[1].Payload.Type() != "vote_cast" {
		t.Errorf("fit kept %d events: want the first delta, the vote and the small delta", len(out))
	}
}
