package engine

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
	"massgen/internal/tool"
)

func TestRun_RoundTimeouts(t *testing.T) {
	// The agent researches with a tool, 20 s a call. Told that time is up, it answers at once
	// (obey) or goes on researching; its first round may last 30 s plus 15 s of grace.
	model := func(obey bool) *fake {
		return &fake{next: func(n int, req provider.Request) step {
			if req.Stage == provider.StagePresentation {
				return step{text: "FINAL"}
			}
			if last := req.Messages[len(req.Messages)-1]; obey && last.Role == provider.RoleUser && strings.Contains(last.Content, "Time is up") {
				return answer("Paris, in a hurry.")
			}
			if ls := labels(req); len(ls) > 0 {
				return vote(ls[0], "ok")
			}
			s := toolCall("t", "mcp__kb__slow", "{}")
			s.delay = 20 * time.Second
			return s
		}}
	}
	timeouts := config.Timeouts{InitialRound: 30 * time.Second, SubsequentRound: 100 * time.Second, RoundGrace: 15 * time.Second}
	for _, obey := range []bool{true, false} {
		name := "told to submit, it does"
		if !obey {
			name = "it goes on: the round is cut"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := model(obey)
				as := agents(m)
				as[0].Tools = tool.Set{slowTool("mcp__kb__slow", 0)}
				res, evs := run(t, t.Context(), Options{Agents: as, Timeouts: timeouts, Orchestrator: config.Orchestrator{FailureBudget: 2}})
				rounds := ofType[event.RoundTimeout](evs)
				if len(rounds) == 0 || rounds[0].Phase != event.RoundSoft || rounds[0].Round != 1 || rounds[0].LimitSeconds != 30 ||
					rounds[0].ElapsedSeconds != 40 || rounds[0].GraceSeconds != 15 {
					t.Fatalf("round timeouts %+v", rounds)
				}
				if !strings.Contains(lastUser(m.requests()[2]), "Time is up for your first round: 40s spent, the limit is 30s") {
					t.Errorf("third call's message: %s", lastUser(m.requests()[2]))
				}
				if obey {
					if res.ExitCode != 0 || len(rounds) != 1 || len(ofType[event.AgentError](evs)) != 0 {
						t.Fatalf("result %+v, round timeouts %+v, errors %+v", res, rounds, ofType[event.AgentError](evs))
					}
					return
				}
				// Cut at 45 s, in the middle of its third call; then its second round has the
				// subsequent limit, and is cut too: two failed rounds use up the budget of 2.
				if len(rounds) != 4 || rounds[1].Phase != event.RoundCut || rounds[1].ElapsedSeconds != 45 ||
					rounds[2].Round != 2 || rounds[2].LimitSeconds != 100 || rounds[3].Phase != event.RoundCut {
					t.Fatalf("round timeouts %+v", rounds)
				}
				errs := ofType[event.AgentError](evs)
				if len(errs) != 2 || !errs[0].Timeout || !strings.Contains(errs[0].Message, "went over initial_round_timeout_seconds (30s)") ||
					!strings.Contains(errs[1].Message, "subsequent_round_timeout_seconds (1m40s)") {
					t.Fatalf("errors %+v", errs)
				}
				if res.ExitCode != 2 || res.EndReason != event.EndAllDead {
					t.Errorf("result %+v", res)
				}
			})
		})
	}
}

func TestRun_RoundTimeoutBoundsToolRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One call asks for a tool that takes 10 minutes: the round (10 s + 5 s) cuts it off.
		m := &fake{next: func(n int, req provider.Request) step {
			if n == 1 {
				return toolCall("t", "mcp__kb__slow", "{}")
			}
			if ls := labels(req); len(ls) > 0 {
				return vote(ls[0], "ok")
			}
			return answer("Paris.")
		}}
		as := agents(m)
		as[0].Tools = tool.Set{slowTool("mcp__kb__slow", 10*time.Minute)}
		start := time.Now()
		_, evs := run(t, t.Context(), Options{Agents: as, Timeouts: config.Timeouts{InitialRound: 10 * time.Second, RoundGrace: 5 * time.Second},
			Orchestrator: config.Orchestrator{FinalAnswerStrategy: config.StrategyWinnerReuse}})
		if d := time.Since(start); d != 15*time.Second {
			t.Errorf("the session took %s, want 15s: the tool was not cut off with its round", d)
		}
		res := ofType[event.ToolResult](evs)
		if len(res) != 1 || !res[0].IsError || res[0].DurationMS != 15000 {
			t.Errorf("tool results %+v", res)
		}
		if r := ofType[event.RoundTimeout](evs); len(r) != 1 || r[0].Phase != event.RoundCut {
			t.Errorf("round timeouts %+v", r)
		}
	})
}

