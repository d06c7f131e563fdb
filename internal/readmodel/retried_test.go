package readmodel

import (
	"testing"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// The calls of lost attempts (Temporal) count in the cost, and apart.
func TestState_RetriedCallsCountInTheCostAndApart(t *testing.T) {
	s := NewState()
	for k, u := range []event.UsageReported{
		{Agent: "a", Usage: provider.Usage{OutputTokens: 10}, CostUSD: 0.01, Round: 1},
		{Agent: "a", Usage: provider.Usage{OutputTokens: 5}, CostUSD: 0.02, Round: 1, Retried: 1},
	} {
		s.Apply(event.Event{Seq: int64(k + 1), Payload: u})
	}
	if t2 := s.Totals; t2.CostUSD != 0.03 || t2.Usage.OutputTokens != 15 || t2.RetriedCalls != 1 || t2.RetriedCostUSD != 0.02 {
		t.Errorf("totals: cost %v, %d output tokens, %d retried calls costing %v; want 0.03, 15, 1, 0.02",
			t2.CostUSD, t2.Usage.OutputTokens, t2.RetriedCalls, t2.RetriedCostUSD)
	}
}
