package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func run(t *testing.T, ctx context.Context, o Options) (Result, []event.Event) {
	t.Helper()
	rec := &recorder{}
	o.Bus = event.NewBus(nil)
	o.Bus.Subscribe(rec)
	o.Question = "What is the capital of France?"
	if o.RetryDelay == nil {
		o.RetryDelay = func(int) time.Duration { return 0 }
	}
	res := Run(ctx, o)
	evs := rec.all()
	if _, ok := evs[0].Payload.(event.SessionStarted); !ok {
		t.Fatalf("first event is %T", evs[0].Payload)
	}
	if end, ok := evs[len(evs)-1].Payload.(event.SessionEnded); !ok || end.ExitCode != res.ExitCode {
		t.Fatalf("last event is %+v, result exit %d", evs[len(evs)-1].Payload, res.ExitCode)
	}
	return res, evs
}

func TestRun_Consensus(t *testing.T) {
	res, evs := run(t, t.Context(), Options{Agents: agents(
		answerThenVote("Paris.", "agent2"),
		answerThenVote("Paris, on the Seine.", "agent2"),
		answerThenVote("It is Paris.", "agent2"),
	)})
	if res.ExitCode != 0 || res.Winner != "a2" || res.FinalAnswer != "FINAL: Paris, on the Seine." {
		t.Fatalf("result %+v", res)
	}
	ended := ofType[event.CoordinationEnded](evs)
	if len(ended) != 1 || ended[0].Reason != event.EndConsensus || ended[0].WinnerLabel != "agent2" {
		t.Fatalf("coordination ended: %+v", ended)
	}
	final := ofType[event.FinalAnswer](evs)
	if len(final) != 1 || final[0].Label != "agent2.final" || final[0].Fallback {
		t.Fatalf("final: %+v", final)
	}
	// Every counted vote was cast on the answer set current at that moment.
	version := 0
	for _, e := range evs {
		switch v := e.Payload.(type) {
		case event.AnswerSubmitted:
			version = v.Version
		case event.VoteCast:
			if v.Version != version {
				t.Errorf("vote by %s counted on version %d, current %d", v.Agent, v.Version, version)
			}
		}
	}
}

func TestRun_NoWorkflowToolKillsAgentAfterBudget(t *testing.T) {
	silent := &fake{next: func(int, provider.Request) step { return step{text: "I think Paris."} }}
	res, evs := run(t, t.Context(), Options{
		Agents:       agents(answerThenVote("Paris.", "agent1"), silent),
		Orchestrator: config.Orchestrator{FailureBudget: 2},
	})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("result %+v", res)
	}
	if n := len(silent.requests()); n != 2*maxCallsPerTurn {
		t.Errorf("silent agent got %d calls, want %d (budget 2 × 3 calls)", n, 2*maxCallsPerTurn)
	}
	if got := len(ofType[event.EnforcementSent](evs)); got != 2*(maxCallsPerTurn) {
		t.Errorf("%d enforcement messages", got)
	}
	dead := ofType[event.AgentDead](evs)
	if len(dead) != 1 || dead[0].Agent != "a2" {
		t.Fatalf("dead: %+v", dead)
	}
	// The enforcement text reached the model as a user message after its text-only reply.
	msgs := silent.requests()[1].Messages
	if len(msgs) < 3 || msgs[1].Role != provider.RoleAssistant || msgs[2].Role != provider.RoleUser ||
		!strings.Contains(msgs[2].Content, "did not call a tool") {
		t.Errorf("second call's messages: %+v", msgs)
	}
}

func TestRun_InvalidVoteGetsFixableError(t *testing.T) {
	synctest.Test(t, testInvalidVote)
}

