package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// stubbornPresenter coordinates like answerThenVote, then, presenting, does what present
// says on its n-th presentation call (from 1), whatever the request's tool choice: a model
// that ignores it, or a coding-agent CLI that cannot take it.
func stubbornPresenter(content string, present func(n int) step) *fake {
	calls := 0
	coordinate := answerThenVote(content, "agent1").next
	return &fake{next: func(n int, req provider.Request) step {
		if req.Stage != provider.StagePresentation {
			return coordinate(n, req)
		}
		calls++
		return present(calls)
	}}
}

func voteWith(text string) step {
	s := vote("agent1", "still the best")
	s.text = text
	return s
}

func TestPresentation_StubbornPresenterIsBounded(t *testing.T) {
	realTool := func() tool.Tool {
		return tool.Tool{
			Spec: provider.ToolSpec{Name: "mcp__kb__lookup", Description: "look up", Parameters: map[string]any{"type": "object"}},
			Run:  func(context.Context, string) tool.Result { return tool.Result{Content: "Paris has 2.1M people."} },
		}
	}
	tests := []struct {
		name       string
		agents     int
		orch       config.Orchestrator
		withTool   bool
		present    func(n int) step
		wantCalls  int
		wantChoice provider.ToolChoice // of the presentation requests after a refused call (the first is always auto)
		wantFinal  string
		wantFall   bool   // the stored answer was used
		wantError  string // in the AgentError of the presentation
		wantReject int    // ToolRejected events of the presenter
	}{
		{name: "always votes: one refusal, one more call, the stored answer", agents: 2,
			present:   func(int) step { return vote("agent1", "best") },
			wantCalls: 2, wantChoice: provider.ToolChoiceNone, wantFinal: "Paris.", wantFall: true,
			wantError: "the presenter kept calling vote after being told not to", wantReject: 2},
		{name: "votes with text: the text is the presentation", agents: 2,
			present:   func(n int) step { return voteWith("FINAL: Paris, take " + string(rune('0'+n))) },
			wantCalls: 2, wantChoice: provider.ToolChoiceNone, wantFinal: "FINAL: Paris, take 2", wantReject: 2},
		{name: "votes once, then writes", agents: 2,
			present: func(n int) step {
				if n == 1 {
					return vote("agent1", "best")
				}
				return step{text: "FINAL: Paris."}
			},
			wantCalls: 2, wantChoice: provider.ToolChoiceNone, wantFinal: "FINAL: Paris.", wantReject: 1},
		{name: "obeys: one call", agents: 2,
			present:   func(int) step { return step{text: "FINAL: Paris."} },
			wantCalls: 1, wantChoice: provider.ToolChoiceNone, wantFinal: "FINAL: Paris."},
		{name: "quick merge (synthesize, no votes)", agents: 2,
			orch:      config.Orchestrator{FinalAnswerStrategy: config.StrategySynthesize, MaxNewAnswersPerAgent: 1},
			present:   func(int) step { return vote("agent1", "best") },
			wantCalls: 2, wantChoice: provider.ToolChoiceNone, wantFinal: "Paris.", wantFall: true,
			wantError: "kept calling vote", wantReject: 2},
		{name: "one agent (--quick) calls a tool it was never offered", agents: 1, orch: config.Orchestrator{SkipVoting: true},
			present:   func(int) step { return vote("agent1", "best") },
			wantCalls: 2, wantChoice: provider.ToolChoiceNone, wantFinal: "Paris.", wantFall: true,
			wantError: "kept calling vote", wantReject: 2},
		{name: "fresh presentation without tools", agents: 2, orch: config.Orchestrator{PresentationContext: config.PresentFresh},
			present:   func(int) step { return vote("agent1", "best") },
			wantCalls: 2, wantChoice: provider.ToolChoiceAuto, wantFinal: "Paris.", wantFall: true,
			wantError: "kept calling vote", wantReject: 2},
		{name: "a presenter with tools of its own may still use them", agents: 2, withTool: true,
			present: func(n int) step {
				if n <= 3 {
					return step{calls: []provider.ToolCall{{ID: "t1", Name: "mcp__kb__lookup", Arguments: "{}"}}}
				}
				return step{text: "FINAL: Paris, 2.1M people."}
			},
			wantCalls: 4, wantChoice: provider.ToolChoiceAuto, wantFinal: "FINAL: Paris, 2.1M people."},
		{name: "a presenter with tools of its own that keeps voting", agents: 2, withTool: true,
			present: func(n int) step {
				if n == 1 {
					return step{calls: []provider.ToolCall{{ID: "t1", Name: "mcp__kb__lookup", Arguments: "{}"}}}
				}
				return vote("agent1", "best")
			},
			wantCalls: 3, wantChoice: provider.ToolChoiceAuto, wantFinal: "Paris.", wantFall: true,
			wantError: "kept calling vote", wantReject: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			presenter := stubbornPresenter("Paris.", tc.present)
			ps := []provider.Provider{presenter}
			if tc.agents == 2 {
				ps = append(ps, answerThenVote("Lyon.", "agent1"))
			}
			as := agents(ps...)
			if tc.withTool {
				as[0].Tools = tool.Set{realTool()}
			}
			res, evs := run(t, t.Context(), Options{Agents: as, Orchestrator: tc.orch})
			if res.ExitCode != 0 || res.Winner != "a1" || res.FinalAnswer != tc.wantFinal {
				t.Fatalf("result %+v, want a1 presenting %q", res, tc.wantFinal)
			}
			reqs := presentations(presenter)
			if len(reqs) != tc.wantCalls {
				t.Fatalf("%d presentation calls, want %d", len(reqs), tc.wantCalls)
			}
			want := provider.ToolChoiceAuto
			for k, r := range reqs {
				if r.ToolChoice != want {
					t.Errorf("presentation call %d: tool choice %q, want %q", k+1, r.ToolChoice, want)
				}
				if refusedStep(tc.present(k + 1)) {
					want = tc.wantChoice
				}
			}
			if f := ofType[event.FinalAnswer](evs); len(f) != 1 || f[0].Fallback != tc.wantFall {
				t.Errorf("final answer %+v, want fallback %v", f, tc.wantFall)
			}
			var errs []string
			for _, e := range ofType[event.AgentError](evs) {
				if strings.Contains(e.Message, "final presentation") {
					errs = append(errs, e.Message)
				}
			}
			if tc.wantError == "" && len(errs) > 0 || tc.wantError != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.wantError)) {
				t.Errorf("presentation errors %q, want one with %q", errs, tc.wantError)
			}
			rejected := 0
			for _, r := range ofType[event.ToolRejected](evs) {
				if r.Agent == "a1" {
					rejected++
				}
			}
			if rejected != tc.wantReject {
				t.Errorf("%d calls of a1 rejected, want %d", rejected, tc.wantReject)
			}
		})
	}
}

