package engine

import (
	"context"
	"iter"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// heavy reports times the usage of the provider it wraps: an agent that reads and writes more.
type heavy struct {
	provider.Provider
	times int64
}

func (h heavy) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		for c, err := range h.Provider.Stream(ctx, req) {
			if u, ok := c.(provider.UsageChunk); ok {
				u.Usage.InputTokens *= h.times
				u.Usage.OutputTokens *= h.times
				c = u
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// max_tokens_per_agent stops only the agent that passes it: its answer (the call it paid for)
// stays, it is reported dead with the reason, and the others vote on to a winner. Every fake
// call uses 15 tokens, the heavy agent's 150.
func TestRun_TokenCapStopsOnlyTheAgentOverIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		cap  int
		dead []string
	}{
		{"no cap", 0, nil},
		{"cap over what the light agents use", 100, []string{"a3"}},
		{"cap under one call of everyone's", 10, []string{"a1", "a2", "a3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, evs := run(t, t.Context(), Options{
				Agents: agents(answerThenVote("Paris.", "agent1"), answerThenVote("Paris, on the Seine.", "agent1"),
					heavy{answerThenVote("It is Paris.", "agent1"), 10}),
				Orchestrator: config.Orchestrator{MaxNewAnswersPerAgent: 1, DeferVotingUntilAllAnswered: true, MaxTokensPerAgent: tc.cap},
			})
			var dead []string
			for _, d := range ofType[event.AgentDead](evs) {
				dead = append(dead, d.Agent)
				if !strings.Contains(d.Reason, "over orchestrator.max_tokens_per_agent") {
					t.Errorf("%s died for %q", d.Agent, d.Reason)
				}
			}
			slices.Sort(dead)
			if !slices.Equal(dead, tc.dead) {
				t.Fatalf("dead %v, want %v", dead, tc.dead)
			}
			if len(tc.dead) == 3 {
				if res.ExitCode == 0 {
					t.Fatalf("every agent is out, yet the result is %+v", res)
				}
				return
			}
			if res.ExitCode != 0 || res.Winner != "a1" || res.FinalAnswer != "FINAL: Paris." {
				t.Fatalf("result %+v", res)
			}
			if got := len(ofType[event.AnswerSubmitted](evs)); got != 3 {
				t.Errorf("%d answers, want 3: the call that passes the cap still counts", got)
			}
		})
	}
}

// On Temporal (a Coordinator driving replicas' turns) max_tokens_per_agent stops the same
// agents as Run, each reported dead once, and the same agent wins.
func TestCoordinator_TokenCapAsInRun(t *testing.T) {
	for _, capTokens := range []int{100, 10} {
		mk := func() Options {
			return Options{Agents: agents(answerThenVote("Paris.", "agent1"), answerThenVote("Paris, on the Seine.", "agent1"),
				heavy{answerThenVote("It is Paris.", "agent1"), 10}),
				Orchestrator: config.Orchestrator{MaxNewAnswersPerAgent: 1, DeferVotingUntilAllAnswered: true, MaxTokensPerAgent: capTokens}}
		}
		local, localLog := run(t, t.Context(), mk())
		driven, log := drive(t, mk(), nil)
		deadOf := func(evs []event.Event) []string {
			var out []string
			for _, d := range ofType[event.AgentDead](evs) {
				out = append(out, d.Agent)
			}
			slices.Sort(out)
			return out
		}
		if got, want := deadOf(log), deadOf(localLog); !slices.Equal(got, want) {
			t.Errorf("cap %d: dead on Temporal %v, in Run %v", capTokens, got, want)
		}
		if driven.ExitCode != local.ExitCode || driven.Winner != local.Winner {
			t.Errorf("cap %d: driven exit %d winner %q; Run exit %d winner %q", capTokens, driven.ExitCode, driven.Winner, local.ExitCode, local.Winner)
		}
	}
}
