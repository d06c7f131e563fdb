package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// errCallTimeout marks a model call cut off by timeout_settings.agent_timeout_seconds.
var errCallTimeout = errors.New("model call timed out")

// maxCallField caps the name and id of a tool call: both are the model's (or a compatible
// server's) to choose, and both are copied into every later request and event.
const maxCallField = 256

type callResult struct {
	text  string
	calls []provider.ToolCall
	usage provider.Usage
	// stop is how the model said it stopped (StopOther when the stream was cut before Done);
	// stopRaw is the backend's own word for it.
	stop    provider.Stop
	stopRaw string
	// overflow is set when the response went over max_response_chars: the engine stopped
	// reading there, text holds what fit and the call that crossed the line has no arguments.
	overflow bool
	// dropped, when set, stands for the tool calls past max_tool_calls_per_response: the first
	// of them, without its arguments. The engine stopped reading when it arrived.
	dropped *provider.ToolCall
}

// incomplete reports whether the response is incomplete, so that nothing in it may be acted on: the
// token limit stopped the model, or it went over max_response_chars.
func (r callResult) incomplete() bool { return r.overflow || r.stop == provider.StopLength }

// message is the assistant message the response adds to the conversation: every call in it,
// dropped one included, gets a tool result.
func (r callResult) message() provider.Message {
	calls := r.calls
	if r.dropped != nil {
		calls = append(calls[:len(calls):len(calls)], *r.dropped)
	}
	return provider.Message{Role: provider.RoleAssistant, Content: r.text, ToolCalls: calls}
}

// call makes one model call for agent i, publishing its deltas, tool calls and usage as they
// arrive. The call is bounded by the per-call timeout, and what the model may stream by the
// output caps: past them the engine stops reading (which cancels the call) and keeps what fit,
// so a runaway or hostile response costs at most the caps in memory and in the log.
//
// roundEnd, when set, is when the turn's round is cut off (round timeouts): the call ends then
// at the latest, with errRoundCut.
func (s *session) call(ctx context.Context, i int, req provider.Request, presentation bool, roundEnd time.Time) (callResult, error) {
	a := s.agents[i]
	limit, byRound := s.callLimit(roundEnd)
	if presentation {
		limit, byRound = s.o.Timeouts.Presentation, false
	}
	if byRound && limit <= 0 {
		return callResult{}, errRoundCut
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req.MaxResponseBytes = s.responseBytes()
	var res callResult
	var text strings.Builder
	var streamErr error
	// Text and tool-call arguments go into the conversation and share one budget; reasoning
	// is only shown, and has a budget of its own.
	output, reasoning := s.o.Orchestrator.MaxResponseChars, s.o.Orchestrator.MaxResponseChars
	received := 0            // bytes of text, reasoning and arguments, for estimating a cut call's usage
	live := ctx.Err() == nil // a call made on a dead context sends nothing to bill
	ended := false           // the provider said the response was complete
read:
	for chunk, err := range a.Provider.Stream(cctx, req) {
		if err != nil {
			if errors.Is(err, provider.ErrResponseTooLarge) {
				// The backend's bound on what it assembles (one endless tool call): the same
				// cut as the engine's own, and the backend read at least that much.
				res.overflow = true
				received = max(received, req.MaxResponseBytes)
				break
			}
			streamErr = err
			break
		}
		received += chunkBytes(chunk)
		switch c := chunk.(type) {
		case provider.TextDelta:
			t, over := take(c.Text, &output)
			text.WriteString(t)
			if t != "" {
				s.publish(event.TextDelta{Agent: a.ID, Text: t, Presentation: presentation})
			}
			if over {
				res.overflow = true
				break read
			}
		case provider.ReasoningDelta:
			t, over := take(c.Text, &reasoning)
			if t != "" {
				s.publish(event.ReasoningDelta{Agent: a.ID, Text: t, Presentation: presentation})
			}
			if over {
				res.overflow = true
				break read
			}
		case provider.ToolCallProgress:
			// Shown only: the arguments count against the caps once the call is complete.
			id, _ := cut(c.ID, maxCallField)
			name, _ := cut(c.Name, maxCallField)
			s.publish(event.ToolCallStreaming{Agent: a.ID, CallID: id, Tool: name, Bytes: c.Bytes})
		case provider.ToolCallChunk:
			tc := c.Call
			tc.ID, _ = cut(tc.ID, maxCallField)
			tc.Name, _ = cut(tc.Name, maxCallField)
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%s_%d", a.ID, len(res.calls)+1)
			}
			if len(res.calls) >= s.o.Orchestrator.MaxToolCallsPerResponse {
				tc.Arguments = "{}"
				res.dropped = &tc
				s.publish(event.ToolCalled{Agent: a.ID, Call: tc})
				break read
			}
			if _, over := take(tc.Arguments, &output); over {
				tc.Arguments = "{}"
				res.overflow = true
				res.calls = append(res.calls, tc)
				s.publish(event.ToolCalled{Agent: a.ID, Call: tc})
				break read
			}
			res.calls = append(res.calls, tc)
			s.publish(event.ToolCalled{Agent: a.ID, Call: tc})
		case provider.HostedToolChunk:
			// The provider ran it and the model has the result: shown, not run.
			tc := c.Call
			tc.ID, _ = cut(tc.ID, maxCallField)
			tc.Name, _ = cut(tc.Name, maxCallField)
			tc.Arguments, _ = cut(tc.Arguments, eventContentLimit)
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("hosted_%d", s.hostedSeq.Add(1))
			}
			result, _ := cut(c.Result, eventContentLimit)
			s.publish(event.ToolCalled{Agent: a.ID, Call: tc})
			s.publish(event.ToolResult{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, Content: result, IsError: c.Failed})
		case provider.UsageChunk:
			res.usage = res.usage.Add(c.Usage)
		case provider.SessionChunk:
			id, _ := cut(c.ID, maxCallField)
			s.publish(event.AgentSession{Agent: a.ID, SessionID: id})
		case provider.Done:
			res.stop, res.stopRaw = c.Stop(), c.StopReason
			ended = true
		}
	}
	res.text = text.String()
	timedOut := streamErr != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded)
	// Cut off: agent_timeout_seconds, or the session's end (consensus reached while the call
	// ran, orchestrator_timeout_seconds, max_cost_usd spent, an interrupt) cancelled it.
	cut := live && cctx.Err() != nil && (streamErr != nil || !ended)
	if res.overflow || res.dropped != nil || cut {
		// The call ended before the provider could report usage (the engine stopped reading,
		// or a timeout or the session's end cut it): the provider bills it all the same, and
		// it must count towards the cost and max_cost_usd.
		res.usage = usage.Estimate(res.usage, req, received)
	}
	s.account(i, res.usage, presentation)
	if timedOut && byRound {
		return res, errRoundCut
	}
	if timedOut {
		return res, fmt.Errorf("%w after %s", errCallTimeout, limit)
	}
	if streamErr != nil {
		return res, streamErr
	}
	return res, nil
}

