package coord

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// inPlay lists the agents that need a turn now.
func inPlay(m *Machine) []int {
	var out []int
	for i := range m.Agents() {
		if m.NeedsTurn(i) {
			out = append(out, i)
		}
	}
	return out
}

func TestLazy_AgreementSettlesWithoutTheRest(t *testing.T) {
	m := New(Settings{Agents: 3, Lazy: &LazySettings{Start: 1}})
	if got := inPlay(m); len(got) != 1 || got[0] != 0 {
		t.Fatalf("at first in play: %v, want [0]", got)
	}
	if m.Blocked(1) != lazyHeldReason || !m.Held(2) {
		t.Fatalf("agents 2 and 3 are not held back: %q", m.Blocked(1))
	}
	if m.ReleaseNext() != -1 {
		t.Fatal("an agent joined while agent1 had not answered yet")
	}
	answer(t, m, 0, "Paris")
	// Alone with its answer it waits for a second opinion instead of voting for itself.
	if m.NeedsTurn(0) || m.Blocked(0) != lazyAloneReason {
		t.Fatalf("agent1 after its answer: needs turn %v, blocked %q", m.NeedsTurn(0), m.Blocked(0))
	}
	if _, ok := m.Decided(); ok {
		t.Fatal("one agent settled the question alone")
	}
	if got := m.ReleaseNext(); got != 1 {
		t.Fatalf("ReleaseNext = %d, want agent2 (1)", got)
	}
	if m.ReleaseNext() != -1 {
		t.Fatal("a second agent joined while agent2 had not acted")
	}
	if out := vote(m, 1, Label(0)); out.Kind != Voted {
		t.Fatalf("agent2's vote: %+v", out)
	}
	if w, ok := m.Decided(); !ok || w != 0 {
		t.Fatalf("Decided() = %d, %v after two agents agree; want 0, true", w, ok)
	}
	if m.ReleaseNext() != -1 || !m.Held(2) {
		t.Fatal("agent3 joined although the question was settled")
	}
}

func TestLazy_DisagreementBringsTheNext(t *testing.T) {
	m := New(Settings{Agents: 3, Lazy: &LazySettings{Start: 1}})
	answer(t, m, 0, "Paris")
	m.ReleaseNext()
	answer(t, m, 1, "Lyon is the capital")
	// Two answers in play: neither author waits any more.
	if got := inPlay(m); len(got) != 2 {
		t.Fatalf("in play after a second answer: %v", got)
	}
	if m.ReleaseNext() != -1 {
		t.Fatal("agent3 joined while the others still had to vote")
	}
	vote(m, 0, Label(0))
	vote(m, 1, Label(1))
	if _, ok := m.Decided(); ok {
		t.Fatal("a 1-1 split settled the question")
	}
	if got := m.ReleaseNext(); got != 2 {
		t.Fatalf("ReleaseNext = %d after a split, want agent3 (2)", got)
	}
	vote(m, 2, Label(0))
	if w, ok := m.Decided(); !ok || w != 0 || !m.Converged() {
		t.Fatalf("after agent3's vote: Decided %d %v, converged %v", w, ok, m.Converged())
	}
}

// An agent in play that dies lets the next one join, so a lazy team never waits on the dead.
func TestLazy_DeathBringsTheNext(t *testing.T) {
	m := New(Settings{Agents: 3, FailureBudget: 1, Lazy: &LazySettings{Start: 1}})
	m.TurnFailed(0)
	if got := m.ReleaseNext(); got != 1 {
		t.Fatalf("ReleaseNext = %d after agent1 died, want 1", got)
	}
	answer(t, m, 1, "Paris")
	if got := m.ReleaseNext(); got != 2 {
		t.Fatalf("ReleaseNext = %d with agent2 alone, want 2", got)
	}
	if m.Held(2) || m.Blocked(1) != "" {
		t.Fatalf("agent3 joined, yet agent2 still waits: %q", m.Blocked(1))
	}
	vote(m, 2, Label(1))
	if w, ok := m.Decided(); !ok || w != 1 {
		t.Fatalf("Decided() = %d, %v with the only answer backed twice", w, ok)
	}
}

// TestLazy_NeverStuck walks random lazy machines: at every point some agent needs a turn, an
// agent can join, or the winner is settled; so a lazy session always moves on.
func TestLazy_NeverStuck(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 2000 {
		agents := 2 + rng.IntN(4)
		m := New(Settings{Agents: agents, FailureBudget: 1,
			Lazy: &LazySettings{Start: 1 + rng.IntN(agents-1), Agreement: 2 + rng.IntN(agents-1)}})
		for step := 0; ; step++ {
			if step > 100 {
				t.Fatalf("machine %d: no end after 100 steps", n)
			}
			if _, ok := m.Decided(); ok || m.Converged() || m.Live() == 0 {
				break
			}
			play := inPlay(m)
			if len(play) == 0 {
				if m.ReleaseNext() < 0 {
					t.Fatalf("machine %d (%d agents): stuck: nobody needs a turn, nobody joins, not decided", n, agents)
				}
				continue
			}
			i := play[rng.IntN(len(play))]
			switch r := rng.IntN(10); {
			case r == 0:
				m.TurnFailed(i)
			case r < 4 && m.AnswerCount(i) < 2:
				answer(t, m, i, fmt.Sprintf("answer %d of agent %d, %d", m.AnswerCount(i)+1, i, rng.Int()))
			default:
				var with []int
				for k := range agents {
					if m.AnswerCount(k) > 0 {
						with = append(with, k)
					}
				}
				if len(with) == 0 {
					answer(t, m, i, fmt.Sprintf("first answer of agent %d", i))
					continue
				}
				vote(m, i, Label(with[rng.IntN(len(with))]))
			}
		}
	}
}
