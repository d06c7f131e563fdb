// Package usage prices token usage: a table of current models in US dollars per million
// tokens, cached input included, and the lookup that finds a model's row.
package usage

import (
	"sort"
	"strings"

	"massgen/internal/provider"
)

// Price is a model's price in USD per million tokens. CachedInput applies to tokens read from
// the provider's prompt cache, CacheWrite to tokens written to it (0: billed as Input).
type Price struct {
	Input, CachedInput, CacheWrite, Output float64
}

// Cost prices u. Output includes reasoning tokens, as every provider bills them.
func (p Price) Cost(u provider.Usage) float64 {
	uncached := u.InputTokens - u.CachedInputTokens - u.CacheWriteTokens
	if uncached < 0 {
		uncached = 0
	}
	write := p.CacheWrite
	if write == 0 {
		write = p.Input
	}
	return (float64(uncached)*p.Input + float64(u.CachedInputTokens)*p.CachedInput +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*p.Output) / 1e6
}

// prices are list prices (standard tier, prompts under 200k tokens) as published by each
// provider: late 2025, and the GPT-5.4/5.5, Claude 4.6 and Gemini 3.x families as listed in
// mid 2026. Keys are model names or prefixes; the longest matching prefix wins,
// so dated snapshots ("claude-sonnet-4-5-20250929") find their family.
var prices = map[string]Price{
	// OpenAI
	"gpt-5.5":      {5, 0.50, 0, 30},
	"gpt-5.4":      {2.50, 0.25, 0, 15},
	"gpt-5.4-mini": {0.75, 0.075, 0, 4.50},
	"gpt-5.4-nano": {0.20, 0.02, 0, 1.25},
	"gpt-5":        {1.25, 0.125, 0, 10},
	"gpt-5-mini":   {0.25, 0.025, 0, 2},
	"gpt-5-nano":   {0.05, 0.005, 0, 0.40},
	"gpt-5-codex":  {1.25, 0.125, 0, 10},
	"gpt-4.1":      {2, 0.50, 0, 8},
	"gpt-4.1-mini": {0.40, 0.10, 0, 1.60},
	"gpt-4.1-nano": {0.10, 0.025, 0, 0.40},
	"gpt-4o":       {2.50, 1.25, 0, 10},
	"gpt-4o-mini":  {0.15, 0.075, 0, 0.60},
	"o3":           {2, 0.50, 0, 8},
	"o3-mini":      {1.10, 0.55, 0, 4.40},
	"o4-mini":      {1.10, 0.275, 0, 4.40},
	// computer_use's model (no cached-input price listed)
	"computer-use-preview": {3, 3, 0, 12},
	// Anthropic (cache writes cost 1.25x input)
	"claude-opus-4-6":   {5, 0.50, 6.25, 25},
	"claude-sonnet-4-6": {3, 0.30, 3.75, 15},
	"claude-opus-4-5":   {5, 0.50, 6.25, 25},
	"claude-opus-4-1":   {15, 1.50, 18.75, 75},
	"claude-opus-4":     {15, 1.50, 18.75, 75},
	"claude-sonnet-4-5": {3, 0.30, 3.75, 15},
	"claude-sonnet-4":   {3, 0.30, 3.75, 15},
	"claude-haiku-4-5":  {1, 0.10, 1.25, 5},
	"claude-3-7-sonnet": {3, 0.30, 3.75, 15},
	"claude-3-5-sonnet": {3, 0.30, 3.75, 15},
	"claude-3-5-haiku":  {0.80, 0.08, 1, 4},
	"claude-3-opus":     {15, 1.50, 18.75, 75},
	"claude-3-haiku":    {0.25, 0.03, 0.30, 1.25},
	// Google
	"gemini-3.1-pro":        {2, 0.20, 0, 12},
	"gemini-3.1-flash-lite": {0.25, 0.025, 0, 1.50},
	"gemini-3-flash":        {0.50, 0.05, 0, 3},
	"gemini-3-pro":          {2, 0.20, 0, 12},
	"gemini-2.5-pro":        {1.25, 0.31, 0, 10},
	"gemini-2.5-flash":      {0.30, 0.075, 0, 2.50},
	"gemini-2.5-flash-lite": {0.10, 0.025, 0, 0.40},
	// gemini_computer_use's model, priced as 2.5 Pro
	"gemini-2.5-computer-use-preview": {1.25, 0.31, 0, 10},
	"gemini-2.0-flash":                {0.10, 0.025, 0, 0.40},
	// xAI
	"grok-4":      {3, 0.75, 0, 15},
	"grok-4-fast": {0.20, 0.05, 0, 0.50},
	"grok-3":      {3, 0.75, 0, 15},
	"grok-3-mini": {0.30, 0.075, 0, 0.50},
	// DeepSeek
	"deepseek-chat":     {0.28, 0.028, 0, 0.42},
	"deepseek-reasoner": {0.28, 0.028, 0, 0.42},
	// Open models as served by Groq, Cerebras, Together, Fireworks (their list prices differ a
	// little; these are Groq's, the most common in MassGen configs)
	"llama-3.3-70b-versatile": {0.59, 0.59, 0, 0.79},
	"llama-3.1-8b-instant":    {0.05, 0.05, 0, 0.08},
	"openai/gpt-oss-120b":     {0.15, 0.15, 0, 0.75},
	"openai/gpt-oss-20b":      {0.075, 0.075, 0, 0.30},
	"qwen-max":                {1.60, 1.60, 0, 6.40},
	"glm-4.5":                 {0.60, 0.11, 0, 2.20},
	"glm-4.6":                 {0.60, 0.11, 0, 2.20},
	"kimi-k2":                 {0.60, 0.15, 0, 2.50},
	// Embeddings (memory): input only
	"text-embedding-3-small": {0.02, 0.02, 0, 0},
	"text-embedding-3-large": {0.13, 0.13, 0, 0},
	"text-embedding-ada-002": {0.10, 0.10, 0, 0},
	"gemini-embedding-001":   {0.15, 0.15, 0, 0},
}