// responseBytes is the bound of a response's backend (provider.Request.MaxResponseBytes): text
// and arguments, and reasoning, may each reach max_response_chars characters of up to 4 bytes
// before the engine's caps stop them. Within it the engine's caps, applied to complete chunks,
// stop first; the backend's is for what it assembles before the engine sees any of it.
func (s *session) responseBytes() int {
	return 8 * min(s.o.Orchestrator.MaxResponseChars, math.MaxInt/16)
}

// chunkBytes is the size of what a chunk adds to the response.
func chunkBytes(c provider.Chunk) int {
	switch c := c.(type) {
	case provider.TextDelta:
		return len(c.Text)
	case provider.ReasoningDelta:
		return len(c.Text)
	case provider.ToolCallChunk:
		return len(c.Call.ID) + len(c.Call.Name) + len(c.Call.Arguments)
	}
	return 0
}

// take returns the part of s that fits in *budget characters, takes it from the budget, and
// reports whether s did not fit.
func take(s string, budget *int) (string, bool) {
	if len(s) <= *budget { // at most one character per byte: it fits
		*budget -= utf8.RuneCountInString(s)
		return s, false
	}
	n := 0
	for k := range s {
		if n == *budget {
			*budget = 0
			return s[:k], true
		}
		n++
	}
	*budget -= n
	return s, false
}

// account publishes the usage of one call and notes when it spends the cost budget. It does
// not end coordination itself: the caller acts on the response it paid for first (a new answer
// is accepted), and then coordination stops.
func (s *session) account(i int, u provider.Usage, presentation bool) {
	if u == (provider.Usage{}) {
		return
	}
	a := s.agents[i]
	cost := s.o.Price(a.Backend, a.Model, u)
	if u.CostUSD > 0 {
		cost = u.CostUSD // the provider's own figure (a CLI agent's total_cost_usd)
	}
	ev := event.UsageReported{Agent: a.ID, Usage: u, CostUSD: cost, Presentation: presentation}
	if !presentation && !s.presenting.Load() {
		ev.Round = s.turnOf[i]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.publish(ev)
	s.addCost(i, u, cost)
}

// accountSpentLocked adds what agent i's tools paid outside its own model calls (a
// background subagent's session) to its cost; s.mu must be held.
func (s *session) accountSpentLocked(i int, spent provider.Usage) {
	if spent.CostUSD <= 0 && !spent.Unknown {
		return
	}
	u := provider.Usage{CostUSD: spent.CostUSD, Unknown: spent.Unknown, Estimated: spent.Estimated}
	s.publish(event.UsageReported{Agent: s.agents[i].ID, Usage: u, CostUSD: u.CostUSD, Round: s.turnOf[i]})
	if s.rb != nil && s.rb.account != nil {
		s.rb.account(i, u, u.CostUSD) // a coordinator's: an op, for the replicas' totals
		return
	}
	s.addCost(i, u, u.CostUSD)
}

// sleep waits d or until ctx is done; it reports whether the full wait happened.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
