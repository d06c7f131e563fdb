package engine

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
)

// scriptedTeam is the demo's shape: one agent improves once it has read the others, everyone
// votes for the longest answer; new Providers each call, as a new process would have. n is 3
// or 4 (a fourth agent gives a bounded view of two peers something to leave out). With
// bounded, "longest" would pick among what each agent happened to read, which a resume's new
// timing changes: everyone votes for agent1 instead, by far the fastest, which leads every
// view from its own vote on.
func scriptedTeam(n int, bounded bool, tap *presentTap) []Agent {
	vote, step := "longest", time.Millisecond
	first := []string{"Paris.", "Paris is the capital of France, on the Seine, and its largest city."}
	if bounded {
		// agent1 must have voted before the others vote, also on a loaded machine.
		vote, step, first = "agent1", 10*time.Millisecond, first[:1]
	}
	scripts := []config.Script{
		{Answers: first, ImproveAfter: 3, Vote: vote, Final: "FINAL: Paris, on the Seine."},
		{Answers: []string{"The capital is Paris."}, Vote: vote, Latency: step},
		{Answers: []string{"It is Paris."}, Vote: vote, Latency: 2 * step},
		{Answers: []string{"Paris, France."}, Vote: vote, Latency: 3 * step},
	}[:n]
	out := make([]Agent, len(scripts))
	for i, s := range scripts {
		out[i] = Agent{ID: fmt.Sprintf("a%d", i+1), Backend: "scripted", Provider: tap.wrap(scripted.New(s, "scripted"))}
	}
	return out
}

// presentTap records the final presentation's first request, whichever agent makes it.
type presentTap struct {
	mu    sync.Mutex
	first *provider.Request
}

func (t *presentTap) wrap(p provider.Provider) provider.Provider { return tapped{p, t} }

func (t *presentTap) request() *provider.Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first
}

type tapped struct {
	provider.Provider
	t *presentTap
}

func (p tapped) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	if req.Stage == provider.StagePresentation {
		p.t.mu.Lock()
		if p.t.first == nil {
			p.t.first = &req
		}
		p.t.mu.Unlock()
	}
	return p.Provider.Stream(ctx, req)
}

// Cutting the log after any of its events and resuming from there ends with the winner and
// the final answer of the whole run, the log numbered on without a gap, no answer accepted
// twice, every vote still current at the cut kept until an answer replaces what its voter
// read, and the final presentation made with the system prompt and the tools of the whole
// run's, continuing a conversation when that did: under each layout of the requests.
func TestResume_FromEveryEvent(t *testing.T) {
	cases := []struct {
		name   string
		agents int
		orch   config.Orchestrator
	}{
		{"shared turns, continued presentation", 3, config.Orchestrator{}},
		{"shared turns, fresh presentation", 3, config.Orchestrator{PresentationContext: config.PresentFresh}},
		{"continued turns, continued presentation", 3, config.Orchestrator{TurnContext: config.TurnContinue}},
		{"continued turns, fresh presentation", 3, config.Orchestrator{TurnContext: config.TurnContinue, PresentationContext: config.PresentFresh}},
		{"shared turns, all peers, 4 agents", 4, config.Orchestrator{PeerView: config.PeerViewAll, PeerViewSize: 2}},
		{"bounded view, continued presentation", 4, config.Orchestrator{PeerView: config.PeerViewBounded, PeerViewSize: 2}},
		{"bounded view, fresh presentation", 4, config.Orchestrator{PeerView: config.PeerViewBounded, PeerViewSize: 2, PresentationContext: config.PresentFresh}},
	}
	for k, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if k > 0 && testing.Short() {
				t.Skip("every layout resumed from every event takes about 15 s")
			}
			wholeTap := &presentTap{}
			bounded := tc.orch.PeerView == config.PeerViewBounded
			whole, evs := run(t, t.Context(), Options{Agents: scriptedTeam(tc.agents, bounded, wholeTap), Orchestrator: tc.orch})
			if whole.ExitCode != 0 || whole.FinalAnswer == "" || wholeTap.request() == nil {
				t.Fatalf("whole run: %+v", whole)
			}
			if tc.orch.PeerView == config.PeerViewBounded && len(scopedVotes(evs)) == 0 {
				t.Fatalf("the bounded view's run cast no scoped vote")
			}
			for cut := 1; cut < len(evs); cut++ {
				resumeAt(t, scriptedTeam(tc.agents, bounded, &presentTap{}), bounded, tc.orch, evs, cut, whole, wholeTap.request())
			}
		})
	}
}

