package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
	"massgen/internal/readmodel"
)

// verifyTeam is three scripted agents whose votes rank agent1's answer first (2 votes),
// agent2's second (1) and agent3's last (0); a3 and a2 verify with the verdicts given.
func verifyTeam(a3, a2 []string) []Agent {
	return agents(
		scripted.New(config.Script{Answers: []string{"Paris, of course."}, Vote: "agent1"}, "m"),
		scripted.New(config.Script{Answers: []string{"The capital is Paris."}, Vote: "agent1", Verdicts: a2}, "m"),
		scripted.New(config.Script{Answers: []string{"Lyon."}, Vote: "agent2", Verdicts: a3}, "m"),
	)
}

// verdictsOf is the verdicts in evs as "<answer>:<aspect>:<verdict>".
func verdictsOf(evs []event.Event) []string {
	var out []string
	for _, v := range ofType[event.AnswerVerified](evs) {
		out = append(out, v.AnswerLabel+":"+v.Aspect+":"+v.Verdict)
	}
	return out
}

func TestVerifiers_DecideTheWinner(t *testing.T) {
	correctness := config.Verifier{Aspect: config.AspectCorrectness, Agent: "a3"}
	format := config.Verifier{Aspect: config.AspectFormat, Agent: "a2"}
	tests := []struct {
		name         string
		verifiers    []config.Verifier
		a3, a2       []string
		wantWinner   string
		wantVerdicts []string
		wantVerified string
		wantRule     string
	}{
		{name: "the leader passes", verifiers: []config.Verifier{correctness}, a3: []string{"pass"},
			wantWinner: "a1", wantVerdicts: []string{"agent1.1:correctness:pass"}, wantVerified: readmodel.VerifiedPassed, wantRule: "passed every verifier"},
		{name: "the leader fails, the next answer passes", verifiers: []config.Verifier{correctness}, a3: []string{"fail", "pass"},
			wantWinner: "a2", wantVerdicts: []string{"agent1.1:correctness:fail", "agent2.1:correctness:pass"},
			wantVerified: readmodel.VerifiedPassed, wantRule: "the answer ahead of it failed a verifier"},
		{name: "every answer fails: the plain tally's winner stands", verifiers: []config.Verifier{correctness}, a3: []string{"fail"},
			wantWinner: "a1", wantVerdicts: []string{"agent1.1:correctness:fail", "agent2.1:correctness:fail", "agent3.1:correctness:fail"},
			wantVerified: readmodel.VerifiedNonePassed, wantRule: "no answer passed every verifier"},
		{name: "a garbage reply could not verify, which blocks", verifiers: []config.Verifier{correctness}, a3: []string{"garbage", "pass"},
			wantWinner: "a2", wantVerdicts: []string{"agent1.1:correctness:unverified", "agent2.1:correctness:pass"}, wantVerified: readmodel.VerifiedPassed},
		{name: "correctness first; a failed format check moves on", verifiers: []config.Verifier{correctness, format},
			a3: []string{"pass"}, a2: []string{"fail", "pass"}, wantWinner: "a2",
			wantVerdicts: []string{"agent1.1:correctness:pass", "agent1.1:format:fail", "agent2.1:correctness:pass", "agent2.1:format:pass"},
			wantVerified: readmodel.VerifiedPassed},
		{name: "a failed correctness check skips the other verifiers", verifiers: []config.Verifier{correctness, format},
			a3: []string{"fail", "pass"}, wantWinner: "a2",
			wantVerdicts: []string{"agent1.1:correctness:fail", "agent2.1:correctness:pass", "agent2.1:format:pass"},
			wantVerified: readmodel.VerifiedPassed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, evs := run(t, t.Context(), Options{Agents: verifyTeam(tt.a3, tt.a2),
				Orchestrator: config.Orchestrator{Verifiers: tt.verifiers, FinalAnswerStrategy: config.StrategyWinnerReuse}})
			if res.ExitCode != 0 || res.Winner != tt.wantWinner {
				t.Fatalf("result %+v, want winner %s", res, tt.wantWinner)
			}
			if got := verdictsOf(evs); !slices.Equal(got, tt.wantVerdicts) {
				t.Errorf("verdicts %v, want %v", got, tt.wantVerdicts)
			}
			for _, v := range ofType[event.AnswerVerified](evs) {
				if v.Reason == "" || v.Agent != map[string]string{"correctness": "a3", "format": "a2"}[v.Aspect] {
					t.Errorf("verdict %+v: want a reason and the verifier's agent", v)
				}
				if v.Verdict == event.VerdictUnverified && !strings.Contains(v.Reason, "not the verdict JSON") {
					t.Errorf("unverified verdict without the reason: %+v", v)
				}
			}
			// Every check is a model call of the verifier's agent, and its usage is counted.
			calls, used := 0, 0
			for k, e := range evs {
				if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Stage == provider.StageVerify {
					calls++
					if u, ok := evs[k+1].Payload.(event.UsageReported); ok && u.Agent == mc.Agent && u.Usage.OutputTokens > 0 {
						used++
					}
				}
			}
			if calls != len(tt.wantVerdicts) || used != calls {
				t.Errorf("%d verify calls with %d usage reports, want %d each", calls, used, len(tt.wantVerdicts))
			}
			ended := ofType[event.CoordinationEnded](evs)
			if len(ended) != 1 || ended[0].Winner != tt.wantWinner {
				t.Fatalf("coordination ended %+v, want winner %s", ended, tt.wantWinner)
			}
			st := readmodel.NewState()
			for _, e := range evs {
				st.Apply(e)
			}
			d := st.Decision()
			if d == nil || d.Verified != tt.wantVerified || len(d.Verifiers) != len(tt.wantVerdicts) || !d.Agrees || !strings.Contains(d.Rule, tt.wantRule) {
				t.Errorf("decision %+v, want verified %q, %d verdicts, agreeing, rule containing %q", d, tt.wantVerified, len(tt.wantVerdicts), tt.wantRule)
			}
		})
	}
}

