package engine

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// TestRun_RandomGatedSessions runs seeded sessions of misbehaving agents under random
// combinations of the v0.1.9x coordination settings through the real engine, and checks the
// session invariants, that no gate is passed, and that no session hangs: an agent left
// waiting by deferred voting or the fairness pause and never woken would show as a timeout.
func TestRun_RandomGatedSessions(t *testing.T) {
	sessions := 200
	if testing.Short() {
		sessions = 30
	}
	reasons := map[string]int{}
	for seed := range uint64(sessions) {
		synctest.Test(t, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			n := 1 + r.IntN(6)
			ps := make([]provider.Provider, n)
			for i := range ps {
				ps[i] = randomModel(seed+1000, i)
			}
			orch := config.Orchestrator{FailureBudget: 1 + r.IntN(3), MaxNewAnswersPerAgent: r.IntN(3),
				MaxNewAnswersGlobal: r.IntN(2 * n), DeferVotingUntilAllAnswered: r.IntN(2) == 0,
				DisableInjection: r.IntN(3) == 0, SkipVoting: r.IntN(5) == 0,
				Fairness: config.Fairness{Enabled: r.IntN(2) == 0, LeadCapAnswers: r.IntN(3), MaxMidstreamInjectionsPerRound: r.IntN(3)}}
			rec := &recorder{}
			bus := event.NewBus(nil)
			bus.Subscribe(rec)
			res := Run(t.Context(), Options{Question: "q", Agents: agents(ps...), Bus: bus, Orchestrator: orch,
				Timeouts: config.Timeouts{Agent: 10 * time.Second, Orchestrator: 30 * time.Minute}})
			reasons[res.EndReason]++
			evs := rec.all()
			if err := checkSession(evs); err != nil {
				t.Fatalf("seed %d (%d agents, %+v, exit %d): %v", seed, n, orch, res.ExitCode, err)
			}
			if res.EndReason == event.EndTimeout {
				t.Fatalf("seed %d (%d agents, %+v): the session hung until its timeout", seed, n, orch)
			}
			accepted, votes := 0, 0
			for _, e := range evs {
				switch e.Payload.(type) {
				case event.AnswerSubmitted:
					accepted++
				case event.VoteCast:
					votes++
				}
			}
			if orch.MaxNewAnswersGlobal > 0 && accepted > orch.MaxNewAnswersGlobal {
				t.Fatalf("seed %d: %d answers accepted over max_new_answers_global %d", seed, accepted, orch.MaxNewAnswersGlobal)
			}
			if orch.SkipVoting && votes > 0 {
				t.Fatalf("seed %d: %d votes with skip_voting", seed, votes)
			}
		})
	}
	t.Logf("end reasons: %v", reasons)
}
