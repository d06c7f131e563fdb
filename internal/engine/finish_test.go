package engine

import (
	"context"
	"sync/atomic"
	"testing"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// finishing is a provider whose last run reports its usage only when it is told
// coordination is over (a coding-agent CLI waiting on its vote).
type finishing struct {
	*fake
	finished atomic.Int32
}

func (f *finishing) Finish(ctx context.Context) (provider.Usage, error) {
	f.finished.Add(1)
	return provider.Usage{InputTokens: 700, OutputTokens: 70}, ctx.Err()
}

// Once coordination ends, a provider.Finisher is told, once, and the usage it reports is
// counted for its agent before the final presentation.
func TestRun_FinisherUsageCounted(t *testing.T) {
	f := &finishing{fake: answerThenVote("Paris.", "agent1")}
	res, evs := run(t, t.Context(), Options{Agents: agents(f, answerThenVote("Paris too.", "agent1"))})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	if n := f.finished.Load(); n != 1 {
		t.Errorf("Finish called %d times, want 1", n)
	}
	var found, ended bool
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.CoordinationEnded:
			ended = true
		case event.UsageReported:
			if p.Agent == "a1" && p.Usage.InputTokens == 700 {
				found = true
				if ended {
					t.Error("the finished usage came after coordination_ended")
				}
			}
		}
	}
	if !found {
		t.Error("the usage Finish reported was not counted")
	}
}