func TestRun_PersonaGenerator(t *testing.T) {
	withPersonas := func(reply step) *fake {
		f := answerThenVote("Paris.", "agent1")
		inner := f.next
		f.next = func(n int, req provider.Request) step {
			if req.Stage == provider.StagePersona {
				return reply
			}
			return inner(n, req)
		}
		return f
	}
	tests := []struct {
		name         string
		reply        step
		want         []string // persona text in each agent's system prompt
		wantFallback bool
		wantWarning  string
	}{
		{name: "json", reply: step{text: "Here they are:\n```json\n{\"personas\": {\"agent1\": {\"persona_text\": \"You favour brevity.\"}, \"agent2\": \"You favour depth.\"}}\n```"},
			want: []string{"You favour brevity.", "You favour depth."}},
		{name: "numbered list", reply: step{text: "1. You favour brevity.\n2. **You favour depth,**\n   and examples."},
			want: []string{"You favour brevity.", "You favour depth,** and examples."}},
		{name: "one missing", reply: step{text: `{"personas": {"agent2": "You favour depth."}}`},
			want: []string{"You value rigour", "You favour depth."}, wantFallback: true, wantWarning: "had none for agent1"},
		{name: "the call fails", reply: step{err: errRetryable},
			want: []string{"You value rigour", "You value originality"}, wantFallback: true, wantWarning: "the persona call failed"},
		{name: "an unreadable reply", reply: step{text: "I would rather not."},
			want: []string{"You value rigour", "You value originality"}, wantFallback: true, wantWarning: "could not be read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, second := withPersonas(tc.reply), answerThenVote("Paris, France.", "agent1")
			res, evs := run(t, t.Context(), Options{Agents: agents(first, second),
				Orchestrator: config.Orchestrator{PersonaGenerator: config.PersonaGenerator{Enabled: true, DiversityMode: "perspective"}}})
			if res.ExitCode != 0 {
				t.Fatalf("result %+v", res)
			}
			ask := first.requests()[0]
			if ask.Stage != provider.StagePersona || len(ask.Tools) != 0 || !strings.Contains(lastUser(ask), "Agents: agent1, agent2") ||
				strings.Contains(lastUser(ask), "a1") {
				t.Fatalf("persona request %+v", ask)
			}
			for k, f := range []*fake{first, second} {
				var coordination provider.Request
				for _, r := range f.requests() {
					if r.Stage == provider.StageInitial {
						coordination = r
						break
					}
				}
				if !strings.Contains(coordination.System, tc.want[k]) || !strings.Contains(coordination.System, "treat this perspective as a preference") {
					t.Errorf("agent %d's system prompt lacks its persona %q:\n%s", k+1, tc.want[k], coordination.System)
				}
			}
			gen := ofType[event.PersonasGenerated](evs)
			if len(gen) != 1 || gen[0].Agent != "a1" || gen[0].Mode != "perspective" || len(gen[0].Personas) != 2 ||
				!strings.Contains(gen[0].Warning, tc.wantWarning) || (tc.wantWarning == "") != (gen[0].Warning == "") {
				t.Fatalf("personas event %+v", gen)
			}
			if fb := gen[0].Personas[0].Fallback || gen[0].Personas[1].Fallback; fb != tc.wantFallback {
				t.Errorf("fallback = %v, want %v", fb, tc.wantFallback)
			}
			if s := ofType[event.SessionStarted](evs)[0].Settings; s.PersonaGenerator != "perspective" {
				t.Errorf("settings %+v", s)
			}
		})
	}
}

// The offline demo's scripted agents answer persona_generator's call too.
func TestRun_PersonaGeneratorWithScriptedAgents(t *testing.T) {
	sa := func(answer string) provider.Provider {
		return scripted.New(config.Script{Answers: []string{answer}}, "m")
	}
	_, evs := run(t, t.Context(), Options{Agents: agents(sa("Paris."), sa("Paris, France."), sa("It is Paris.")),
		Orchestrator: config.Orchestrator{PersonaGenerator: config.PersonaGenerator{Enabled: true, DiversityMode: "methodology"}}})
	gen := ofType[event.PersonasGenerated](evs)
	if len(gen) != 1 || gen[0].Warning != "" || gen[0].Mode != "methodology" {
		t.Fatalf("personas %+v", gen)
	}
	seen := map[string]bool{}
	for _, p := range gen[0].Personas {
		if p.Fallback || p.Text == "" || seen[p.Text] {
			t.Errorf("persona %+v is a fallback, empty or not distinct", p)
		}
		seen[p.Text] = true
	}
}
