package coord

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDecided(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []int    // agents that answer, in order
		votes   [][2]int // voter, target
		dead    []int
		winner  int
		ok      bool
	}{
		{"no answers", nil, nil, nil, -1, false},
		{"one answer, nobody voted, two could vote for another", []int{0, 1}, nil, nil, -1, false},
		{"all voted", []int{0, 1}, [][2]int{{0, 1}, {1, 1}}, nil, 1, true},
		{"2-0 with one to vote", []int{0, 1, 2}, [][2]int{{0, 2}, {1, 2}}, nil, 2, true},
		{"1-0 with one to vote: a tie the earlier agent would win", []int{0, 1}, [][2]int{{0, 1}}, nil, -1, false},
		{"1-0 for the earlier agent with one to vote: a tie it keeps", []int{0, 1}, [][2]int{{0, 0}}, []int{2}, 0, true},
		{"1-0 for the earlier agent with two to vote", []int{0, 1}, [][2]int{{0, 0}}, nil, -1, false},
		{"dead agents do not vote", []int{0, 1, 2}, [][2]int{{0, 1}}, []int{2}, -1, false},
		{"dead agent's missing vote cannot overturn", []int{0, 1, 2}, [][2]int{{0, 1}, {1, 1}}, []int{2}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Settings{Agents: 3})
			for _, i := range tc.answers {
				answer(t, m, i, fmt.Sprintf("answer %d", i))
			}
			for _, v := range tc.votes {
				if out := vote(m, v[0], Label(v[1])); out.Kind != Voted {
					t.Fatalf("vote %v: %+v", v, out)
				}
			}
			for _, d := range tc.dead {
				m.Kill(d)
			}
			w, ok := m.Decided()
			if w != tc.winner || ok != tc.ok {
				t.Errorf("Decided() = %d, %v; want %d, %v", w, ok, tc.winner, tc.ok)
			}
		})
	}
}

// TestDecided_Random checks Decided against brute force: on random machines, it is true
// exactly when every way the pending agents could vote leaves the same winner.
func TestDecided_Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 3000 {
		agents := 1 + rng.IntN(5)
		m := New(Settings{Agents: agents})
		for i := range agents {
			if rng.IntN(3) > 0 {
				answer(t, m, i, fmt.Sprintf("answer %d", i))
			}
		}
		labels := m.VoteLabels()
		for i := range agents {
			if len(labels) > 0 && rng.IntN(2) == 0 {
				vote(m, i, labels[rng.IntN(len(labels))])
			}
			if rng.IntN(6) == 0 {
				m.Kill(i)
			}
		}
		w, ok := m.Decided()
		outcomes := allOutcomes(m)
		// With every agent dead there is no coordination left to cut short (as Converged).
		wantOK := len(outcomes) == 1 && m.Winner().Winner >= 0 && m.Live() > 0
		if ok != wantOK || (ok && w != outcomes[0]) {
			t.Fatalf("case %d (%d agents): Decided() = %d, %v; winners over every way to vote: %v", n, agents, w, ok, outcomes)
		}
	}
}

// allOutcomes returns the distinct winners over every way the live agents without a current
// vote could vote.
func allOutcomes(m *Machine) []int {
	var pending []int
	for i := range m.agents {
		if _, voted := m.CurrentVote(i); !voted && !m.Dead(i) {
			pending = append(pending, i)
		}
	}
	targets := []int{}
	for i := range m.agents {
		if m.AnswerCount(i) > 0 {
			targets = append(targets, i)
		}
	}
	seen := map[int]bool{}
	var rec func(k int, mm *Machine)
	rec = func(k int, mm *Machine) {
		if k == len(pending) {
			seen[mm.Winner().Winner] = true
			return
		}
		for _, tgt := range targets {
			c := clone(mm)
			if out := vote(c, pending[k], Label(tgt)); out.Kind != Voted {
				panic(fmt.Sprintf("vote refused: %+v", out))
			}
			rec(k+1, c)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	rec(0, m)
	var out []int
	for w := range seen {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

func clone(m *Machine) *Machine {
	c := *m
	c.agents = slices.Clone(m.agents)
	for i := range c.agents {
		if v := c.agents[i].vote; v != nil {
			vc := *v
			c.agents[i].vote = &vc
		}
		c.agents[i].answers = slices.Clone(c.agents[i].answers)
	}
	return &c
}
