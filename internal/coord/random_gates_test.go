package coord

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRandomGates drives seeded interleavings under random combinations of the v0.1.9x gates
// (global cap, deferred voting, skip voting, lead cap with and without the pause) and checks
// that coordination always ends, never deadlocks, and that no gate is ever passed.
func TestRandomGates(t *testing.T) {
	seeds := 3000
	if testing.Short() {
		seeds = 300
	}
	for seed := range uint64(seeds) {
		if err := runRandomGates(seed); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

func runRandomGates(seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 7))
	n := 1 + r.IntN(6)
	s := Settings{Agents: n, FailureBudget: 1 + r.IntN(3), MaxNewAnswersPerAgent: r.IntN(3),
		MaxNewAnswersGlobal: r.IntN(2 * n), DeferVoting: r.IntN(2) == 0, SkipVoting: r.IntN(4) == 0,
		LeadCap: r.IntN(3), FairnessPause: r.IntN(2) == 0}
	m := New(s)
	inflight := make([]int, n) // version an agent saw when its turn began, -1 when idle
	for i := range inflight {
		inflight[i] = -1
	}
	for step := 0; ; step++ {
		if step > 20000 {
			return fmt.Errorf("no termination after %d steps (%+v)", step, s)
		}
		if m.Converged() || m.Live() == 0 {
			return nil
		}
		var ready []int
		for i := range n {
			if inflight[i] >= 0 || m.NeedsTurn(i) {
				ready = append(ready, i)
			}
		}
		if len(ready) == 0 {
			return fmt.Errorf("step %d: deadlock: nobody can act and coordination is not over (%+v)", step, s)
		}
		i := ready[r.IntN(len(ready))]
		if inflight[i] < 0 {
			inflight[i] = m.Version()
			continue
		}
		seen := inflight[i]
		inflight[i] = -1
		if r.IntN(15) == 0 {
			m.TurnFailed(i)
			continue
		}
		var calls []Call
		if labels := m.VoteLabels(); len(labels) > 0 && r.IntN(2) == 0 {
			calls = []Call{voteCall("c", labels[r.IntN(len(labels))], "r")}
		} else {
			calls = []Call{answerCall("c", fmt.Sprintf("answer %d of agent %d", step, i))}
		}
		before := struct {
			total, lead int
			over, all   bool
			global      bool
		}{total: m.TotalAnswers(), all: m.AllAnswered(), global: m.GlobalCapReached()}
		before.lead, before.over = m.overLeadCap(i)
		out := m.Resolve(i, calls, "", seen)
		switch out.Kind {
		case Answered:
			if s.MaxNewAnswersGlobal > 0 && before.total >= s.MaxNewAnswersGlobal {
				return fmt.Errorf("step %d: answer %d accepted over the global cap %d", step, before.total+1, s.MaxNewAnswersGlobal)
			}
			if before.over && m.AnswerCount(i) > 1 {
				return fmt.Errorf("step %d: answer accepted at a lead of %d over the cap %d", step, before.lead, s.LeadCap)
			}
			m.TurnSucceeded(i)
		case Voted:
			if s.SkipVoting {
				return fmt.Errorf("step %d: a vote counted with skip_voting", step)
			}
			if s.DeferVoting && !before.all && !before.global {
				return fmt.Errorf("step %d: a vote counted before every agent answered", step)
			}
			m.TurnSucceeded(i)
		case StaleVote, Deferred:
			m.TurnSucceeded(i)
		default:
			// A rejected call: the agent tries again at once, within its turn.
			inflight[i] = m.Version()
		}
	}
}
