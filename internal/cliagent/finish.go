package cliagent

import (
	"context"
	"fmt"
	"time"

	"massgen/internal/provider"
	"massgen/internal/usage"
)

// coordinationOver is the result of the calls a CLI still waits on when coordination ends:
// not an error, so that the model stops instead of trying again.
const coordinationOver = "Coordination has ended and your work is recorded. Stop now: do not call any more tools."

// A CLI told that coordination is over gets finishGrace to end its run, and finishCalls more
// calls of massgen's tools answered; past either it is stopped. A model that keeps calling
// vote after being told to stop would otherwise spend for as long as the engine waits.
const (
	finishGrace = 5 * time.Second
	finishCalls = 2
)

// Finish ends the run in progress, if any, once coordination is over: the calls the CLI waits
// on are answered, and the CLI ends its run and reports what it used (Claude Code, Gemini CLI
// and Codex give usage only when a run ends). A CLI that keeps calling massgen's tools, or
// does not end within finishGrace or ctx, is stopped, with an error saying why; so is a run
// whose session was interrupted (ctx already done), at once. A stopped run's usage is what its
// stream told (Claude Code's per-message usage), or else an estimate for the calls it was seen
// to make, marked estimated. The session is kept, so a later Stream (the final presentation)
// resumes it.
func (a *Agent) Finish(ctx context.Context) (provider.Usage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.cur
	if r == nil || a.closed {
		return provider.Usage{}, nil
	}
	if ctx.Err() != nil {
		// The session was interrupted: answering the CLI's calls would only let it spend more.
		return a.abandon(r, 0, 0), fmt.Errorf("the %s CLI was stopped: the session was interrupted", a.o.Type)
	}
	for _, id := range a.order {
		a.open[id].reply <- toolReply{content: coordinationOver}
	}
	a.open, a.order = map[string]*toolCall{}, nil
	start := time.Now()
	grace := time.NewTimer(finishGrace)
	defer grace.Stop()
	var u provider.Usage
	calls, args := 0, 0 // massgen tool calls made after coordination ended, and their bytes
	stop := func(why string) (provider.Usage, error) {
		return u.Add(a.abandon(r, calls, args)), fmt.Errorf("the %s CLI was stopped after %.1f s: %s", a.o.Type, time.Since(start).Seconds(), why)
	}
	for {
		select {
		case <-ctx.Done():
			return stop("the session would not wait longer")
		case <-grace.C:
			return stop(fmt.Sprintf("it did not end its run within %s of coordination's end", finishGrace))
		case c := <-a.tools.calls:
			c.reply <- toolReply{content: coordinationOver}
			calls, args = calls+1, args+len(c.args)
			if calls > finishCalls {
				return stop(fmt.Sprintf("it kept calling %s after coordination ended (%d calls)", c.name, calls))
			}
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

// abandon stops r before it reported its usage and returns what it is known or estimated to
// have used: the usage its stream told, else one request the size of the last one for each of
// the calls seen (and the one after them), marked estimated; unknown when there is nothing to
// estimate from.
func (a *Agent) abandon(r *run, calls, args int) provider.Usage {
	a.stopRun(r)
	u := r.unreported()
	switch {
	case u != (provider.Usage{}):
	case a.last == nil:
		return provider.Usage{Unknown: true}
	default:
		one := usage.Estimate(provider.Usage{}, *a.last, 0)
		n := int64(calls + 1)
		u = provider.Usage{InputTokens: n * one.InputTokens, OutputTokens: usage.Tokens(args)}
	}
	u.Estimated = true
	return u
}
