package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// The targets of issues 12 and 25: a 3-agent session with 1,500-token answers bills, cache
// reads at Anthropic's 0.1x, at most 0.35 x I_min when the agents share one model (issue 12
// asked for 0.5), and at most 0.80 x when each is on a model of its own, where only an agent's
// own earlier requests can be read from a cache (0.75 is the floor for this protocol: each
// agent reads every answer once uncached).
func TestTokens_SessionBillsAtMostTheTarget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mixed bool
		max   float64
	}{
		{"one model", false, 0.35},
		{"a model each", true, 0.80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tokenTeam(t, 3, 1500, tc.mixed, config.Orchestrator{})
			if _, billed, _, _ := r.ratios(); billed > tc.max {
				t.Errorf("billed %.3f x I_min, want at most %.2f (input %d, cached %d, P %d)", billed, tc.max, r.input, r.cached, r.p)
			}
		})
	}
}

// With turn_context: shared every agent's vote turn opens with the same message (the task and
// the answers in label order), marked Stable, and names the agent's own answer after it; the
// presentation continues the winner's last request: same system and tools, its messages first.
func TestRun_SharedPrefixAndContinuedPresentation(t *testing.T) {
	fakes := []*fake{answerThenVote("Paris.", "agent2"), answerThenVote("Paris, on the Seine.", "agent2"), answerThenVote("It is Paris.", "agent2")}
	res, _ := run(t, t.Context(), Options{Agents: agents(fakes[0], fakes[1], fakes[2]),
		Orchestrator: config.Orchestrator{MaxNewAnswersPerAgent: 1, DeferVotingUntilAllAnswered: true}})
	if res.ExitCode != 0 || res.Winner != "a2" || res.FinalAnswer != "FINAL: Paris, on the Seine." {
		t.Fatalf("result %+v", res)
	}
	var prefix string
	for k, f := range fakes {
		var last provider.Request // the agent's last coordination request: its vote
		for _, r := range f.requests() {
			if r.Stage != provider.StagePresentation {
				last = r
			}
		}
		if len(last.Messages) < 2 || !last.Messages[0].Stable || last.Messages[1].Stable {
			t.Fatalf("agent %d: vote turn messages %+v", k+1, last.Messages)
		}
		if k == 0 {
			prefix = last.Messages[0].Content
		} else if last.Messages[0].Content != prefix {
			t.Errorf("agent %d's prefix differs:\n%s\nvs\n%s", k+1, last.Messages[0].Content, prefix)
		}
		if own := fmt.Sprintf("the one labelled agent%d above", k+1); !strings.Contains(last.Messages[1].Content, own) {
			t.Errorf("agent %d's turn does not name its answer: %q", k+1, last.Messages[1].Content)
		}
	}
	if !strings.Contains(prefix, "<agent1>\nParis.\n<end of agent1>\n\n<agent2>\nParis, on the Seine.\n<end of agent2>\n\n<agent3>") {
		t.Errorf("answers not in label order:\n%s", prefix)
	}
	reqs := fakes[1].requests()
	pres, vote := reqs[len(reqs)-1], reqs[len(reqs)-2]
	if pres.Stage != provider.StagePresentation || pres.System != vote.System || !slices.EqualFunc(pres.Tools, vote.Tools, sameSpec) {
		t.Fatalf("the presentation does not continue the winner's request: system or tools differ")
	}
	// The vote request's messages, then its response (the vote), its result and what to do.
	n := len(vote.Messages)
	if len(pres.Messages) != n+3 || pres.Messages[n].ToolCalls[0].Name != "vote" || pres.Messages[n+1].Role != provider.RoleTool ||
		!strings.Contains(pres.Messages[n+2].Content, "Coordination is over.") ||
		!strings.Contains(pres.Messages[n+2].Content, "Your answer (agent2) received 3 vote(s).") {
		t.Fatalf("presentation messages after the vote turn: %+v", pres.Messages[n:])
	}
	for k := range vote.Messages {
		if pres.Messages[k].Content != vote.Messages[k].Content {
			t.Fatalf("presentation message %d differs from the vote turn's", k)
		}
	}
}

func sameSpec(a, b provider.ToolSpec) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// A presentation that continues the conversation still offers vote and new_answer: a vote is
// refused, a new_answer's content is the final answer.
func TestRun_ContinuedPresentationWorkflowCalls(t *testing.T) {
	base := answerThenVote("Paris.", "agent1")
	var presCalls int
	presenter := &fake{next: func(n int, req provider.Request) step {
		if req.Stage != provider.StagePresentation {
			return base.next(n, req)
		}
		presCalls++
		if presCalls == 1 {
			return vote("agent1", "again")
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role != provider.RoleTool || !last.IsError || !strings.Contains(last.Content, "coordination is over") {
			t.Errorf("the vote in the presentation got %+v", last)
		}
		b, _ := json.Marshal(map[string]string{"content": "Paris, the final."})
		return step{calls: []provider.ToolCall{{ID: "p2", Name: "new_answer", Arguments: string(b)}}}
	}}
	res, evs := run(t, t.Context(), Options{Agents: agents(presenter)})
	if res.ExitCode != 0 || res.FinalAnswer != "Paris, the final." || presCalls != 2 {
		t.Fatalf("result %+v after %d presentation calls", res, presCalls)
	}
	if f := ofType[event.FinalAnswer](evs); len(f) != 1 || f[0].Fallback {
		t.Fatalf("final %+v", f)
	}
}

// A bounded view: each agent reads at most peer_view_size peers' answers and its own, votes
// only for one of them, and the session still ends in consensus.
func TestRun_BoundedViewLimitsWhatAgentsRead(t *testing.T) {
	const n, size = 12, 4
	fakes := make([]provider.Provider, n)
	for i := range fakes {
		fakes[i] = answerThenVote(fmt.Sprintf("Answer %d about Paris.", i+1), "agent1")
	}
	res, evs := run(t, t.Context(), Options{Agents: agents(fakes...),
		Orchestrator: config.Orchestrator{PeerView: config.PeerViewAuto, PeerViewSize: size, MaxNewAnswersPerAgent: 1, DeferVotingUntilAllAnswered: true}})
	if res.ExitCode != 0 || res.EndReason != event.EndConsensus {
		t.Fatalf("result %+v", res)
	}
	for k, p := range fakes {
		for _, r := range p.(*fake).requests() {
			if r.Stage == provider.StagePresentation {
				continue
			}
			if ls := labels(r); len(ls) > size+1 {
				t.Errorf("agent %d was offered %d labels: %v", k+1, len(ls), ls)
			}
			if got := strings.Count(r.Messages[0].Content, "<end of agent"); got > size+1 {
				t.Errorf("agent %d read %d answers", k+1, got)
			}
		}
	}
	votes := ofType[event.VoteCast](evs)
	if len(votes) < n || !votes[0].Scoped {
		t.Errorf("votes %+v", votes)
	}
}
