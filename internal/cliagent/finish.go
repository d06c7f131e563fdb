package cliagent

import (
	"context"

	"massgen/internal/provider"
)

// coordinationOver is the result of the calls a CLI still waits on when coordination ends:
// not an error, so that the model stops instead of trying again.
const coordinationOver = "Coordination has ended and your work is recorded. Stop now: do not call any more tools."

// Finish ends the run in progress, if any, once coordination is over: the calls the CLI waits
// on are answered, the CLI ends its run and reports what it used (Claude Code, Gemini CLI and
// Codex give usage only when a run ends). It returns that usage; past ctx the run is killed
// and its usage is lost. The session is kept, so a later Stream (the final presentation)
// resumes it.
func (a *Agent) Finish(ctx context.Context) (provider.Usage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.cur
	if r == nil || a.closed {
		return provider.Usage{}, nil
	}
	for _, id := range a.order {
		a.open[id].reply <- toolReply{content: coordinationOver}
	}
	a.open, a.order = map[string]*toolCall{}, nil
	var u provider.Usage
	for {
		select {
		case <-ctx.Done():
			a.stopRun(r)
			return u, ctx.Err()
		case c := <-a.tools.calls:
			c.reply <- toolReply{content: coordinationOver}
		case ev, ok := <-r.events:
			if !ok {
				st := r.wait()
				a.cur = nil
				return u, r.outcome(st)
			}
			if ev.session != "" {
				a.sessID = ev.session
			}
			if uc, ok := ev.chunk.(provider.UsageChunk); ok {
				u = u.Add(uc.Usage)
			}
			if ev.err != nil {
				a.stopRun(r)
				return u, ev.err
			}
		}
	}
}
