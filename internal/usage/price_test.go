package usage

import (
	"math"
	"testing"

	"massgen/internal/provider"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		backend, model string
		want           Price
		ok             bool
	}{
		{"openai", "gpt-5", prices["gpt-5"], true},
		{"openai", "gpt-5-mini", prices["gpt-5-mini"], true},
		{"openai", "gpt-5-mini-2025-08-07", prices["gpt-5-mini"], true},
		{"claude", "claude-sonnet-4-5-20250929", prices["claude-sonnet-4-5"], true},
		{"claude", "claude-sonnet-4-20250514", prices["claude-sonnet-4"], true},
		{"gemini", "models/gemini-2.5-flash", prices["gemini-2.5-flash"], true},
		{"gemini", "gemini-2.5-flash-lite", prices["gemini-2.5-flash-lite"], true},
		{"openrouter", "openai/gpt-4o-mini", prices["gpt-4o-mini"], true},
		{"groq", "openai/gpt-oss-120b", prices["openai/gpt-oss-120b"], true},
		{"ollama", "llama3.2", Price{}, true},
		{"scripted", "anything", Price{}, true},
		{"chatcompletion", "my-finetune", Price{}, false},
		{"openai", "gpt-50", Price{}, false}, // a prefix of the name, not a family
		// The defaults of the CLI and API backends (MassGen v0.1.9x) are priced, each as its own
		// family: gpt-5.4 is not gpt-5, gemini-3.1-pro not gemini-3-pro.
		{"codex", "gpt-5.4", Price{2.50, 0.25, 0, 15}, true},
		{"openai", "gpt-5.4-mini-2026-03-01", prices["gpt-5.4-mini"], true},
		{"claude", "claude-opus-4-6", Price{5, 0.50, 6.25, 25}, true},
		{"gemini", "gemini-3-flash-preview", Price{0.50, 0.05, 0, 3}, true},
		{"gemini_cli", "gemini-3.1-pro-preview", Price{2, 0.20, 0, 12}, true},
		{"openai", "gpt-5.3", Price{}, false}, // not gpt-5's price
	}
	for _, tc := range tests {
		got, ok := Lookup(tc.backend, tc.model)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Lookup(%s, %s) = %+v %v, want %+v %v", tc.backend, tc.model, got, ok, tc.want, tc.ok)
		}
		if known := Known(tc.backend, tc.model); known != tc.ok {
			t.Errorf("Known(%s, %s) = %v, want %v", tc.backend, tc.model, known, tc.ok)
		}
	}
}

func TestCost(t *testing.T) {
	// 1M input of which 200k cached and 100k written to the cache, 50k output.
	u := provider.Usage{InputTokens: 1_000_000, CachedInputTokens: 200_000, CacheWriteTokens: 100_000, OutputTokens: 50_000, ReasoningTokens: 10_000}
	got := Cost("claude", "claude-sonnet-4-5", u)
	want := 0.7*3 + 0.2*0.30 + 0.1*3.75 + 0.05*15
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("claude cost = %v, want %v", got, want)
	}
	// Without a cache-write price, writes are billed as input.
	got = Cost("openai", "gpt-5", provider.Usage{InputTokens: 1000, CacheWriteTokens: 1000, OutputTokens: 0})
	if want := 1000 * 1.25 / 1e6; math.Abs(got-want) > 1e-12 {
		t.Errorf("gpt-5 write cost = %v, want %v", got, want)
	}
	if c := Cost("chatcompletion", "unknown", u); c != 0 {
		t.Errorf("unknown model costs %v", c)
	}
	// Hosted web searches are billed per 1,000 on top of the tokens.
	for _, tc := range []struct {
		backend, model string
		want           float64
	}{
		{"claude", "claude-sonnet-4-5", 3*3/1e6 + 4*10.0/1000},
		{"openai", "gpt-5", 3*1.25/1e6 + 4*10.0/1000},
		{"gemini", "gemini-2.5-flash", 3*0.30/1e6 + 4*35.0/1000},
		{"gemini", "models/gemini-3-pro-preview", 3*2/1e6 + 4*14.0/1000},
		{"grok", "grok-4", 3*3/1e6 + 4*25.0/1000},
	} {
		got := Cost(tc.backend, tc.model, provider.Usage{InputTokens: 3, WebSearches: 4})
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s %s with 4 searches = %v, want %v", tc.backend, tc.model, got, tc.want)
		}
	}
}
