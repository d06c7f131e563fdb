package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// presentations returns the presentation requests f received.
func presentations(f *fake) []provider.Request {
	var out []provider.Request
	for _, r := range f.requests() {
		if r.Stage == provider.StagePresentation {
			out = append(out, r)
		}
	}
	return out
}

func lastUser(req provider.Request) string {
	for k := len(req.Messages) - 1; k >= 0; k-- {
		if req.Messages[k].Role == provider.RoleUser {
			return req.Messages[k].Content
		}
	}
	return ""
}

func TestRun_FinalAnswerStrategy(t *testing.T) {
	tests := []struct {
		strategy   string
		wantMode   string
		wantFinal  string
		wantCalls  int      // presentation calls by the winner
		wantSystem []string // in the presentation's system prompt
		wantUser   []string // in the presentation's message
	}{
		{strategy: config.StrategyWinnerPresent, wantMode: "regenerate", wantFinal: "FINAL: Paris, on the Seine.", wantCalls: 1,
			wantSystem: []string{"The other agents voted for your answer."},
			wantUser:   []string{"Your answer (agent2) received 2 vote(s).", "(your own answer)\n<agent2>", "Present the final answer now."}},
		{strategy: config.StrategyWinnerReuse, wantMode: "verbatim", wantFinal: "Paris, on the Seine."},
		{strategy: config.StrategySynthesize, wantMode: "synthesize", wantFinal: "FINAL: Paris, on the Seine.", wantCalls: 1,
			wantSystem: []string{"synthesizing the best of all the answers", "use your answer as the primary basis", "as specific as the most detailed answer"},
			wantUser:   []string{"<agent1>\nParis.\n<end of agent1>", "<agent2>\nParis, on the Seine.\n<end of agent2>", "Synthesize the final answer now."}},
	}
	for _, tc := range tests {
		t.Run(tc.strategy, func(t *testing.T) {
			winner := answerThenVote("Paris, on the Seine.", "agent2")
			res, evs := run(t, t.Context(), Options{
				Agents: agents(answerThenVote("Paris.", "agent2"), winner),
				// The presentation's own prompt (presentation_context: fresh), as in MassGen.
				Orchestrator: config.Orchestrator{FinalAnswerStrategy: tc.strategy, PresentationContext: config.PresentFresh},
			})
			if res.ExitCode != 0 || res.Winner != "a2" || res.FinalAnswer != tc.wantFinal {
				t.Fatalf("result %+v", res)
			}
			if f := ofType[event.FinalAnswer](evs); len(f) != 1 || f[0].Mode != tc.wantMode || f[0].Fallback {
				t.Fatalf("final %+v", f)
			}
			ps := presentations(winner)
			if len(ps) != tc.wantCalls {
				t.Fatalf("%d presentation calls, want %d", len(ps), tc.wantCalls)
			}
			for _, p := range ps {
				for _, w := range tc.wantSystem {
					if !strings.Contains(p.System, w) {
						t.Errorf("system prompt lacks %q:\n%s", w, p.System)
					}
				}
				for _, w := range tc.wantUser {
					if !strings.Contains(lastUser(p), w) {
						t.Errorf("message lacks %q:\n%s", w, lastUser(p))
					}
				}
			}
		})
	}
}

func TestRun_PresenterAgent(t *testing.T) {
	fatal := &fake{next: func(int, provider.Request) step {
		return step{err: &provider.Error{Provider: "fake", Status: 401, Fatal: true, Err: errors.New("bad key")}}
	}}
	tests := []struct {
		name      string
		presenter string
		third     *fake
		want      string // the presenting agent
		wantNote  string
	}{
		{name: "a named presenter writes the final answer", presenter: "a3", third: answerThenVote("It is Paris.", "agent2"), want: "a3"},
		{name: "a dead presenter: the winner presents", presenter: "a3", third: fatal, want: "a2", wantNote: `presenter_agent "a3" failed during coordination`},
		{name: "an unknown presenter: the winner presents", presenter: "zz", third: answerThenVote("It is Paris.", "agent2"), want: "a2",
			wantNote: `presenter_agent "zz" is not one of the agents`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			models := []*fake{answerThenVote("Paris.", "agent2"), answerThenVote("Paris, on the Seine.", "agent2"), tc.third}
			res, evs := run(t, t.Context(), Options{
				Agents:       agents(models[0], models[1], models[2]),
				Orchestrator: config.Orchestrator{PresenterAgent: tc.presenter, PresentationContext: config.PresentFresh},
			})
			if res.ExitCode != 0 || res.Winner != tc.want {
				t.Fatalf("result %+v", res)
			}
			if e := ofType[event.CoordinationEnded](evs); len(e) != 1 || e[0].Winner != "a2" {
				t.Fatalf("the vote winner is %+v, want a2", e)
			}
			started := ofType[event.FinalStarted](evs)
			if len(started) != 1 || started[0].Agent != tc.want || !strings.Contains(started[0].Note, tc.wantNote) {
				t.Fatalf("final started %+v", started)
			}
			if tc.want != "a2" && started[0].Winner != "a2" {
				t.Errorf("final started names winner %q, want a2", started[0].Winner)
			}
			final := ofType[event.FinalAnswer](evs)
			idx := slices.IndexFunc(models, func(f *fake) bool { return len(presentations(f)) > 0 })
			if idx < 0 || fmt.Sprintf("a%d", idx+1) != tc.want || final[0].Agent != tc.want {
				t.Fatalf("presentation made by agent %d, final %+v; want %s", idx+1, final, tc.want)
			}
			if tc.want == "a3" {
				p := presentations(models[2])[0]
				for _, w := range []string{"You have been chosen to write the final answer. The agents voted agent2's answer the best",
					"using agent2's answer as the primary basis"} {
					if !strings.Contains(p.System, w) {
						t.Errorf("presenter's system prompt lacks %q:\n%s", w, p.System)
					}
				}
				if u := lastUser(p); !strings.Contains(u, "The answer of agent2 received the most votes: 3.") || !strings.Contains(u, "(your own answer)\n<agent3>") {
					t.Errorf("presenter's message:\n%s", u)
				}
				if final[0].Label != "agent3.final" {
					t.Errorf("final label %q", final[0].Label)
				}
			}
		})
	}
}

