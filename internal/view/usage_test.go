package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

func TestUsageLine_MarksEstimates(t *testing.T) {
	for _, tc := range []struct {
		u    provider.Usage
		want string
	}{
		{provider.Usage{InputTokens: 1234, CachedInputTokens: 200, OutputTokens: 56, ReasoningTokens: 10},
			"tokens: 1234 input (200 cached), 56 output (10 reasoning); cost $0.0045"},
		{provider.Usage{InputTokens: 10, OutputTokens: 5, Unknown: true},
			"tokens: 10 input, 5 output; cost ≥ $0.0045, some prices unknown (a stopped CLI run did not tell its usage)"},
		{provider.Usage{InputTokens: 1234, OutputTokens: 56, Estimated: true},
			"tokens ≈ 1234 input, 56 output; cost ≈$0.0045 (partly estimated: calls cut off before their usage was reported)"},
	} {
		if got := UsageLine(tc.u, 0.0045); got != tc.want {
			t.Errorf("UsageLine(%+v) = %q, want %q", tc.u, got, tc.want)
		}
	}
}

// A model without a price says so: $0.0000 would pass for free.
func TestUsageLine_PriceUnknown(t *testing.T) {
	u := provider.Usage{InputTokens: 100, OutputTokens: 10}
	for _, tc := range []struct {
		cost     float64
		unpriced []string
		want     string
	}{
		{0, []string{"my-finetune"}, "tokens: 100 input, 10 output; cost unknown (price unknown for my-finetune)"},
		{0.0123, []string{"a", "b"}, "tokens: 100 input, 10 output; cost ≥ $0.012, some prices unknown (price unknown for a, b)"},
		{0, nil, "tokens: 100 input, 10 output; cost $0.0000"},
	} {
		if got := UsageLine(u, tc.cost, tc.unpriced...); got != tc.want {
			t.Errorf("UsageLine(%v, %v) = %q, want %q", tc.cost, tc.unpriced, got, tc.want)
		}
	}
}

// The plain and automation views say "price unknown" for an unpriced model that used tokens,
// warn at the start that max_cost_usd cannot see it, put a colon after a server's status and
// name a server that died in the summary.
func TestPlain_UnpricedBudgetAndServers(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	ps := []event.Payload{
		event.SessionStarted{Question: "Q?", Agents: []event.AgentInfo{
			{ID: "local", Label: "agent1", Backend: "chatcompletion", Model: "my-finetune", BaseURL: "http://127.0.0.1:8000/v1", Unpriced: true},
			{ID: "gpt", Label: "agent2", Backend: "openai", Model: "gpt-5", BaseURL: "https://api.openai.com/v1"},
		}, Settings: event.Settings{MaxCostUSD: 0.5}},
		event.ToolServerStatus{Server: "everything", Status: "ready", Detail: "14 tools"},
		event.ToolServerStatus{Server: "everything", Status: "stopped"},
		event.UsageReported{Agent: "local", Usage: provider.Usage{InputTokens: 100, OutputTokens: 10}},
		event.UsageReported{Agent: "gpt", Usage: provider.Usage{InputTokens: 100, OutputTokens: 10}, CostUSD: 0.0123},
		event.ToolServerStatus{Server: "everything", Status: "died", Detail: "exit status 9"},
		event.SessionEnded{Status: event.StatusCompleted, DurationSeconds: 1},
	}
	var plain, auto bytes.Buffer
	pv, av := NewPlain(&plain), NewAutomation(&auto)
	for i, p := range ps {
		e := event.Event{Seq: int64(i + 1), Time: t0, Payload: p}
		pv.Handle(e)
		av.Handle(e)
	}
	budget := "max_cost_usd $0.500 cannot be enforced for agent1 local (model my-finetune): no price is known, so its spending is not counted"
	for _, want := range []string{
		"  agent1 = local (chatcompletion my-finetune at http://127.0.0.1:8000/v1)\n",
		"  agent2 = gpt (openai gpt-5 at https://api.openai.com/v1)\n",
		"warning: " + budget + "\n",
		"mcp server everything: ready: 14 tools\n",
		"mcp server everything: stopped\n",
		"session completed (exit 0) in 1.0s\nmcp server everything died during the session: exit status 9\n",
		"cost ≥ $0.012, some prices unknown (price unknown for my-finetune)\n",
		// Per agent and per round, the unpriced part is unknown, never $0.0000.
		"by agent: local 100 in, 10 out, unknown; gpt 100 in, 10 out, $0.012\n",
	} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("plain output lacks %q:\n%s", want, plain.String())
		}
	}
	for _, want := range []string{"WARNING: " + budget + "\n", "USAGE: tokens: 200 input, 20 output; cost ≥ $0.012, some prices unknown (price unknown for my-finetune)\n"} {
		if !strings.Contains(auto.String(), want) {
			t.Errorf("automation output lacks %q:\n%s", want, auto.String())
		}
	}
}
