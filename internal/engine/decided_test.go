package engine

import (
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider/scripted"
)

// Two quick agents agree; the third is slow. With end_when_decided the session does not wait
// for the third vote, which cannot change the winner.
func TestRun_EndWhenDecided(t *testing.T) {
	team := func() []Agent {
		mk := func(id string, latency time.Duration, vote string) Agent {
			s := config.Script{Answers: []string{"answer of " + id}, Vote: vote, Latency: latency}
			return Agent{ID: id, Backend: "scripted", Model: "m", Provider: scripted.New(s, "m")}
		}
		return []Agent{mk("a1", time.Millisecond, "agent1"), mk("a2", time.Millisecond, "agent1"), mk("slow", 300*time.Millisecond, "agent3")}
	}
	for _, tc := range []struct {
		decided bool
		reason  string
		votes   int
	}{{false, event.EndConsensus, 3}, {true, event.EndDecided, 2}} {
		o := config.Orchestrator{EndWhenDecided: tc.decided, FinalAnswerStrategy: config.StrategyWinnerReuse}
		res, evs := run(t, t.Context(), Options{Agents: team(), Orchestrator: o})
		ended := ofType[event.CoordinationEnded](evs)
		if res.ExitCode != 0 || res.Winner != "a1" || len(ended) != 1 || ended[0].Reason != tc.reason {
			t.Fatalf("end_when_decided %v: exit %d winner %s ended %+v", tc.decided, res.ExitCode, res.Winner, ended)
		}
		counted := 0
		for _, c := range ended[0].Tally {
			counted += c.Votes
		}
		if counted != tc.votes {
			t.Errorf("end_when_decided %v: %d votes counted, want %d", tc.decided, counted, tc.votes)
		}
	}
}
