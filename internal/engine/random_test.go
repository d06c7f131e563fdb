package engine

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// randomModel misbehaves at random for its first calls, then cooperates, with random latency.
func randomModel(seed uint64, agent int) *fake {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, uint64(agent)))
	chaos := r.IntN(8)
	return &fake{next: func(n int, req provider.Request) step {
		mu.Lock()
		defer mu.Unlock()
		d := time.Duration(r.IntN(3000)) * time.Millisecond
		if req.Stage == provider.StagePresentation {
			return step{delay: d, text: fmt.Sprintf("final by %d", agent)}
		}
		ls := labels(req)
		var st step
		switch k := r.IntN(10); {
		case n > chaos || k < 3:
			if len(ls) == 0 || r.IntN(4) == 0 {
				st = answer(fmt.Sprintf("answer %d of agent %d", n, agent))
			} else {
				st = vote(ls[r.IntN(len(ls))], "ok")
			}
		case k < 4:
			st = vote("agent9", "bad")
		case k < 5:
			st = step{text: "no tool"}
		case k < 6:
			st = step{err: errRetryable}
		case k < 7:
			st = step{hang: true}
		case k < 8:
			st = answer("duplicate")
		default:
			st = step{calls: []provider.ToolCall{{ID: "x", Name: "vote", Arguments: "{"}}}
		}
		st.delay = d
		return st
	}}
}

// TestRun_RandomSessions runs many seeded sessions of 1-8 misbehaving agents through the real
// engine and checks, from the events alone, that each ends, that no stale vote counts, that
// consensus is declared exactly when every live agent holds a current vote, and the winner rule.
func TestRun_RandomSessions(t *testing.T) {
	sessions := 300
	if testing.Short() {
		sessions = 40
	}
	reasons := map[string]int{}
	for seed := range uint64(sessions) {
		synctest.Test(t, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			n := 1 + r.IntN(8)
			ps := make([]provider.Provider, n)
			for i := range ps {
				ps[i] = randomModel(seed, i)
			}
			rec := &recorder{}
			bus := event.NewBus(nil)
			bus.Subscribe(rec)
			res := Run(t.Context(), Options{
				Question: "q", Agents: agents(ps...), Bus: bus,
				Orchestrator: config.Orchestrator{FailureBudget: 1 + r.IntN(3), MaxNewAnswersPerAgent: r.IntN(3)},
				Timeouts:     config.Timeouts{Agent: 10 * time.Second, Orchestrator: 10 * time.Minute},
			})
			reasons[res.EndReason]++
			if err := checkSession(rec.all()); err != nil {
				t.Fatalf("seed %d (%d agents, exit %d): %v", seed, n, res.ExitCode, err)
			}
		})
	}
	// The generator must exercise the normal ending, not only timeouts and deaths.
	if reasons[event.EndConsensus] < sessions/3 {
		t.Errorf("only %d of %d sessions reached consensus: %v", reasons[event.EndConsensus], sessions, reasons)
	}
	t.Logf("end reasons: %v", reasons)
}

func checkSession(evs []event.Event) error {
	version := 0
	voteVer := map[string]int{}
	voteFor := map[string]string{}
	answers := map[string]int{}
	dead := map[string]bool{}
	var ids []string
	for _, e := range evs {
		switch v := e.Payload.(type) {
		case event.SessionStarted:
			for _, a := range v.Agents {
				ids = append(ids, a.ID)
			}
		case event.AnswerSubmitted:
			answers[v.Agent]++
			idx := indexOf(ids, v.Agent)
			if want := fmt.Sprintf("agent%d.%d", idx+1, answers[v.Agent]); v.Label != want {
				return fmt.Errorf("seq %d: label %s, want %s", e.Seq, v.Label, want)
			}
			if v.Version != version+1 {
				return fmt.Errorf("seq %d: version %d after %d", e.Seq, v.Version, version)
			}
			version = v.Version
		case event.VoteCast:
			if v.Version != version {
				return fmt.Errorf("seq %d: vote counted on version %d, current %d", e.Seq, v.Version, version)
			}
			if answers[v.Target] == 0 {
				return fmt.Errorf("seq %d: vote for %s which has no answer", e.Seq, v.Target)
			}
			voteVer[v.Agent], voteFor[v.Agent] = version, v.Target
		case event.AgentDead:
			dead[v.Agent] = true
		case event.CoordinationEnded:
			all := true
			live := 0
			counts := map[string]int{}
			for _, id := range ids {
				if dead[id] {
					continue
				}
				live++
				if vv, ok := voteVer[id]; !ok || vv != version {
					all = false
				} else {
					counts[voteFor[id]]++
				}
			}
			if (v.Reason == event.EndConsensus) != (all && live > 0) {
				return fmt.Errorf("ended %s, but every live agent holds a current vote = %v", v.Reason, all && live > 0)
			}
			if (v.Reason == event.EndAllDead) != (live == 0) {
				return fmt.Errorf("ended %s with %d live agents", v.Reason, live)
			}
			want, best := "", -1
			for _, id := range ids {
				if answers[id] > 0 && counts[id] > best {
					want, best = id, counts[id]
				}
			}
			if v.Winner != want {
				return fmt.Errorf("winner %q, want %q (counts %v)", v.Winner, want, counts)
			}
		}
	}
	if _, ok := evs[len(evs)-1].Payload.(event.SessionEnded); !ok {
		return fmt.Errorf("last event %T", evs[len(evs)-1].Payload)
	}
	return nil
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
