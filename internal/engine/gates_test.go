package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// delayed answers content after d on its first call, then votes for the last label it is shown.
func delayed(content string, d time.Duration) *fake {
	return &fake{next: func(n int, req provider.Request) step {
		if req.Stage == provider.StagePresentation {
			return step{text: "FINAL: " + content}
		}
		if !hasOwnAnswer(req, content) {
			s := answer(content)
			s.delay = d
			return s
		}
		ls := labels(req)
		return vote(ls[len(ls)-1], "the latest")
	}}
}

func TestRun_DeferVotingUntilAllAnswered(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprintf("defer=%v", deferred), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fast := delayed("Paris.", 0)
				res, evs := run(t, t.Context(), Options{
					Agents: agents(fast, delayed("Paris, on the Seine.", 10*time.Second)),
					// The conversation goes on (turn_context: continue) so that the held-back call's result can be checked.
					Orchestrator: config.Orchestrator{DeferVotingUntilAllAnswered: deferred, TurnContext: config.TurnContinue},
				})
				if res.ExitCode != 0 || res.EndReason != event.EndConsensus {
					t.Fatalf("result %+v", res)
				}
				var first event.VoteCast
				for _, v := range ofType[event.VoteCast](evs) {
					if v.Agent == "a1" {
						first = v
						break
					}
				}
				held := ofType[event.VoteDeferred](evs)
				if !deferred {
					if first.Version != 1 || len(held) != 0 {
						t.Fatalf("without defer the fast agent's first vote is on version %d (want 1); held back %+v", first.Version, held)
					}
					return
				}
				if len(held) != 1 || held[0].Agent != "a1" || len(held[0].Waiting) != 1 || held[0].Waiting[0] != "agent2" {
					t.Fatalf("held back votes %+v", held)
				}
				if first.Version != 2 {
					t.Errorf("the fast agent's first counted vote is on version %d, want 2 (after everyone answered)", first.Version)
				}
				waits := ofType[event.AgentWaiting](evs)
				if len(waits) != 1 || waits[0].Agent != "a1" || !strings.Contains(waits[0].Reason, "waiting for agent2") {
					t.Errorf("waiting events %+v", waits)
				}
				// Its next turn continued the conversation: the held-back call's result says voting
				// is open and carries the answer it waited for.
				reqs := fast.requests()
				last := reqs[2].Messages[len(reqs[2].Messages)-1]
				if last.Role != provider.RoleTool || !strings.Contains(last.Content, "voting is open") ||
					!strings.Contains(last.Content, "<agent2>\nParis, on the Seine.\n<end of agent2>") {
					t.Errorf("continuation %+v", last)
				}
				if !strings.Contains(reqs[0].System, "Voting opens once every agent has submitted an answer") {
					t.Errorf("system prompt does not say so:\n%s", reqs[0].System)
				}
			})
		})
	}
}

// slowTool is a tool that takes d.
func slowTool(name string, d time.Duration) tool.Tool {
	return tool.Tool{
		Spec: provider.ToolSpec{Name: name, Description: "slow", Parameters: map[string]any{"type": "object"}},
		Run: func(ctx context.Context, _ string) tool.Result {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return tool.Result{Content: "done"}
			case <-ctx.Done():
				return tool.Errorf("cancelled")
			}
		},
	}
}

// researcher calls a tool on its first calls (each call taking delay), then answers if it has
// been shown no answer, else votes for the last label.
func researcher(tools int, delay time.Duration) *fake {
	return &fake{next: func(n int, req provider.Request) step {
		if req.Stage == provider.StagePresentation {
			return step{text: "FINAL"}
		}
		if n <= tools {
			s := toolCall(fmt.Sprintf("t%d", n), "mcp__kb__slow", "{}")
			s.delay = delay
			return s
		}
		ls := labels(req)
		if len(ls) == 0 {
			return answer("Paris, after research.")
		}
		return vote(ls[len(ls)-1], "read it")
	}}
}

func countUpdates(f *fake) (updates, blocks int, labels []string) {
	seen := map[string]bool{}
	for _, r := range f.requests() {
		for _, m := range r.Messages {
			if m.Role != provider.RoleUser || !strings.HasPrefix(m.Content, "While you were working") || seen[m.Content] {
				continue
			}
			seen[m.Content] = true
			updates++
			for _, l := range []string{"agent1", "agent2", "agent3", "agent4"} {
				if strings.Contains(m.Content, "<"+l+">\n") {
					blocks++
					labels = append(labels, l)
				}
			}
		}
	}
	return updates, blocks, labels
}

func TestRun_DisableInjection(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		t.Run(fmt.Sprintf("disable_injection=%v", disabled), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := researcher(2, 10*time.Second)
				as := agents(r, delayed("Lyon is not it; Paris.", 5*time.Second))
				as[0].Tools = tool.Set{slowTool("mcp__kb__slow", 0)}
				res, evs := run(t, t.Context(), Options{Agents: as, Orchestrator: config.Orchestrator{DisableInjection: disabled}})
				if res.ExitCode != 0 {
					t.Fatalf("result %+v", res)
				}
				updates, _, _ := countUpdates(r)
				if disabled {
					if updates != 0 {
						t.Errorf("%d mid-turn updates with disable_injection", updates)
					}
					// Not shown the peer's answer, it wrote its own and saw the peer's on its next turn.
					if a := ofType[event.AnswerSubmitted](evs); len(a) != 2 {
						t.Errorf("answers %+v", a)
					}
					return
				}
				if updates != 1 {
					t.Errorf("%d mid-turn updates, want 1", updates)
				}
				for _, a := range ofType[event.AnswerSubmitted](evs) {
					if a.Agent == "a1" {
						t.Errorf("the researcher answered although it was shown the peer's answer mid-turn: %+v", a)
					}
				}
			})
		})
	}
}