func TestRun_MaxNewAnswersGlobal(t *testing.T) {
	res, evs := run(t, t.Context(), Options{
		Agents: agents(answerThenVote("Paris.", "agent1"), answerThenVote("Paris, on the Seine.", "agent1"),
			answerThenVote("It is Paris.", "agent1")),
		Orchestrator: config.Orchestrator{MaxNewAnswersGlobal: 2},
	})
	if res.ExitCode != 0 || res.EndReason != event.EndConsensus {
		t.Fatalf("result %+v", res)
	}
	if n := len(ofType[event.AnswerSubmitted](evs)); n != 2 {
		t.Errorf("%d answers accepted, want 2 (max_new_answers_global)", n)
	}
	rej := ofType[event.ToolRejected](evs)
	if len(rej) != 1 || !strings.Contains(rej[0].Error, "orchestrator.max_new_answers_global") {
		t.Fatalf("rejections %+v", rej)
	}
	if s := ofType[event.SessionStarted](evs)[0].Settings; s.MaxNewAnswersGlobal != 2 {
		t.Errorf("settings %+v", s)
	}
}

func TestRun_SkipVoting(t *testing.T) {
	tests := []struct {
		name string
		orch config.Orchestrator
	}{
		{name: "skip_voting", orch: config.Orchestrator{SkipVoting: true}},
		// MassGen's quick multi-agent synthesize run: one answer each, then the merge.
		{name: "quick synthesize implies it", orch: config.Orchestrator{FinalAnswerStrategy: config.StrategySynthesize, MaxNewAnswersPerAgent: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a1, a2 := answerThenVote("Paris.", "agent2"), answerThenVote("Paris, on the Seine.", "agent2")
			res, evs := run(t, t.Context(), Options{Agents: agents(a1, a2), Orchestrator: tc.orch})
			if res.ExitCode != 0 || res.EndReason != event.EndAllAnswered || res.Winner != "a1" || res.FinalAnswer != "FINAL: Paris." {
				t.Fatalf("result %+v", res)
			}
			if v := ofType[event.VoteCast](evs); len(v) != 0 {
				t.Errorf("votes cast: %+v", v)
			}
			for k, f := range []*fake{a1, a2} {
				var coordination int
				for _, r := range f.requests() {
					if r.Stage == provider.StagePresentation {
						continue
					}
					coordination++
					if slices.ContainsFunc(r.Tools, func(s provider.ToolSpec) bool { return s.Name == "vote" }) {
						t.Errorf("agent %d was offered the vote tool", k+1)
					}
					if !strings.Contains(r.System, "there is no vote") {
						t.Errorf("agent %d's system prompt does not say there is no vote:\n%s", k+1, r.System)
					}
				}
				if coordination != 1 {
					t.Errorf("agent %d made %d coordination calls, want 1", k+1, coordination)
				}
			}
			if u := lastUser(presentations(a1)[0]); !strings.Contains(u, "No vote was held") {
				t.Errorf("presentation message:\n%s", u)
			}
			if s := ofType[event.SessionStarted](evs)[0].Settings; !s.SkipVoting {
				t.Errorf("settings do not say voting is skipped: %+v", s)
			}
		})
	}
}

