package coord

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// shadow is an independent, deliberately naive record of what the protocol should hold.
type shadow struct {
	version  int
	answered []int // answers accepted per agent
	voteVer  []int // version of each agent's last accepted vote, -1 for none
	voteFor  []int
	dead     []bool
}

func (s *shadow) converged() bool {
	live := 0
	for i := range s.dead {
		if s.dead[i] {
			continue
		}
		live++
		if s.voteVer[i] != s.version {
			return false
		}
	}
	return live > 0
}

// TestRandomInterleavings drives thousands of seeded interleavings of answers, votes (valid,
// invalid, stale), malformed responses, failures and timeouts across 1-8 agents, and checks the
// protocol's invariants after every step.
func TestRandomInterleavings(t *testing.T) {
	seeds := 4000
	if testing.Short() {
		seeds = 400
	}
	for seed := range uint64(seeds) {
		if err := runRandom(seed); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

func runRandom(seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 99))
	n := 1 + r.IntN(8)
	novelty := []string{"lenient", "balanced", "strict"}[r.IntN(3)]
	m := New(Settings{Agents: n, FailureBudget: 1 + r.IntN(3), MaxNewAnswersPerAgent: r.IntN(3), Novelty: novelty})
	sh := &shadow{answered: make([]int, n), voteVer: make([]int, n), voteFor: make([]int, n), dead: make([]bool, n)}
	for i := range n {
		sh.voteVer[i] = -1
	}
	inflight := make([]int, n) // answer-set version seen by an agent mid-turn, -1 when idle
	attempts := make([]int, n)
	for i := range inflight {
		inflight[i] = -1
	}
	chaos := 50 + r.IntN(300) // steps of misbehaviour before agents cooperate
	vocab := []string{"paris", "is", "the", "capital", "of", "france", "lyon", "city", "seine", "river"}
	for step := 0; ; step++ {
		if step > 20000 {
			return fmt.Errorf("no termination after %d steps", step)
		}
		if m.Ended() {
			return nil
		}
		if got, want := m.Converged(), sh.converged(); got != want {
			return fmt.Errorf("step %d: Converged()=%v, shadow says %v", step, got, want)
		}
		if m.Converged() || m.Live() == 0 {
			if err := checkWinner(m, sh); err != nil {
				return fmt.Errorf("step %d: %w", step, err)
			}
			m.End()
			continue
		}
		if r.IntN(2000) == 0 { // session timeout
			if err := checkWinner(m, sh); err != nil {
				return fmt.Errorf("timeout at step %d: %w", step, err)
			}
			m.End()
			continue
		}
		// Any agent that must act may start; any agent mid-turn may finish, in any order.
		var ready []int
		for i := range n {
			if inflight[i] >= 0 || m.NeedsTurn(i) {
				ready = append(ready, i)
			}
		}
		if len(ready) == 0 {
			return fmt.Errorf("step %d: deadlock: nobody can act and coordination is not over", step)
		}
		i := ready[r.IntN(len(ready))]
		if inflight[i] < 0 {
			if !m.NeedsTurn(i) {
				continue
			}
			inflight[i], attempts[i] = m.Version(), 0
			continue
		}
		seen := inflight[i]
		cooperative := step > chaos
		var calls []Call
		fail := false
		switch k := r.IntN(10); {
		case cooperative || k < 4:
			labels := m.VoteLabels()
			if len(labels) == 0 || (!cooperative && r.IntN(3) == 0 && seen == m.Version()) {
				content := ""
				for range 2 + r.IntN(5) {
					content += vocab[r.IntN(len(vocab))] + " "
				}
				if cooperative {
					content = fmt.Sprintf("unique answer %d of agent %d", step, i)
				}
				calls = []Call{answerCall("c", content)}
			} else {
				calls = []Call{voteCall("c", labels[r.IntN(len(labels))], "r")}
			}
		case k < 5:
			calls = []Call{voteCall("c", Label(r.IntN(n+1)), "maybe invalid")}
		case k < 6:
			calls = []Call{voteCall("c", "agent1", "x"), voteCall("d", "agent1", "y")}
		case k < 7:
			calls = nil
		case k < 8:
			calls = []Call{{ID: "c", Name: ToolVote, Arguments: "{oops"}}
		default:
			fail = true
		}
		before := m.Version()
		if fail {
			inflight[i] = -1
			if _, dead := m.TurnFailed(i); dead {
				sh.dead[i] = true
			}
			continue
		}
		out := m.Resolve(i, calls, "", seen)
		switch out.Kind {
		case Answered:
			sh.version++
			sh.answered[i]++
			if want := fmt.Sprintf("%s.%d", Label(i), sh.answered[i]); out.Answer.Label != want {
				return fmt.Errorf("step %d: answer label %s, want %s (labels must be stable)", step, out.Answer.Label, want)
			}
			if out.Answer.Version != sh.version || m.Version() != sh.version {
				return fmt.Errorf("step %d: version %d/%d, want %d", step, out.Answer.Version, m.Version(), sh.version)
			}
			inflight[i] = -1
			m.TurnSucceeded(i)
		case Voted:
			if seen != before {
				return fmt.Errorf("step %d: a vote cast on version %d was counted at version %d", step, seen, before)
			}
			if sh.answered[out.Vote.Target] == 0 {
				return fmt.Errorf("step %d: vote counted for %s which has no answer", step, out.Vote.TargetLabel)
			}
			sh.voteVer[i], sh.voteFor[i] = sh.version, out.Vote.Target
			inflight[i] = -1
			m.TurnSucceeded(i)
		case StaleVote:
			if seen == before {
				return fmt.Errorf("step %d: current vote reported stale", step)
			}
			if _, ok := m.CurrentVote(i); ok {
				return fmt.Errorf("step %d: stale vote is current", step)
			}
			inflight[i] = -1
			m.TurnSucceeded(i)
		case Retry, NoWorkflow:
			attempts[i]++
			inflight[i] = m.Version()
			if attempts[i] >= 3 {
				inflight[i] = -1
				if _, dead := m.TurnFailed(i); dead {
					sh.dead[i] = true
				}
			}
		}
	}
}

func checkWinner(m *Machine, sh *shadow) error {
	counts := make([]int, len(sh.dead))
	for i := range sh.dead {
		if !sh.dead[i] && sh.voteVer[i] == sh.version {
			counts[sh.voteFor[i]]++
		}
	}
	want, best := -1, -1
	for i, c := range counts {
		if sh.answered[i] > 0 && c > best {
			want, best = i, c
		}
	}
	r := m.Winner()
	if r.Winner != want {
		return fmt.Errorf("winner %d, want %d (counts %v, tally %+v)", r.Winner, want, counts, r.Tally)
	}
	for _, c := range r.Tally {
		if c.Votes != counts[c.Agent] {
			return fmt.Errorf("tally for %s = %d, want %d", Label(c.Agent), c.Votes, counts[c.Agent])
		}
	}
	return nil
}