func TestRun_MidstreamInjectionCap(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fairness   config.Fairness
		wantBlocks []string
	}{
		{name: "fairness off: every new answer", fairness: config.Fairness{}, wantBlocks: []string{"agent2", "agent3", "agent4"}},
		{name: "cap 1: the newest only", fairness: config.Fairness{Enabled: true, LeadCapAnswers: 5, MaxMidstreamInjectionsPerRound: 1},
			wantBlocks: []string{"agent4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := researcher(4, 10*time.Second)
				as := agents(r, delayed("Paris.", 5*time.Second), delayed("Paris, France.", 6*time.Second), delayed("It is Paris.", 7*time.Second))
				as[0].Tools = tool.Set{slowTool("mcp__kb__slow", 0)}
				res, evs := run(t, t.Context(), Options{Agents: as, Orchestrator: config.Orchestrator{Fairness: tc.fairness}})
				if res.ExitCode != 0 {
					t.Fatalf("result %+v", res)
				}
				_, _, got := countUpdates(r)
				if strings.Join(got, ",") != strings.Join(tc.wantBlocks, ",") {
					t.Errorf("answers delivered mid-turn: %v, want %v", got, tc.wantBlocks)
				}
				if len(tc.wantBlocks) == 1 {
					// Its vote was cast without having seen every answer: it does not count, and
					// the next turn shows the rest.
					ign := ofType[event.VoteIgnored](evs)
					if len(ign) == 0 || ign[0].Agent != "a1" {
						t.Errorf("ignored votes %+v", ign)
					}
				}
			})
		})
	}
}

func TestRun_FairnessLeadCap(t *testing.T) {
	// The fast agent answers three times in a row, then votes; the slow one answers after 30 s.
	fastModel := func() *fake {
		return &fake{next: func(n int, req provider.Request) step {
			if req.Stage == provider.StagePresentation {
				return step{text: "FINAL"}
			}
			own := 0
			for _, m := range req.Messages {
				for _, c := range m.ToolCalls {
					if c.Name == "new_answer" {
						own++
					}
				}
			}
			last := req.Messages[len(req.Messages)-1]
			if own < 3 && !(last.Role == provider.RoleTool && last.IsError) {
				return answer(fmt.Sprintf("fast answer %d", own+1))
			}
			ls := labels(req)
			return vote(ls[len(ls)-1], "done")
		}}
	}
	tests := []struct {
		name        string
		orch        config.Orchestrator
		wantBefore  int    // fast answers before the slow agent's first
		wantWait    bool   // an AgentWaiting event for the fast agent
		wantRejects string // a rejection of the fast agent's answer
	}{
		{name: "fairness off", orch: config.Orchestrator{}, wantBefore: 3},
		{name: "lead cap 1 pauses the fast agent", orch: config.Orchestrator{Fairness: config.Fairness{Enabled: true, LeadCapAnswers: 1}},
			wantBefore: 1, wantWait: true},
		{name: "without injection there is no pause: the answer is refused", orch: config.Orchestrator{DisableInjection: true,
			Fairness: config.Fairness{Enabled: true, LeadCapAnswers: 1}}, wantBefore: 1, wantRejects: "fairness lead cap reached"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The fast model counts its answers in its conversation, which turn_context: continue keeps.
				tc.orch.TurnContext = config.TurnContinue
				res, evs := run(t, t.Context(), Options{Agents: agents(fastModel(), delayed("the slow answer", 30*time.Second)), Orchestrator: tc.orch})
				if res.ExitCode != 0 {
					t.Fatalf("result %+v", res)
				}
				before := 0
				for _, a := range ofType[event.AnswerSubmitted](evs) {
					if a.Agent == "a2" {
						break
					}
					before++
				}
				if before != tc.wantBefore {
					t.Errorf("%d fast answers before the slow agent's first, want %d", before, tc.wantBefore)
				}
				var waited bool
				for _, w := range ofType[event.AgentWaiting](evs) {
					waited = waited || (w.Agent == "a1" && strings.Contains(w.Reason, "fairness"))
				}
				if waited != tc.wantWait {
					t.Errorf("waited = %v, want %v", waited, tc.wantWait)
				}
				var rejected bool
				for _, r := range ofType[event.ToolRejected](evs) {
					rejected = rejected || (tc.wantRejects != "" && strings.Contains(r.Error, tc.wantRejects))
				}
				if rejected != (tc.wantRejects != "") {
					t.Errorf("rejected = %v, want %q (%+v)", rejected, tc.wantRejects, ofType[event.ToolRejected](evs))
				}
			})
		})
	}
}
