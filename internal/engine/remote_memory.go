package engine

import (
	"context"

	"massgen/internal/provider"
)

// Persistent memory under a remote driver (Options.RemoteMemory). The store is where the
// replicas run, not where the coordinator is: recall is taken on a replica with the steps
// before coordination (RunPrepare), and what it found travels in Prepared.Memories into every
// agent's system message; remembering runs on a replica too (RunRemember), from the answers
// the ops hold (LatestAnswers), once the final answer is out.

// RememberFunc has the agents remember a session that ended with r, agent winner's final
// answer, elsewhere (RunRemember), adding what that spent to the session's cost (Account).
type RememberFunc func(ctx context.Context, winner int, r Result)

// RememberOn has Present remember the session with f, for a session whose memory store is
// elsewhere.
func (x *Coordinator) RememberOn(f RememberFunc) {
	x.s.o.Remember = func(ctx context.Context, r Result, _ func(int, provider.Usage)) {
		if i := x.s.index(r.Winner); i >= 0 {
			f(ctx, i, r)
		}
	}
}

// RunRemember runs o.Remember for the session ops rebuild, which ended with r, publishing on
// o.Bus what Run publishes for it, and returns what it spent.
func RunRemember(ctx context.Context, o Options, ops []Op, r Result) (provider.Usage, float64) {
	s := replica(o, ops)
	s.presenting.Store(true) // remembering comes after the presentation, as in Run
	startCost, startUsage := s.cost, s.usage
	s.remember(ctx, r)
	s.awaitStragglers()
	return subUsage(s.usage, startUsage), s.cost - startCost
}

// LatestAnswers is each agent's latest answer (by agent id) in the session ops rebuild: what
// its memory extracts facts from.
func LatestAnswers(o Options, ops []Op) map[string]string {
	s := replica(o, ops)
	out := map[string]string{}
	for i, a := range s.agents {
		if ans, ok := s.m.Current(i); ok {
			out[a.ID] = ans.Content
		}
	}
	return out
}
