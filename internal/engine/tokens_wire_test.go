package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/provider/anthropic"
	"massgen/internal/provider/openai"
	"massgen/internal/provider/providertest/cachefake"
)

// wireLatency is how long the fake APIs take before they stream a response: long enough that
// requests sent together overlap, as on a real API, so that none reads what another is still
// writing, whatever the machine's load.
const wireLatency = 30 * time.Millisecond

// wireAPIs are the wire formats the session is measured on: Anthropic's Messages API, which
// caches at the request's cache_control breakpoints, and OpenAI's Responses API (the openai
// backend), which caches every long prompt by itself in 128-token steps.
var wireAPIs = []string{"anthropic", "openai"}

// wireTeam plays tokenTeam's session through massgen's real providers (the official SDKs)
// against a local fake of api whose prompt cache behaves as the real one's (cachefake): one
// server per agent, one cache for the whole API, so that agents on one model share its
// entries and agents on models of their own do not.
func wireTeam(tb testing.TB, api string, n, answerTokens int, mixed bool, orch config.Orchestrator) (tokenRun, []cachefake.Call) {
	tb.Helper()
	var acache cachefake.Anthropic
	var ocache cachefake.OpenAI
	agents := make([]Agent, n)
	servers := make([]*cachefake.Server, n)
	for i := range agents {
		model := api + "-model"
		if mixed {
			model = fmt.Sprintf("%s-model-%d", api, i+1)
		}
		o := cachefake.Options{Play: wirePlayer(tokenAnswer(i, answerTokens)), Latency: wireLatency}
		var p provider.Provider
		var err error
		switch api {
		case "anthropic":
			servers[i] = cachefake.NewAnthropic(&acache, o)
			p, err = anthropic.New(provider.Options{Type: "claude", Model: model, APIKey: "test-key", BaseURL: servers[i].URL, MaxRetries: 1})
		case "openai":
			servers[i] = cachefake.NewResponses(&ocache, o)
			p, err = openai.New(provider.Options{Type: "openai", Model: model, APIKey: "test-key", BaseURL: servers[i].URL + "/v1", MaxRetries: 1})
		}
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(servers[i].Close)
		agents[i] = Agent{ID: fmt.Sprintf("a%d", i+1), Backend: api, Model: model, Provider: p}
	}
	r := tokenRunOf(tb, agents, answerTokens, orch)
	var calls []cachefake.Call
	for k, s := range servers {
		for _, c := range s.Calls() {
			if tokenTrace {
				tb.Logf("wire %s %s in=%6d read=%6d written=%6d", agents[k].ID, c.Model, c.Input, c.Cached, c.Written)
			}
			calls = append(calls, c)
		}
	}
	return r, calls
}

// The figures the session reaches on the wire, where a prefix is read only once the request
// that wrote it is over (see README, "Cheaper sessions"): with one model 0.40 x I_min, the
// floor there (the agents' first requests are too short to cache, and every answer is read
// once at the full price); with a model each 0.82 x, under issue 25's 0.9. The usage the
// engine adds up is the usage the fake servers billed.
func TestTokensWire_SessionBillsAtMostWhatTheWireAllows(t *testing.T) {
	for _, api := range wireAPIs {
		for _, tc := range []struct {
			name  string
			mixed bool
			max   float64
		}{
			{"one model", false, 0.40},
			{"a model each", true, 0.82},
		} {
			t.Run(api+"/"+tc.name, func(t *testing.T) {
				r, calls := wireTeam(t, api, 3, 1500, tc.mixed, config.Orchestrator{})
				var input, cached int64
				for _, c := range calls {
					input, cached = input+c.Input, cached+c.Cached
				}
				if len(calls) != r.calls || input != r.input || cached != r.cached {
					t.Errorf("the engine counted %d calls, %d input, %d cached; the servers billed %d, %d, %d", r.calls, r.input, r.cached, len(calls), input, cached)
				}
				if _, billed, _, _ := r.ratios(); billed > tc.max {
					t.Errorf("billed %.3f x I_min, want at most %.2f (input %d, cached %d, P %d)", billed, tc.max, r.input, r.cached, r.p)
				}
			})
		}
	}
}

// wirePlayer is tokenAgent on the wire: it answers once with answer, then votes for the first
// label it is offered; it presents with a short text.
func wirePlayer(content string) func(cachefake.Turn) cachefake.Move {
	var mu sync.Mutex
	answered, answerStep := false, answer(content)
	return func(t cachefake.Turn) cachefake.Move {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case !strings.Contains(strings.Join(t.Tools, ","), "vote") || strings.Contains(t.LastUser, "Coordination is over."):
			return cachefake.Move{Text: "The final answer."}
		case !answered || len(t.VoteLabels) == 0:
			answered = true
			return cachefake.Move{Tool: "new_answer", Args: answerStep.calls[0].Arguments}
		default:
			return cachefake.Move{Tool: "vote", Args: vote(t.VoteLabels[0], "complete and correct").calls[0].Arguments}
		}
	}
}

// BenchmarkTokensWire is BenchmarkTokens on the wire: 3 agents with 1,500-token answers, one
// model for all or a model each, in each of the settings BenchmarkTokens compares, through
// the real providers against local fakes of the Messages and Responses APIs whose caches
// behave as the real ones (see cachefake). Run with:
//
//	go test -run '^$' -bench TokensWire -benchtime 1x ./internal/engine/
func BenchmarkTokensWire(b *testing.B) {
	for _, api := range wireAPIs {
		for _, team := range []string{"same", "mixed"} {
			for _, v := range tokenVariants {
				b.Run(fmt.Sprintf("api=%s/models=%s/%s", api, team, v.name), func(b *testing.B) {
					var r tokenRun
					for b.Loop() {
						r, _ = wireTeam(b, api, 3, 1500, team == "mixed", v.orch)
					}
					reportTokens(b, r)
				})
			}
		}
	}
}
