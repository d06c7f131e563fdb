package coord

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// voteConf casts agent i's vote for label with a confidence argument (raw JSON, "" for none).
func voteConf(m *Machine, i int, label, conf string) Outcome {
	args := `{"agent_id": "` + label + `", "reason": "r"`
	if conf != "" {
		args += `, "confidence": ` + conf
	}
	return m.Resolve(i, []Call{{ID: "v", Name: ToolVote, Arguments: args + "}"}}, "", m.Version())
}

func TestWinner_Weighting(t *testing.T) {
	type v struct {
		voter, target int
		conf          string
	}
	// Agents 1 and 2 answer; agent1 has one strong backer (agent3), agent2 two weaker ones
	// (agents 1 and 4, the second unsure).
	votes := []v{{0, 1, "0.9"}, {2, 0, "0.6"}, {3, 1, "0.2"}}
	for _, tc := range []struct {
		name    string
		voting  Weighting
		winner  int
		tie     bool
		scores  []float64 // agent1's and agent2's
		counted []int
	}{
		{"plain: two votes beat one", Weighting{}, 1, false, []float64{1, 2}, []int{1, 2}},
		{"plain ignores weights", Weighting{Mode: WeightPlain, Weights: []float64{1, 1, 5, 1}}, 1, false, []float64{1, 2}, []int{1, 2}},
		{"weighted: the heavy voter outweighs two", Weighting{Mode: WeightWeighted, Weights: []float64{1, 1, 2.5, 1}}, 0, false, []float64{2.5, 2}, []int{1, 2}},
		{"weighted: an equal score goes to config order", Weighting{Mode: WeightWeighted, Weights: []float64{1, 1, 2, 1}}, 0, true, []float64{2, 2}, []int{1, 2}},
		{"weighted without weights is plain", Weighting{Mode: WeightWeighted}, 1, false, []float64{1, 2}, []int{1, 2}},
		{"confidence: 0.6 against 0.9 + 0.2", Weighting{Mode: WeightConfidence}, 1, false, []float64{0.6, 1.1}, []int{1, 2}},
		{"confidence times weight", Weighting{Mode: WeightConfidence, Weights: []float64{1, 1, 2, 1}}, 0, false, []float64{1.2, 1.1}, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Settings{Agents: 4, Voting: tc.voting})
			answer(t, m, 0, "Paris")
			answer(t, m, 1, "Lyon")
			for _, x := range votes {
				if out := voteConf(m, x.voter, Label(x.target), x.conf); out.Kind != Voted {
					t.Fatalf("vote %+v: %+v", x, out)
				}
			}
			r := m.Winner()
			if r.Winner != tc.winner || r.Tie != tc.tie {
				t.Errorf("winner %d tie %v, want %d %v (tally %+v)", r.Winner, r.Tie, tc.winner, tc.tie, r.Tally)
			}
			for k, c := range r.Tally {
				if c.Score != tc.scores[k] || c.Votes != tc.counted[k] {
					t.Errorf("%s: %d votes worth %v, want %d worth %v", Label(c.Agent), c.Votes, c.Score, tc.counted[k], tc.scores[k])
				}
			}
		})
	}
}

func TestWinner_MissingConfidenceCountsHalf(t *testing.T) {
	m := New(Settings{Agents: 3, Voting: Weighting{Mode: WeightConfidence}})
	answer(t, m, 0, "Paris")
	answer(t, m, 1, "Lyon")
	voteConf(m, 0, "agent1", "")    // 0.5
	voteConf(m, 2, "agent2", "0.4") // 0.4
	if r := m.Winner(); r.Winner != 0 || r.Tally[0].Score != MissingConfidence {
		t.Errorf("a vote without confidence: tally %+v, want agent1 at %v", r.Tally, MissingConfidence)
	}
}

func TestResolve_ConfidenceArgument(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string // the stored confidence, "nil", or the start of the error
	}{
		{"", "nil"},
		{"null", "nil"},
		{"0.8", "0.8"},
		{"0.876", "0.88"},
		{"0", "0"},
		{"1", "1"},
		{`"0.7"`, "0.7"},
		{"1.5", `vote: "confidence" is 1.5, outside 0 to 1`},
		{"-0.1", `vote: "confidence" is -0.1, outside 0 to 1`},
		{`"sure"`, `vote: "confidence" is "sure", not a number`},
		{"true", `vote: "confidence" is true, not a number`},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			m := New(Settings{Agents: 2, Voting: Weighting{Mode: WeightConfidence}})
			answer(t, m, 0, "Paris")
			out := voteConf(m, 1, "agent1", tc.raw)
			if out.Kind == Retry {
				if got := out.Feedback[0].Error; !strings.HasPrefix(got, tc.want) {
					t.Fatalf("feedback %q, want it to start %q", got, tc.want)
				}
				if _, ok := m.CurrentVote(1); ok {
					t.Fatal("a refused vote counts")
				}
				return
			}
			got := "nil"
			if c := out.Vote.Confidence; c != nil {
				got = fmt.Sprint(*c)
			}
			if got != tc.want {
				t.Fatalf("confidence %s, want %s (outcome %+v)", got, tc.want, out)
			}
		})
	}
	// new_answer takes one too, checked the same way.
	m := New(Settings{Agents: 1})
	out := m.Resolve(0, []Call{{ID: "a", Name: ToolNewAnswer, Arguments: `{"content": "x", "confidence": 2}`}}, "", 0)
	if out.Kind != Retry || !strings.HasPrefix(out.Feedback[0].Error, `new_answer: "confidence" is 2`) {
		t.Fatalf("new_answer with confidence 2: %+v", out)
	}
	out = m.Resolve(0, []Call{{ID: "a", Name: ToolNewAnswer, Arguments: `{"content": "x", "confidence": 0.3}`}}, "", 0)
	if out.Kind != Answered || out.Answer.Confidence == nil || *out.Answer.Confidence != 0.3 {
		t.Fatalf("new_answer with confidence 0.3: %+v", out)
	}
}