// refusedStep reports whether a presentation step calls a tool the presenter does not have.
func refusedStep(s step) bool {
	return slices.ContainsFunc(s.calls, func(c provider.ToolCall) bool { return c.Name != "mcp__kb__lookup" })
}

// TestPresentation_NoneKeepsTheCachedTools checks that a continued presentation offers the
// tools of the presenter's last coordination call unchanged (the cache keys on them), first
// with the default tool choice (changing it loses Anthropic's cached messages), then, after a
// refused vote, with tool calls forbidden.
func TestPresentation_NoneKeepsTheCachedTools(t *testing.T) {
	presenter := stubbornPresenter("Paris.", func(n int) step {
		if n == 1 {
			return vote("agent1", "best")
		}
		return step{text: "FINAL: Paris."}
	})
	res, _ := run(t, t.Context(), Options{Agents: agents(presenter, answerThenVote("Lyon.", "agent1"))})
	if res.ExitCode != 0 || res.FinalAnswer != "FINAL: Paris." {
		t.Fatalf("result %+v", res)
	}
	reqs := presenter.requests()
	last, first, second := reqs[len(reqs)-3], reqs[len(reqs)-2], reqs[len(reqs)-1]
	if last.Stage == provider.StagePresentation || first.Stage != provider.StagePresentation || second.Stage != provider.StagePresentation {
		t.Fatalf("stages %q, %q, %q", last.Stage, first.Stage, second.Stage)
	}
	name := func(s provider.ToolSpec) string { return s.Name }
	same := func(a, b []provider.ToolSpec) bool {
		return slices.EqualFunc(a, b, func(x, y provider.ToolSpec) bool { return name(x) == name(y) })
	}
	if len(last.Tools) == 0 || !same(last.Tools, first.Tools) || !same(last.Tools, second.Tools) {
		t.Errorf("presentation tools %v then %v, coordination tools %v", first.Tools, second.Tools, last.Tools)
	}
	if last.ToolChoice != provider.ToolChoiceAuto || first.ToolChoice != provider.ToolChoiceAuto || second.ToolChoice != provider.ToolChoiceNone {
		t.Errorf("tool choice %q, %q, %q, want auto, auto, none", last.ToolChoice, first.ToolChoice, second.ToolChoice)
	}
}