func resumeAt(t *testing.T, team []Agent, bounded bool, orch config.Orchestrator, evs []event.Event, cut int, whole Result, wholePres *provider.Request) {
	t.Helper()
	rec := &recorder{}
	bus := event.NewBus(nil)
	bus.ResumeAt(int64(cut))
	bus.Subscribe(rec)
	tap := team[0].Provider.(tapped).t
	res := Run(t.Context(), Options{Agents: team, Orchestrator: orch, Bus: bus, Question: "What is the capital of France?",
		RetryDelay: func(int) time.Duration { return 0 }, Restore: &Restore{Events: evs[:cut], Previous: "killed"}})
	at := fmt.Sprintf("cut after event %d (%s)", cut, evs[cut-1].Payload.Type())
	if res.ExitCode != 0 || res.Winner != whole.Winner || res.FinalAnswer != whole.FinalAnswer {
		t.Fatalf("%s: %+v, want winner %s and %q", at, res, whole.Winner, whole.FinalAnswer)
	}
	got := rec.all()
	r, ok := got[0].Payload.(event.SessionResumed)
	if !ok || got[0].Seq != int64(cut)+1 || r.AfterSeq != int64(cut) {
		t.Fatalf("%s: the resume opens with %+v (seq %d)", at, got[0].Payload, got[0].Seq)
	}
	// An answer accepted before the cut is never submitted again.
	before := map[string]bool{}
	for _, e := range evs[:cut] {
		if a, ok := e.Payload.(event.AnswerSubmitted); ok {
			before[a.Content] = true
		}
	}
	for _, a := range ofType[event.AnswerSubmitted](got) {
		if before[a.Content] {
			t.Fatalf("%s: %s's answer %q was accepted again", at, a.Agent, a.Content)
		}
	}
	// A vote current at the cut stands: its voter makes no call until an answer replaces
	// what it read.
	current := currentVotes(evs[:cut])
	for _, e := range got {
		switch p := e.Payload.(type) {
		case event.AnswerSubmitted:
			for id, scoped := range current {
				if !scoped || slices.Contains(p.Invalidated, id) {
					delete(current, id)
				}
			}
		case event.ModelCalled:
			if _, ok := current[p.Agent]; ok && p.Stage != provider.StagePresentation {
				t.Fatalf("%s: %s called again while its vote was current", at, p.Agent)
			}
		case event.CoordinationEnded:
			current = nil
		}
	}
	if pres := tap.request(); pres != nil {
		// The vote labels are those the presenter read on its last turn, which a bounded
		// view's timing may decide: the tools are compared by name there.
		same := slices.EqualFunc(pres.Tools, wholePres.Tools, sameSpec)
		if bounded {
			same = slices.Equal(toolNames(pres.Tools), toolNames(wholePres.Tools))
		}
		if pres.System != wholePres.System || !same {
			t.Fatalf("%s: the presentation's system prompt or tools differ from the whole run's:\n%s\n%v\nvs\n%s\n%v",
				at, pres.System, pres.Tools, wholePres.System, wholePres.Tools)
		}
		// Which answers arrive first depends on timing, so the messages may differ; a
		// presentation that continues a conversation continues one in both.
		if continued := len(pres.Messages) > 1; continued != (len(wholePres.Messages) > 1) {
			t.Fatalf("%s: the presentation continues a conversation: %v, in the whole run: %v", at, continued, !continued)
		}
	}
}

// currentVotes are the votes that count at the end of evs, by voter: true when cast on a
// bounded view (it counts until an answer names its voter), false when it counts only on
// the answer set it was cast on. Empty once coordination ended.
func currentVotes(evs []event.Event) map[string]bool {
	current := map[string]bool{}
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.VoteCast:
			current[p.Agent] = p.Scoped
		case event.AnswerSubmitted:
			for id, scoped := range current {
				if !scoped || slices.Contains(p.Invalidated, id) {
					delete(current, id)
				}
			}
		case event.CoordinationEnded:
			return nil
		}
	}
	return current
}

func scopedVotes(evs []event.Event) []event.VoteCast {
	return slices.DeleteFunc(ofType[event.VoteCast](evs), func(v event.VoteCast) bool { return !v.Scoped })
}

func toolNames(specs []provider.ToolSpec) []string {
	names := make([]string, len(specs))
	for k, s := range specs {
		names[k] = s.Name
	}
	return names
}

// A resumed session whose model without a price already used tokens before the cut still
// says its cost is unknown (the resume counted the cost it read from the log as all of it).
func TestResume_KeepsAnUnknownCost(t *testing.T) {
	team := func() []Agent {
		as := scriptedTeam(3, false, &presentTap{})
		as[1].Unpriced = true
		return as
	}
	whole, evs := run(t, t.Context(), Options{Agents: team()})
	if whole.ExitCode != 0 || !whole.CostUnknown {
		t.Fatalf("whole run: exit %d, cost unknown %v", whole.ExitCode, whole.CostUnknown)
	}
	cut := slices.IndexFunc(evs, func(e event.Event) bool {
		_, ok := e.Payload.(event.CoordinationEnded)
		return ok
	})
	if cut < 0 || slices.IndexFunc(evs[cut:], func(e event.Event) bool {
		u, ok := e.Payload.(event.UsageReported)
		return ok && u.Agent == "a2"
	}) >= 0 {
		t.Fatalf("a2 must have used its tokens before coordination ended (cut %d)", cut)
	}
	bus := event.NewBus(nil)
	bus.ResumeAt(int64(cut))
	res := Run(t.Context(), Options{Agents: team(), Bus: bus, Question: "What is the capital of France?",
		RetryDelay: func(int) time.Duration { return 0 }, Restore: &Restore{Events: evs[:cut], Previous: "killed"}})
	if res.ExitCode != 0 || !res.CostUnknown {
		t.Fatalf("resumed: exit %d, cost unknown %v, want true: a2's model has no price", res.ExitCode, res.CostUnknown)
	}
}