// A verifier subagent's answer is its verdict; what it spent is the first agent's cost. A
// session that can run no subagent says so, and the check could not verify.
func TestVerifiers_Subagent(t *testing.T) {
	v := []config.Verifier{{Aspect: config.AspectCustom, Subagent: true, Instructions: "names a river"}}
	var asked []SubagentCall
	sub := func(_ context.Context, c SubagentCall) SubagentReply {
		asked = append(asked, c)
		if strings.Contains(c.Question, "Paris, of course.") {
			return SubagentReply{ID: c.ID, Answer: `{"verdict": "fail", "reason": "no river"}`, Spent: provider.Usage{CostUSD: 0.25}}
		}
		return SubagentReply{ID: c.ID, Answer: `{"verdict": "pass", "reason": "the Seine"}`, Spent: provider.Usage{CostUSD: 0.25}}
	}
	res, evs := run(t, t.Context(), Options{Agents: verifyTeam(nil, nil), Subagent: sub,
		Orchestrator: config.Orchestrator{Verifiers: v, FinalAnswerStrategy: config.StrategyWinnerReuse}})
	if res.Winner != "a2" || res.CostUSD != 0.5 {
		t.Fatalf("result %+v, want a2 to win and 0.5 USD spent", res)
	}
	if len(asked) != 2 || asked[0].Kind != KindVerifier || asked[0].ID != "verifier_1_agent1_1" || !strings.Contains(asked[0].Question, "names a river") {
		t.Errorf("subagents asked %+v", asked)
	}
	got := ofType[event.AnswerVerified](evs)
	if len(got) != 2 || got[0].SubagentID != "verifier_1_agent1_1" || got[0].Agent != "a1" || got[0].Reason != "no river" {
		t.Errorf("verdicts %+v", got)
	}

	res, evs = run(t, t.Context(), Options{Agents: verifyTeam(nil, nil),
		Orchestrator: config.Orchestrator{Verifiers: v, FinalAnswerStrategy: config.StrategyWinnerReuse}})
	got = ofType[event.AnswerVerified](evs)
	if res.Winner != "a1" || len(got) != 3 || got[0].Verdict != event.VerdictUnverified || !strings.Contains(got[0].Reason, "no verifier subagent can run") {
		t.Errorf("without subagents: winner %s, verdicts %+v", res.Winner, got)
	}
}

