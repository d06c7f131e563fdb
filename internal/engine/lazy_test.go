package engine

import (
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider/scripted"
)

func scriptedAgent(id string, s config.Script) Agent {
	return Agent{ID: id, Backend: "scripted", Model: "m", Provider: scripted.New(s, "m")}
}

// callsBy counts the model calls of each agent.
func callsBy(evs []event.Event) map[string]int {
	n := map[string]int{}
	for _, c := range ofType[event.ModelCalled](evs) {
		n[c.Agent]++
	}
	return n
}

func TestRun_LazyStart(t *testing.T) {
	for _, tc := range []struct {
		name      string
		second    config.Script // the second agent's script; the first answers Paris
		winner    string
		calls     map[string]int
		thirdJoin bool
	}{
		{"agreement: the third never starts", config.Script{Vote: "agent1"}, "a1",
			map[string]int{"a1": 1, "a2": 1}, false},
		{"disagreement: the third joins and decides", config.Script{Answers: []string{"Lyon"}, Vote: "self"}, "a1",
			map[string]int{"a1": 2, "a2": 2, "a3": 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agents := []Agent{
				scriptedAgent("a1", config.Script{Answers: []string{"Paris"}, Vote: "self"}),
				scriptedAgent("a2", tc.second),
				scriptedAgent("a3", config.Script{Vote: "agent1"}),
			}
			o := config.Orchestrator{LazyStartAgents: 1, LazyStartAgreement: 2, FinalAnswerStrategy: config.StrategyWinnerReuse}
			res, evs := run(t, t.Context(), Options{Agents: agents, Orchestrator: o})
			if res.ExitCode != 0 || res.Winner != tc.winner {
				t.Fatalf("exit %d, winner %q (%v); want 0, %s", res.ExitCode, res.Winner, res.Err, tc.winner)
			}
			got := callsBy(evs)
			for id, want := range tc.calls {
				if got[id] != want {
					t.Errorf("%s made %d model calls, want %d (all: %v)", id, got[id], want, got)
				}
			}
			if joined := got["a3"] > 0; joined != tc.thirdJoin {
				t.Errorf("a3 joined: %v, want %v", joined, tc.thirdJoin)
			}
			waits := ofType[event.AgentWaiting](evs)
			if len(waits) == 0 || waits[0].Reason == "" {
				t.Errorf("no wait published for the agents held back: %+v", waits)
			}
		})
	}
}

// On a question the agents agree on, a lazy team makes at most half the coordination calls of
// MassGen's way (every agent answers, then every agent votes): issue 25's target. An agreeing
// agent that joins late sees the answer it agrees with and votes for it; one that starts at
// once has nothing to agree with yet, so it writes the same answer.
func TestLazyStart_HalvesCallsOnAgreement(t *testing.T) {
	calls := func(o config.Orchestrator, late config.Script) int {
		agents := []Agent{scriptedAgent("a1", config.Script{Answers: []string{"Paris"}, Vote: "agent1"})}
		for _, id := range []string{"a2", "a3"} {
			agents = append(agents, scriptedAgent(id, late))
		}
		o.FinalAnswerStrategy = config.StrategyWinnerReuse
		res, evs := run(t, t.Context(), Options{Agents: agents, Orchestrator: o})
		if res.ExitCode != 0 || res.FinalAnswer != "Paris" {
			t.Fatalf("lazy %d, decided %v: exit %d, final answer %q", o.LazyStartAgents, o.EndWhenDecided, res.ExitCode, res.FinalAnswer)
		}
		return len(ofType[event.ModelCalled](evs))
	}
	same := config.Script{Answers: []string{"Paris"}, Vote: "agent1"}
	massgen := calls(config.Orchestrator{}, same)
	decided := calls(config.Orchestrator{EndWhenDecided: true}, same)
	lazy := calls(config.Orchestrator{LazyStartAgents: 1, LazyStartAgreement: 2}, config.Script{Vote: "agent1"})
	t.Logf("coordination calls on an agreed question: every vote %d, end_when_decided %d, lazy start %d", massgen, decided, lazy)
	// At least an answer and a vote each; how many more depends on who answers first.
	if massgen < 6 || decided > massgen || lazy != 2 || 2*lazy > massgen {
		t.Errorf("calls: every vote %d (want 6 or more), end_when_decided %d, lazy %d (want 2, at most half)", massgen, decided, lazy)
	}
}