func testInvalidVote(t *testing.T) {
	confused := &fake{next: func(n int, req provider.Request) step {
		switch {
		case !hasOwnAnswer(req, "Lyon?"):
			s := answer("Lyon?")
			s.delay = time.Second // lands after agent 1's answer, so its next call sees both
			return s
		case n == 2:
			return vote("agent7", "no such agent")
		default:
			return vote("agent1", "fixed")
		}
	}}
	res, evs := run(t, t.Context(), Options{Agents: agents(answerThenVote("Paris.", "agent1"), confused)})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("result %+v", res)
	}
	rej := ofType[event.ToolRejected](evs)
	if len(rej) != 1 || !strings.Contains(rej[0].Error, `invalid agent_id "agent7"; valid agents: agent1, agent2`) {
		t.Fatalf("rejections: %+v", rej)
	}
	// The error went back as the result of that very call, so the model could fix it.
	reqs := confused.requests()
	var found bool
	for _, m := range reqs[2].Messages {
		if m.Role == provider.RoleTool && m.IsError && strings.Contains(m.Content, "agent7") {
			found = true
		}
	}
	if !found {
		t.Error("third call does not carry the rejected vote's error result")
	}
}

func TestRun_TimeoutsAndFailures(t *testing.T) {
	tests := []struct {
		name      string
		bad       *fake
		wantDead  bool
		wantCalls int
	}{
		{name: "hang ends at the per-call timeout", bad: &fake{next: func(int, provider.Request) step { return step{hang: true} }}, wantDead: true, wantCalls: 3},
		{name: "retryable errors use the budget", bad: &fake{next: func(int, provider.Request) step { return step{err: errRetryable} }}, wantDead: true, wantCalls: 3},
		{name: "fatal error kills at once", bad: &fake{next: func(int, provider.Request) step {
			return step{err: &provider.Error{Provider: "fake", Status: 401, Fatal: true, Err: context.Canceled}}
		}}, wantDead: true, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res, evs := run(t, t.Context(), Options{
					Agents:   agents(answerThenVote("Paris.", "agent1"), tc.bad),
					Timeouts: config.Timeouts{Agent: 30 * time.Second},
				})
				if res.ExitCode != 0 || res.Winner != "a1" {
					t.Fatalf("result %+v", res)
				}
				if got := len(tc.bad.requests()); got != tc.wantCalls {
					t.Errorf("bad agent got %d calls, want %d", got, tc.wantCalls)
				}
				if dead := ofType[event.AgentDead](evs); (len(dead) == 1) != tc.wantDead {
					t.Errorf("dead: %+v", dead)
				}
			})
		})
	}
}

func TestRun_AllDeadExits2(t *testing.T) {
	broken := func() *fake {
		return &fake{next: func(int, provider.Request) step { return step{err: errRetryable} }}
	}
	res, evs := run(t, t.Context(), Options{Agents: agents(broken(), broken())})
	if res.ExitCode != 2 || res.Status != event.StatusFailed || res.EndReason != event.EndAllDead {
		t.Fatalf("result %+v", res)
	}
	if len(ofType[event.FinalAnswer](evs)) != 0 {
		t.Error("final answer without any answer")
	}
	// The error says why each agent left, so that a client of serve or mcp learns what to fix.
	for _, d := range ofType[event.AgentDead](evs) {
		if want := d.Agent + ": " + d.Reason; res.Err == nil || !strings.Contains(res.Err.Error(), want) {
			t.Errorf("error %v lacks %q", res.Err, want)
		}
	}
	if n := len(ofType[event.AgentDead](evs)); n != 2 {
		t.Errorf("%d agents left, want 2", n)
	}
}

func TestRun_SessionTimeoutPresentsBestAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Agent 2 answers, then deliberates forever; agent 1 never gets past its first call.
		slow := &fake{next: func(n int, req provider.Request) step {
			if req.Stage == provider.StagePresentation {
				return step{text: "Paris (presented)."}
			}
			if n == 1 {
				return answer("Paris.")
			}
			return step{hang: true}
		}}
		stuck := &fake{next: func(int, provider.Request) step { return step{hang: true} }}
		res, evs := run(t, t.Context(), Options{
			Agents:   agents(stuck, slow),
			Timeouts: config.Timeouts{Orchestrator: time.Minute, Agent: time.Hour},
		})
		if res.ExitCode != 3 || res.Status != event.StatusTimeout || res.Winner != "a2" {
			t.Fatalf("result %+v", res)
		}
		if f := ofType[event.FinalAnswer](evs); len(f) != 1 || f[0].Content != "Paris (presented)." {
			t.Fatalf("final %+v", f)
		}
	})
}