func TestRun_PerAgentVotingSensitivity(t *testing.T) {
	a1, a2 := answerThenVote("Paris.", "agent1"), answerThenVote("Paris, on the Seine.", "agent1")
	as := agents(a1, a2)
	as[0].VotingSensitivity = "strict"
	_, evs := run(t, t.Context(), Options{Agents: as, Orchestrator: config.Orchestrator{VotingSensitivity: "balanced"}})
	if s := a1.requests()[0].System; !strings.Contains(s, "Hold the answers to a high bar") {
		t.Errorf("agent1's system prompt is not strict:\n%s", s)
	}
	if s := a2.requests()[0].System; !strings.Contains(s, "Check the best current answer for completeness") {
		t.Errorf("agent2's system prompt is not balanced:\n%s", s)
	}
	if info := ofType[event.SessionStarted](evs)[0].Agents; info[0].VotingSensitivity != "strict" || info[1].VotingSensitivity != "" {
		t.Errorf("agents %+v", info)
	}
}

// Turn 2 of a conversation: the presenter must see the history like every coordination step
// (review 2026-12-01 §4.2: it saw only the new question and the answers).
func TestRun_PresentationCarriesHistory(t *testing.T) {
	history := []provider.Message{{Role: provider.RoleUser, Content: "Name a country in Europe."}, {Role: provider.RoleAssistant, Content: "France."}}
	for _, tc := range []struct {
		name string
		orch config.Orchestrator
	}{
		{name: "winner_present", orch: config.Orchestrator{}},
		{name: "synthesize", orch: config.Orchestrator{FinalAnswerStrategy: config.StrategySynthesize}},
		{name: "skipped coordination", orch: config.Orchestrator{SkipCoordinationRounds: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := answerThenVote("Paris.", "agent1")
			res, _ := run(t, t.Context(), Options{Agents: agents(a), History: history, Turn: 2, Orchestrator: tc.orch})
			if res.ExitCode != 0 {
				t.Fatalf("result %+v", res)
			}
			for _, r := range a.requests() {
				u := r.Messages[0].Content
				if !strings.Contains(u, "<CONVERSATION HISTORY>\nUser: Name a country in Europe.\nAssistant: France.\n<END OF CONVERSATION HISTORY>") {
					t.Errorf("%s call lacks the conversation history:\n%s", r.Stage, u)
				}
			}
			if len(presentations(a)) != 1 {
				t.Fatalf("%d presentation calls", len(presentations(a)))
			}
		})
	}
}

// The call that spends max_cost_usd paid for its answer: the answer counts, then coordination
// stops, and the session says why (review 2026-12-01 §6 item 2).
func TestRun_BudgetKeepsThePaidForAnswer(t *testing.T) {
	a := answerThenVote("Paris.", "agent1")
	res, evs := run(t, context.Background(), Options{
		Agents:       agents(a),
		Orchestrator: config.Orchestrator{MaxCostUSD: 0.0001},
		Price:        func(string, string, provider.Usage) float64 { return 0.0015 },
	})
	if res.ExitCode != 0 || res.EndReason != event.EndBudget || res.FinalAnswer != "FINAL: Paris." {
		t.Fatalf("result %+v", res)
	}
	if got := ofType[event.AnswerSubmitted](evs); len(got) != 1 {
		t.Fatalf("answers %+v", got)
	}
	const want = "cost budget $0.0001 reached ($0.0015 spent)"
	if res.Err == nil || res.Err.Error() != want {
		t.Errorf("error %v, want %q", res.Err, want)
	}
	if end := ofType[event.SessionEnded](evs); end[0].Error != want {
		t.Errorf("session ended %+v", end[0])
	}
}

func TestRun_BudgetSpentBeforeAnyAnswer(t *testing.T) {
	a := answerThenVote("Paris.", "agent1")
	inner := a.next
	a.next = func(n int, req provider.Request) step {
		if req.Stage == provider.StagePersona {
			return step{text: `{"personas": {"agent1": "You favour brevity."}}`}
		}
		return inner(n, req)
	}
	res, _ := run(t, t.Context(), Options{
		Agents:       agents(a),
		Orchestrator: config.Orchestrator{MaxCostUSD: 0.0001, PersonaGenerator: config.PersonaGenerator{Enabled: true}},
		Price:        func(string, string, provider.Usage) float64 { return 0.0015 },
	})
	if res.ExitCode != 2 || res.Err == nil || !strings.Contains(res.Err.Error(), "cost budget $0.0001 reached ($0.0015 spent)") ||
		!strings.Contains(res.Err.Error(), "no agent produced an answer") {
		t.Fatalf("result %+v", res)
	}
	if n := len(a.requests()); n != 1 {
		t.Errorf("%d calls after the budget was spent by the persona call, want only that call", n-1)
	}
}

func TestDollars(t *testing.T) {
	for v, want := range map[float64]string{0.0001: "$0.0001", 0.0015: "$0.0015", 5: "$5.00", 0.5: "$0.50", 1.23456: "$1.2346"} {
		if got := dollars(v); got != want {
			t.Errorf("dollars(%v) = %q, want %q", v, got, want)
		}
	}
}
