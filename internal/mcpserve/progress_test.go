package mcpserve

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/event"
)

// Each event a caller cares about becomes one message; the rest (streamed text, tool calls)
// none.
func TestDescribe(t *testing.T) {
	long := strings.Repeat("why ", 200)
	for _, tc := range []struct {
		p    event.Payload
		want string
	}{
		{event.SessionStarted{Agents: []event.AgentInfo{{ID: "a"}, {ID: "b"}}, LogDir: "/l/log_1/turn_1"}, "session started: 2 agents (a, b); log /l/log_1/turn_1"},
		{event.AnswerSubmitted{Agent: "a", Label: "agent1.2", Invalidated: []string{"b"}}, "a answered (agent1.2); the votes of b no longer count"},
		{event.VoteCast{Agent: "b", Target: "a", AnswerLabel: "agent1.2", Reason: "it is\nright"}, "b voted for a (agent1.2): it is right"},
		{event.AgentDead{Agent: "b", Reason: "3 failed turns"}, "b is out of the session: 3 failed turns"},
		{event.CoordinationEnded{Reason: event.EndConsensus, Winner: "a", AnswerLabel: "agent1.2"}, "coordination ended (consensus): winner a (agent1.2)"},
		{event.CoordinationEnded{Reason: event.EndAllDead}, "coordination ended (all_dead) without an answer"},
		{event.FinalStarted{Agent: "a"}, "a presents the final answer"},
		{event.SessionEnded{Status: event.StatusFailed, DurationSeconds: 2.25, Error: "every agent failed"}, "session failed in 2.2 s: every agent failed"},
		{event.TextDelta{Agent: "a", Text: "Paris"}, ""},
		{event.ToolCalled{Agent: "a"}, ""},
	} {
		if got := describe(tc.p); got != tc.want {
			t.Errorf("%T: %q, want %q", tc.p, got, tc.want)
		}
	}
	if got := describe(event.VoteCast{Agent: "b", Target: "a", Reason: long}); len([]rune(got)) > maxReason+100 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long reason is not cut: %d runes", len([]rune(got)))
	}
}

// finish returns only once every queued notification was sent, in order, with increasing
// progress: the client has them all before the result.
func TestProgress_FinishFlushes(t *testing.T) {
	p := newProgress(nil)
	var mu sync.Mutex
	var got []string
	var vals []float64
	p.notify = func(_ context.Context, n float64, msg string) error {
		time.Sleep(10 * time.Millisecond) // a slow client
		mu.Lock()
		defer mu.Unlock()
		got, vals = append(got, msg), append(vals, n)
		return nil
	}
	p.start(context.Background())
	bus := event.NewBus(nil)
	bus.Subscribe(p)
	for _, a := range []string{"a", "b", "c", "d", "e"} {
		bus.Publish(event.AnswerSubmitted{Agent: a, Label: a + ".1"})
		bus.Publish(event.TextDelta{Agent: a, Text: "x"})
	}
	bus.Publish(event.SessionEnded{Status: event.StatusCompleted})
	p.finish()
	mu.Lock()
	defer mu.Unlock()
	want := []string{"a answered (a.1)", "b answered (b.1)", "c answered (c.1)", "d answered (d.1)", "e answered (e.1)", "session completed in 0.0 s"}
	if !slices.Equal(got, want) || !slices.Equal(vals, []float64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("sent %q %v by the time finish returned", got, vals)
	}
	if st := p.snapshot(); !st.Ended || st.Totals.Answers != 5 {
		t.Errorf("the state did not see every event: %+v", st)
	}
}
