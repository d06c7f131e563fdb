package eval

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// TestObserver: the record of a session from its events, as the engine publishes them (a
// call's usage comes before the answer it wrote).
func TestObserver(t *testing.T) {
	o := newObserver()
	usage := func(agent string, in, out int64, cost float64) event.UsageReported {
		return event.UsageReported{Agent: agent, Usage: provider.Usage{InputTokens: in, CachedInputTokens: in / 2, OutputTokens: out, ReasoningTokens: 1}, CostUSD: cost}
	}
	for k, p := range []event.Payload{
		event.SessionStarted{Agents: []event.AgentInfo{{ID: "gpt", Backend: "openai", Model: "gpt-5"}, {ID: "local", Backend: "openai", Model: "my-model", Unpriced: true}}},
		usage("gpt", 100, 10, 0.01),
		event.AnswerSubmitted{Agent: "gpt", Content: "41"},
		usage("local", 200, 20, 0),
		event.AgentError{Agent: "local", Message: "timeout"},
		usage("local", 300, 30, 0),
		event.AnswerSubmitted{Agent: "local", Content: "42"},
		usage("gpt", 400, 40, 0.04),
		event.AnswerSubmitted{Agent: "gpt", Content: "42"},
		event.VoteCast{Agent: "local", Target: "gpt"}, // not deciding: the tally is
		event.CoordinationEnded{Winner: "gpt", Reason: event.EndConsensus, Tally: []event.Tally{
			{Agent: "gpt", Votes: 2, Voters: []string{"gpt", "local"}}, {Agent: "local"}}},
		event.FinalAnswer{Agent: "gpt", Content: "The answer is 42."},
	} {
		o.Handle(event.Event{Seq: int64(k + 1), Payload: p})
	}
	var r Record
	o.fill(&r)
	want := Record{
		Final: "The answer is 42.", Winner: "gpt", EndReason: event.EndConsensus,
		Agents: []AgentRecord{
			{ID: "gpt", Backend: "openai", Model: "gpt-5", Answers: []string{"41", "42"}, CostUSD: 0.05, FirstCostUSD: 0.01,
				FirstTokens: Tokens{100, 50, 10, 1}},
			{ID: "local", Backend: "openai", Model: "my-model", Answers: []string{"42"}, Unpriced: true, Error: "timeout",
				FirstTokens: Tokens{500, 250, 50, 2}},
		},
		Votes:  []Vote{{"gpt", "gpt"}, {"local", "gpt"}},
		Tokens: Tokens{1000, 500, 100, 4}, CostUSD: 0.05, CostKnown: false,
	}
	if d := cmp.Diff(want, r, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); d != "" {
		t.Errorf("record (-want +got):\n%s", d)
	}
}