func TestRun_InterruptKeepsBestAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		first := &fake{next: func(n int, req provider.Request) step {
			if n == 1 {
				return answer("Paris.")
			}
			cancel() // Ctrl-C while this agent deliberates
			return step{hang: true}
		}}
		res, evs := run(t, ctx, Options{Agents: agents(first)})
		if res.ExitCode != 4 || res.Status != event.StatusInterrupted {
			t.Fatalf("result %+v", res)
		}
		f := ofType[event.FinalAnswer](evs)
		if len(f) != 1 || f[0].Content != "Paris." || !f[0].Fallback || f[0].Mode != "verbatim" {
			t.Fatalf("final %+v", f)
		}
	})
}

func TestRun_StaleVoteContinuesConversation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Agent 1 answers at once. Agent 2 takes long to vote for it; meanwhile agent 1... no:
		// agent 3 answers late, so agent 2's vote lands on an outdated answer set.
		a1 := answerThenVote("Paris.", "agent1")
		a2 := &fake{next: func(n int, req provider.Request) step {
			switch n {
			case 1:
				s := answer("Paris is the capital.")
				return s
			case 2:
				s := vote("agent1", "first seen")
				s.delay = 10 * time.Second // agent 3's answer lands meanwhile
				return s
			}
			ls := labels(req)
			return vote(ls[len(ls)-1], "after the update")
		}}
		a3 := &fake{next: func(n int, req provider.Request) step {
			if n == 1 {
				s := answer("Paris, France.")
				s.delay = 5 * time.Second
				return s
			}
			return vote("agent3", "mine")
		}}
		res, evs := run(t, t.Context(), Options{Agents: agents(a1, a2, a3), Orchestrator: config.Orchestrator{TurnContext: config.TurnContinue}})
		if res.ExitCode != 0 {
			t.Fatalf("result %+v", res)
		}
		// a1 may also vote before a2's answer lands in the same instant; a2's is the one
		// this test is about.
		ign := ofType[event.VoteIgnored](evs)
		if !slices.ContainsFunc(ign, func(v event.VoteIgnored) bool { return v.Agent == "a2" && v.Reason == "first seen" }) {
			t.Fatalf("ignored votes: %+v", ign)
		}
		reqs := a2.requests()
		third := reqs[2]
		if len(third.Messages) <= len(reqs[1].Messages) {
			t.Fatal("third call did not continue the conversation")
		}
		last := third.Messages[len(third.Messages)-1]
		if last.Role != provider.RoleTool || !strings.Contains(last.Content, "not counted") || !strings.Contains(last.Content, "<agent3>\nParis, France.\n<end of agent3>") {
			t.Fatalf("continuation message: %+v", last)
		}
	})
}

func TestRun_VerbatimSkipsPresentationCall(t *testing.T) {
	a := answerThenVote("Paris.", "agent1")
	res, evs := run(t, t.Context(), Options{Agents: agents(a), Orchestrator: config.Orchestrator{FinalAnswerStrategy: config.StrategyWinnerReuse}})
	if res.ExitCode != 0 || res.FinalAnswer != "Paris." {
		t.Fatalf("result %+v", res)
	}
	for _, r := range a.requests() {
		if r.Stage == provider.StagePresentation {
			t.Fatal("verbatim made a presentation call")
		}
	}
	if f := ofType[event.FinalAnswer](evs); len(f) != 1 || f[0].Fallback {
		t.Fatalf("final %+v", f)
	}
}