// max_cost_usd spent before the checks: none is made, and the plain tally decides.
func TestVerifiers_BudgetSpent(t *testing.T) {
	price := func(string, string, provider.Usage) float64 { return 1 }
	res, evs := run(t, t.Context(), Options{Agents: verifyTeam([]string{"fail"}, nil), Price: price,
		Orchestrator: config.Orchestrator{MaxCostUSD: 0.5, FinalAnswerStrategy: config.StrategyWinnerReuse,
			Verifiers: []config.Verifier{{Aspect: config.AspectCorrectness}}}})
	if n := len(ofType[event.AnswerVerified](evs)); n != 0 || res.Winner == "" {
		t.Errorf("%d verdicts with the budget spent, winner %q; want none and a winner", n, res.Winner)
	}
}

// Killed anywhere, a resumed session ends with the whole run's winner, and a check the log
// already holds is neither made nor paid for again.
func TestVerifiers_Resume(t *testing.T) {
	verdicts := []string{"fail", "pass"}
	orch := config.Orchestrator{FinalAnswerStrategy: config.StrategyWinnerReuse,
		Verifiers: []config.Verifier{{Aspect: config.AspectCorrectness, Agent: "a3"}}}
	whole, evs := run(t, t.Context(), Options{Agents: verifyTeam(verdicts, nil), Orchestrator: orch})
	if whole.Winner != "a2" || len(ofType[event.AnswerVerified](evs)) != 2 {
		t.Fatalf("whole run: %+v", whole)
	}
	for cut := 1; cut < len(evs); cut++ {
		before := ofType[event.AnswerVerified](evs[:cut])
		// The verifier's model goes on where it was: its next reply is the next verdict.
		team := verifyTeam(verdicts[min(len(before), len(verdicts)-1):], nil)
		rec := &recorder{}
		bus := event.NewBus(nil)
		bus.ResumeAt(int64(cut))
		bus.Subscribe(rec)
		res := Run(t.Context(), Options{Agents: team, Orchestrator: orch, Bus: bus, Question: "What is the capital of France?",
			RetryDelay: func(int) time.Duration { return 0 }, Restore: &Restore{Events: evs[:cut], Previous: "killed"}})
		at := fmt.Sprintf("cut after event %d (%s)", cut, evs[cut-1].Payload.Type())
		if res.ExitCode != 0 || res.Winner != whole.Winner {
			t.Fatalf("%s: %+v, want winner %s", at, res, whole.Winner)
		}
		got := rec.all()
		checks := 0
		for _, e := range got {
			if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Stage == provider.StageVerify {
				checks++
			}
		}
		again := ofType[event.AnswerVerified](got)
		if checks != 2-len(before) || len(again) != checks {
			t.Fatalf("%s: %d checks and %d verdicts after %d in the log, want %d", at, checks, len(again), len(before), 2-len(before))
		}
		st := readmodel.NewState()
		for _, e := range append(slices.Clone(evs[:cut]), got...) {
			st.Apply(e)
		}
		if d := st.Decision(); d == nil || len(d.Verifiers) != 2 || d.Verified != readmodel.VerifiedPassed {
			t.Fatalf("%s: decision %+v", at, d)
		}
	}
}

// A verifier agent that dropped out of the session is not asked: its check is unverified
// without a call, which blocks the answer like any unverified check, so the plain tally decides.
func TestVerifiers_DeadVerifierIsNotAsked(t *testing.T) {
	silent := &fake{next: func(int, provider.Request) step { return step{text: "I think Paris."} }}
	res, evs := run(t, t.Context(), Options{
		Agents: agents(answerThenVote("Paris.", "agent1"), answerThenVote("Paris too.", "agent1"), silent),
		Orchestrator: config.Orchestrator{FailureBudget: 1, FinalAnswerStrategy: config.StrategyWinnerReuse,
			Verifiers: []config.Verifier{{Aspect: config.AspectCorrectness, Agent: "a3"}}},
	})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("result %+v", res)
	}
	if dead := ofType[event.AgentDead](evs); len(dead) != 1 || dead[0].Agent != "a3" {
		t.Fatalf("dead: %+v", dead)
	}
	vs := ofType[event.AnswerVerified](evs)
	if len(vs) == 0 {
		t.Fatal("no verdict")
	}
	for _, v := range vs {
		if v.Verdict != event.VerdictUnverified || !strings.Contains(v.Reason, "dropped out") {
			t.Errorf("verdict %+v", v)
		}
	}
	if n := len(silent.requests()); n != maxCallsPerTurn { // its one failed turn (failure_budget 1)
		t.Errorf("a3 got %d calls, want %d: the dead verifier was asked", n, maxCallsPerTurn)
	}
}
