package engine

import "testing"

func TestBudgetSpent(t *testing.T) {
	for _, tc := range []struct {
		max, cost float64
		want      bool
	}{
		{0, 0, false},      // no budget
		{0, 100, false},    // no budget, whatever is spent
		{-1, 100, false},   // a negative budget is none
		{0.5, 0, false},    // nothing spent yet
		{0.5, 0.49, false}, // under
		{0.5, 0.5, true},   // the call that reaches it is the last
		{0.5, 0.75, true},  // over
	} {
		if got := budgetSpent(tc.max, tc.cost); got != tc.want {
			t.Errorf("budgetSpent(%v, %v) = %v, want %v", tc.max, tc.cost, got, tc.want)
		}
	}
}