func TestRun_CostBudgetStopsCoordination(t *testing.T) {
	busy := &fake{next: func(n int, req provider.Request) step {
		return answer(strings.Repeat("more ", n))
	}}
	res, evs := run(t, t.Context(), Options{
		Agents:       agents(busy),
		Orchestrator: config.Orchestrator{MaxCostUSD: 0.5, FinalAnswerStrategy: config.StrategyWinnerReuse},
		Price:        func(string, string, provider.Usage) float64 { return 0.2 },
	})
	if res.ExitCode != 0 || res.EndReason != event.EndBudget {
		t.Fatalf("result %+v", res)
	}
	if n := len(ofType[event.UsageReported](evs)); n != 3 {
		t.Errorf("%d priced calls, want 3 (0.2 each, budget 0.5)", n)
	}
}

func TestRun_PresentationFailureFallsBackToStoredAnswer(t *testing.T) {
	a := &fake{next: func(n int, req provider.Request) step {
		if req.Stage == provider.StagePresentation {
			return step{err: errRetryable}
		}
		if !hasOwnAnswer(req, "Paris.") {
			return answer("Paris.")
		}
		return vote("agent1", "mine")
	}}
	res, evs := run(t, t.Context(), Options{Agents: agents(a)})
	if res.ExitCode != 0 || res.FinalAnswer != "Paris." {
		t.Fatalf("result %+v", res)
	}
	f := ofType[event.FinalAnswer](evs)
	if len(f) != 1 || !f[0].Fallback || f[0].Mode != "regenerate" {
		t.Fatalf("final %+v", f)
	}
}

func TestRun_SkipCoordinationRounds(t *testing.T) {
	a := &fake{next: func(n int, req provider.Request) step {
		if req.Stage != provider.StagePresentation {
			t.Error("coordination call made although skipped")
		}
		return step{text: "Paris, directly."}
	}}
	res, evs := run(t, t.Context(), Options{Agents: agents(a, answerThenVote("x", "agent1")), Orchestrator: config.Orchestrator{SkipCoordinationRounds: true}})
	if res.ExitCode != 0 || res.Winner != "a1" || res.FinalAnswer != "Paris, directly." {
		t.Fatalf("result %+v", res)
	}
	if e := ofType[event.CoordinationEnded](evs); len(e) != 1 || e[0].Reason != event.EndSkipped {
		t.Fatalf("ended %+v", e)
	}
}

// A tool the provider ran itself (web search) is shown as a call and its result, is not run
// again, and does not count as the turn's workflow action.
func TestRun_HostedToolsAreShownNotRun(t *testing.T) {
	searcher := answerThenVote("Paris, per the search.", "agent1")
	inner := searcher.next
	searcher.next = func(n int, req provider.Request) step {
		st := inner(n, req)
		if n == 1 {
			st.hosted = []provider.HostedToolChunk{
				{Call: provider.ToolCall{ID: "ws_1", Name: provider.HostedWebSearch, Arguments: `{"query":"capital of France"}`}, Result: "3 results: en.wikipedia.org/wiki/Paris, ..."},
				{Call: provider.ToolCall{Name: provider.HostedCodeExecution, Arguments: `{"code":"1/0"}`}, Result: "ZeroDivisionError", Failed: true},
			}
		}
		return st
	}
	res, evs := run(t, t.Context(), Options{Agents: agents(searcher, answerThenVote("Paris.", "agent1"))})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("result %+v", res)
	}
	var got []string
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ToolCalled:
			if p.Call.Name != "new_answer" && p.Call.Name != "vote" {
				got = append(got, "call "+p.Call.ID+" "+p.Call.Name+" "+p.Call.Arguments)
			}
		case event.ToolResult:
			got = append(got, fmt.Sprintf("result %s %s %q error=%v", p.CallID, p.Tool, p.Content, p.IsError))
		case event.ToolRejected, event.EnforcementSent:
			t.Errorf("a hosted tool was treated as the model's own call: %+v", p)
		}
	}
	want := []string{
		`call ws_1 web_search {"query":"capital of France"}`,
		`result ws_1 web_search "3 results: en.wikipedia.org/wiki/Paris, ..." error=false`,
		`call hosted_1 code_execution {"code":"1/0"}`,
		`result hosted_1 code_execution "ZeroDivisionError" error=true`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
