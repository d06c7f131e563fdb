package engine

import (
	"fmt"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider/scripted"
)

// scriptedTeam is the demo's shape: one agent improves once it has read the others, everyone
// votes for the longest answer; new Providers each call, as a new process would have.
func scriptedTeam() []Agent {
	scripts := []config.Script{
		{Answers: []string{"Paris.", "Paris is the capital of France, on the Seine, and its largest city."}, ImproveAfter: 3, Vote: "longest",
			Final: "FINAL: Paris, on the Seine."},
		{Answers: []string{"The capital is Paris."}, Vote: "longest", Latency: time.Millisecond},
		{Answers: []string{"It is Paris."}, Vote: "longest", Latency: 2 * time.Millisecond},
	}
	out := make([]Agent, len(scripts))
	for i, s := range scripts {
		out[i] = Agent{ID: fmt.Sprintf("a%d", i+1), Backend: "scripted", Provider: scripted.New(s, "scripted")}
	}
	return out
}

// Cutting the log after any of its events and resuming from there ends with the winner and
// the final answer of the whole run, the log numbered on without a gap, and only the agents
// whose call was in flight calling again.
func TestResume_FromEveryEvent(t *testing.T) {
	whole, evs := run(t, t.Context(), Options{Agents: scriptedTeam()})
	if whole.ExitCode != 0 || whole.FinalAnswer == "" {
		t.Fatalf("whole run: %+v", whole)
	}
	for cut := 1; cut < len(evs); cut++ {
		rec := &recorder{}
		bus := event.NewBus(nil)
		bus.ResumeAt(int64(cut))
		bus.Subscribe(rec)
		res := Run(t.Context(), Options{Agents: scriptedTeam(), Bus: bus, Question: "What is the capital of France?",
			RetryDelay: func(int) time.Duration { return 0 }, Restore: &Restore{Events: evs[:cut], Previous: "killed"}})
		if res.ExitCode != 0 || res.Winner != whole.Winner || res.FinalAnswer != whole.FinalAnswer {
			t.Fatalf("cut after event %d (%s): %+v, want winner %s and %q", cut, evs[cut-1].Payload.Type(), res, whole.Winner, whole.FinalAnswer)
		}
		got := rec.all()
		r, ok := got[0].Payload.(event.SessionResumed)
		if !ok || got[0].Seq != int64(cut)+1 || r.AfterSeq != int64(cut) {
			t.Fatalf("cut after event %d: the resume opens with %+v (seq %d)", cut, got[0].Payload, got[0].Seq)
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
				t.Fatalf("cut after event %d: %s's answer %q was accepted again", cut, a.Agent, a.Content)
			}
		}
	}
}
