package view

import (
	"testing"

	"massgen/internal/provider"
)

func TestUsageLine_MarksEstimates(t *testing.T) {
	for _, tc := range []struct {
		u    provider.Usage
		want string
	}{
		{provider.Usage{InputTokens: 1234, CachedInputTokens: 200, OutputTokens: 56, ReasoningTokens: 10},
			"tokens: 1234 input (200 cached), 56 output (10 reasoning); cost $0.0045"},
		{provider.Usage{InputTokens: 1234, OutputTokens: 56, Estimated: true},
			"tokens ≈ 1234 input, 56 output; cost ≈ $0.0045 (partly estimated: calls cut off before their usage was reported)"},
	} {
		if got := UsageLine(tc.u, 0.0045); got != tc.want {
			t.Errorf("UsageLine(%+v) = %q, want %q", tc.u, got, tc.want)
		}
	}
}
