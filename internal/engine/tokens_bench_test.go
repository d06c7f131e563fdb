package engine

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
)

// Cache discounts: what a cached input token costs relative to an uncached one. Anthropic
// bills cache reads at 0.1x and cache writes at 1.25x; OpenAI bills cached input at 0.5x
// (gpt-4o), 0.25x (gpt-4.1) or 0.1x (gpt-5) with no write premium.
// tokenTrace logs every call's input when set (TOKENS_TRACE=1).
var tokenTrace = os.Getenv("TOKENS_TRACE") != ""

const (
	anthropicRead  = 0.1
	anthropicWrite = 1.25
	openAICached   = 0.5
)

// tokenRun is the input a session billed, against I_min = (2N+1)P + N(N+1)A: one answer round,
// one vote round and a final presentation, each call reading the shared prompt P once and
// every answer it must read (A tokens each) once.
type tokenRun struct {
	n             int
	p, a          int64 // shared prompt and answer tokens
	input, cached int64
	calls         int
}

func (r tokenRun) iMin() float64 {
	n := int64(r.n)
	return float64((2*n+1)*r.p + n*(n+1)*r.a)
}

// ratios: raw input, billed with cache reads at 0.1x (Anthropic's read price, writes at 1x),
// billed at Anthropic's prices (reads 0.1x, every uncached token written at 1.25x), and
// billed at OpenAI's 0.5x.
func (r tokenRun) ratios() (input, billed, anthropic, openai float64) {
	unc, c, m := float64(r.input-r.cached), float64(r.cached), r.iMin()
	return float64(r.input) / m, (unc + anthropicRead*c) / m, (anthropicWrite*unc + anthropicRead*c) / m, (unc + openAICached*c) / m
}

// tokenSession plays the session I_min describes: n agents on one caching model each answer
// once (answerTokens long) and vote once; the winner presents. defer_voting_until_all_answered
// with one answer per agent keeps the rounds apart, so that every run measures the same
// session rather than a race between fast agents.
func tokenSession(tb testing.TB, n, answerTokens int, orch config.Orchestrator) tokenRun {
	return tokenTeam(tb, n, answerTokens, false, orch)
}

// tokenTeam is tokenSession with, when mixed, every agent on a model of its own: each has its
// own prefix cache, so only what the agent itself sent before is read from a cache.
func tokenTeam(tb testing.TB, n, answerTokens int, mixed bool, orch config.Orchestrator) tokenRun {
	tb.Helper()
	cache := &promptCache{}
	agents := make([]Agent, n)
	for i := range agents {
		model := "m"
		if mixed {
			cache, model = &promptCache{}, fmt.Sprintf("m%d", i+1)
		}
		agents[i] = Agent{ID: fmt.Sprintf("a%d", i+1), Backend: "fake", Model: model, Provider: &tokenAgent{cache: cache, answer: tokenAnswer(i, answerTokens)}}
	}
	return tokenRunOf(tb, agents, answerTokens, orch)
}

// tokenAnswer is agent i's answer, answerTokens long.
func tokenAnswer(i, answerTokens int) string {
	body := fmt.Sprintf("Answer %d. ", i+1)
	return body + strings.Repeat("x", max(answerTokens*4-len(body), 0))
}

// tokenRunOf plays the session of tokenTeam with agents and adds up the input they billed.
func tokenRunOf(tb testing.TB, agents []Agent, answerTokens int, orch config.Orchestrator) tokenRun {
	tb.Helper()
	orch.MaxNewAnswersPerAgent, orch.DeferVotingUntilAllAnswered = 1, true
	r := tokenRun{n: len(agents), a: int64(answerTokens)}
	var mu sync.Mutex
	bus := event.NewBus(nil)
	bus.Subscribe(event.SinkFunc(func(e event.Event) {
		if u, ok := e.Payload.(event.UsageReported); ok {
			mu.Lock()
			defer mu.Unlock()
			if r.calls == 0 {
				// P: the session's first request, before any answer exists (tools, system, task).
				r.p = u.Usage.InputTokens
			}
			if tokenTrace {
				tb.Logf("%s round=%d pres=%v in=%6d cached=%6d", u.Agent, u.Round, u.Presentation, u.Usage.InputTokens, u.Usage.CachedInputTokens)
			}
			r.input += u.Usage.InputTokens
			r.cached += u.Usage.CachedInputTokens
			r.calls++
		}
	}))
	res := Run(tb.Context(), Options{Question: "Explain, with a worked example, how a hash map handles collisions.",
		Agents: agents, Bus: bus, Orchestrator: orch})
	if res.ExitCode != 0 {
		tb.Fatalf("session failed: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	return r
}

// BenchmarkTokens reports a session's input tokens against I_min, raw and billed with the
// providers' cache discounts, for N agents with 1,500-token answers. Run with:
//
//	go test -run '^$' -bench Tokens -benchtime 1x ./internal/engine/
func BenchmarkTokens(b *testing.B) {
	for _, n := range []int{3, 5, 20} {
		for _, team := range []string{"same", "mixed"} {
			for _, v := range tokenVariants {
				b.Run(fmt.Sprintf("agents=%d/models=%s/%s", n, team, v.name), func(b *testing.B) {
					var r tokenRun
					for b.Loop() {
						r = tokenTeam(b, n, 1500, team == "mixed", v.orch)
					}
					reportTokens(b, r)
				})
			}
		}
	}
}

func reportTokens(b *testing.B, r tokenRun) {
	in, billed, anth, oai := r.ratios()
	b.ReportMetric(in, "input/I_min")
	b.ReportMetric(billed, "billed-0.1x/I_min")
	b.ReportMetric(anth, "anthropic/I_min")
	b.ReportMetric(oai, "openai-0.5x/I_min")
	b.ReportMetric(float64(r.input)/float64(r.n), "input-tokens/agent")
	b.ReportMetric(float64(r.calls), "calls")
}

// tokenVariants are the settings the benchmark compares.
var tokenVariants = []struct {
	name string
	orch config.Orchestrator
}{
	{"before", config.Orchestrator{TurnContext: config.TurnContinue, PresentationContext: config.PresentFresh, PeerView: config.PeerViewAll}},
	{"shared-turns", config.Orchestrator{PresentationContext: config.PresentFresh, PeerView: config.PeerViewAll}},
	{"default", config.Orchestrator{PeerView: config.PeerViewAll}},
	{"winner_reuse", config.Orchestrator{FinalAnswerStrategy: config.StrategyWinnerReuse, PeerView: config.PeerViewAll}},
	{"bounded", config.Orchestrator{PeerView: config.PeerViewBounded}},
}

// BenchmarkTokensLargeTeams compares what an agent reads with every peer's answer in view and
// with a bounded view (peer_view_size 6), for large teams on short (50-token) answers: with
// all-to-all input per agent grows with N, with the bounded view it stays flat. Run with:
//
//	go test -run '^$' -bench TokensLargeTeams -benchtime 1x ./internal/engine/
func BenchmarkTokensLargeTeams(b *testing.B) {
	for _, n := range []int{20, 200} {
		for _, view := range []string{config.PeerViewAll, config.PeerViewBounded} {
			b.Run(fmt.Sprintf("agents=%d/peer_view=%s", n, view), func(b *testing.B) {
				var r tokenRun
				for b.Loop() {
					r = tokenSession(b, n, 50, config.Orchestrator{PeerView: view})
				}
				reportTokens(b, r)
			})
		}
	}
}
