package event

import (
	"encoding/json"
	"strings"
	"testing"
)

// Each sink sees every event once: the log the logged copies, the views the previews.
func TestPreview_LogAndViewsEachSeeItOnce(t *testing.T) {
	var logged, shown []Event
	b := NewBus(nil)
	b.Subscribe(ForLog(SinkFunc(func(e Event) { logged = append(logged, e) })))
	b.Subscribe(ForViews(SinkFunc(func(e Event) { shown = append(shown, e) })))
	b.Publish(TurnStarted{Agent: "a"})
	b.PublishPreview(TextDelta{Agent: "a", Text: "Paris"})
	b.PublishPreviewed(TextDelta{Agent: "a", Text: "Paris"})
	b.Publish(UsageReported{Agent: "a"})
	describe := func(evs []Event) string {
		var out []string
		for _, e := range evs {
			s := e.Payload.Type()
			if e.Preview {
				s += "(preview)"
			}
			if e.Previewed {
				s += "(previewed)"
			}
			out = append(out, s+"#"+string(rune('0'+e.Seq)))
		}
		return strings.Join(out, " ")
	}
	if got, want := describe(logged), "turn_started#1 text_delta#2 usage#3"; got != want {
		t.Errorf("the log saw %s, want %s", got, want)
	}
	if got, want := describe(shown), "turn_started#1 text_delta(preview)#1 usage#3"; got != want {
		t.Errorf("the views saw %s, want %s", got, want)
	}
}

func TestPreview_MarksTravelInJSON(t *testing.T) {
	for _, e := range []Event{{Seq: 4, Payload: TextDelta{Agent: "a", Text: "x"}, Preview: true},
		{Seq: 5, Payload: TextDelta{Agent: "a", Text: "x"}, Previewed: true}, {Seq: 6, Payload: TextDelta{Agent: "a", Text: "x"}}} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if back.Preview != e.Preview || back.Previewed != e.Previewed || back.Seq != e.Seq {
			t.Errorf("%s read back as preview %v previewed %v seq %d", b, back.Preview, back.Previewed, back.Seq)
		}
		if !e.Preview && !e.Previewed && strings.Contains(string(b), "preview") {
			t.Errorf("a plain event says preview: %s", b)
		}
	}
}