// TestDecided_RandomWeighted checks Decided against brute force under weighted and confidence
// voting: it is true exactly when every way the pending agents could vote, for any agent with
// an answer and at any confidence, leaves the same winner.
func TestDecided_RandomWeighted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	confs := []string{"", "0", "0.35", "1"}
	for n := range 2000 {
		agents := 1 + rng.IntN(4)
		voting := Weighting{Mode: []string{WeightWeighted, WeightConfidence}[rng.IntN(2)], Weights: make([]float64, agents)}
		for i := range voting.Weights {
			voting.Weights[i] = []float64{0.25, 0.5, 1, 1.5, 3}[rng.IntN(5)]
		}
		m := New(Settings{Agents: agents, Voting: voting})
		for i := range agents {
			if rng.IntN(3) > 0 {
				answer(t, m, i, fmt.Sprintf("answer %d", i))
			}
		}
		labels := m.VoteLabels()
		for i := range agents {
			if len(labels) > 0 && rng.IntN(2) == 0 {
				voteConf(m, i, labels[rng.IntN(len(labels))], confs[rng.IntN(len(confs))])
			}
			if rng.IntN(6) == 0 {
				m.Kill(i)
			}
		}
		w, ok := m.Decided()
		outcomes := weightedOutcomes(m)
		wantOK := len(outcomes) == 1 && m.Winner().Winner >= 0 && m.Live() > 0
		if ok != wantOK || (ok && w != outcomes[0]) {
			t.Fatalf("case %d (%d agents, %+v): Decided() = %d, %v; winners over every way to vote: %v", n, agents, voting, w, ok, outcomes)
		}
	}
}

// weightedOutcomes is allOutcomes with each pending vote also free in its confidence (the
// extremes and a middle value; worth is monotone in it).
func weightedOutcomes(m *Machine) []int {
	var pending []int
	for i := range m.agents {
		if _, voted := m.CurrentVote(i); !voted && !m.Dead(i) {
			pending = append(pending, i)
		}
	}
	var targets []int
	for i := range m.agents {
		if m.AnswerCount(i) > 0 {
			targets = append(targets, i)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	confs := []string{"0", "0.5", "1"}
	if m.s.Voting.Mode != WeightConfidence {
		confs = confs[:1]
	}
	seen := map[int]bool{}
	var rec func(k int, mm *Machine)
	rec = func(k int, mm *Machine) {
		if k == len(pending) {
			seen[mm.Winner().Winner] = true
			return
		}
		for _, tgt := range targets {
			for _, c := range confs {
				cm := clone(mm)
				if out := voteConf(cm, pending[k], Label(tgt), c); out.Kind != Voted {
					panic(fmt.Sprintf("vote refused: %+v", out))
				}
				rec(k+1, cm)
			}
		}
	}
	rec(0, m)
	var out []int
	for w := range seen {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

func TestLazy_WeightedHeldAgentCanOutvote(t *testing.T) {
	// Three agents in play back agent1 over agent2; the held fourth weighs more than the three
	// together, so under weighting the question is not settled and it joins.
	setup := func(voting Weighting) *Machine {
		m := New(Settings{Agents: 4, Lazy: &LazySettings{Start: 3}, Voting: voting})
		answer(t, m, 0, "Paris")
		answer(t, m, 1, "Lyon")
		for i := range 3 {
			if out := vote(m, i, "agent1"); out.Kind != Voted {
				t.Fatalf("vote of agent%d: %+v", i+1, out)
			}
		}
		return m
	}
	m := setup(Weighting{Mode: WeightWeighted, Weights: []float64{1, 1, 1, 5}})
	if _, ok := m.Decided(); ok {
		t.Fatal("settled at 3 against a held weight of 5")
	}
	if got := m.ReleaseNext(); got != 3 {
		t.Fatalf("ReleaseNext = %d, want the heavy agent4 (3)", got)
	}
	// Under plain voting the same three votes settle it, and agent4 stays out.
	p := setup(Weighting{})
	if w, ok := p.Decided(); !ok || w != 0 {
		t.Fatalf("plain: Decided() = %d, %v; want 0, true", w, ok)
	}
	if got := p.ReleaseNext(); got != -1 {
		t.Fatalf("plain: ReleaseNext = %d, want -1", got)
	}
}