// free are backends that run locally or offline (simulated: massgen eval --simulate): every
// model on them costs nothing.
var free = map[string]bool{"scripted": true, "simulated": true, "ollama": true, "lmstudio": true, "vllm": true, "sglang": true}

// keys holds the table's keys, longest first, for prefix lookup.
var keys = longestFirst(prices)

func longestFirst[V any](table map[string]V) []string {
	k := make([]string, 0, len(table))
	for name := range table {
		k = append(k, name)
	}
	sort.Slice(k, func(i, j int) bool { return len(k[i]) > len(k[j]) || len(k[i]) == len(k[j]) && k[i] < k[j] })
	return k
}

// find is the row of model in table (whose keys, longest first, are keys): the model itself,
// or the longest key it starts with followed by a separator. Provider prefixes such as
// "openai/" or "models/" are tried with and without.
func find[V any](table map[string]V, keys []string, model string) (V, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	for _, cand := range []string{m, strings.TrimPrefix(m, "models/"), m[strings.LastIndexByte(m, '/')+1:]} {
		if p, ok := table[cand]; ok {
			return p, true
		}
		for _, k := range keys {
			if strings.HasPrefix(cand, k) && (len(cand) == len(k) || cand[len(k)] == '-' || cand[len(k)] == '@' || cand[len(k)] == ':') {
				return table[k], true
			}
		}
	}
	var zero V
	return zero, false
}

// Lookup returns the price of model on backend and whether it is known. Provider prefixes such
// as "openai/" or "models/" are tried with and without.
func Lookup(backend, model string) (Price, bool) {
	if free[backend] {
		return Price{}, true
	}
	return find(prices, keys, model)
}

// Known reports whether the price table knows model on backend, so that Cost is its real
// cost. An unknown model is reported as costing 0, which is not free: views say its cost is
// unknown, and max_cost_usd cannot stop its spending.
func Known(backend, model string) bool {
	_, ok := Lookup(backend, model)
	return ok
}

// Cost prices u for model on backend, hosted web and file searches included; unknown models
// cost 0 (and Lookup says they are unknown), their searches do not.
func Cost(backend, model string, u provider.Usage) float64 {
	p, _ := Lookup(backend, model)
	return p.Cost(u) + float64(u.WebSearches)*SearchFee(backend, model)/1000 +
		float64(u.FileSearches)*FileSearchFee(backend)/1000
}

// FileSearchFee is the list price in USD of 1,000 hosted file searches: OpenAI's file_search
// tool calls. The vector store that holds upload_files' documents is billed by the GB-day
// beyond the first GB free, and lives for one session: nothing worth counting.
func FileSearchFee(backend string) float64 {
	if backend == "openai" {
		return 2.5
	}
	return 0
}

// SearchFee is the list price in USD of 1,000 hosted web searches (for xAI, 1,000 sources its
// live search used). Gemini bills grounded prompts, $35 per 1,000 up to 2.5 and $14 per 1,000
// search queries from Gemini 3.
func SearchFee(backend, model string) float64 {
	switch backend {
	case "openai", "claude":
		return 10
	case "grok":
		return 25
	case "gemini":
		if strings.HasPrefix(strings.TrimPrefix(strings.ToLower(model), "models/"), "gemini-3") {
			return 14
		}
		return 35
	}
	return 0
}
