package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// errCallTimeout marks a model call cut off by timeout_settings.agent_timeout_seconds.
var errCallTimeout = errors.New("model call timed out")

type callResult struct {
	text  string
	calls []provider.ToolCall
	usage provider.Usage
}

// call makes one model call for agent i, publishing its deltas, tool calls and usage as they
// arrive. The call is bounded by the per-call timeout.
func (s *session) call(ctx context.Context, i int, req provider.Request, presentation bool) (callResult, error) {
	a := s.agents[i]
	limit := s.o.Timeouts.Agent
	if presentation {
		limit = s.o.Timeouts.Presentation
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var res callResult
	var text strings.Builder
	var streamErr error
	for chunk, err := range a.Provider.Stream(cctx, req) {
		if err != nil {
			streamErr = err
			break
		}
		switch c := chunk.(type) {
		case provider.TextDelta:
			text.WriteString(c.Text)
			s.publish(event.TextDelta{Agent: a.ID, Text: c.Text, Presentation: presentation})
		case provider.ReasoningDelta:
			s.publish(event.ReasoningDelta{Agent: a.ID, Text: c.Text, Presentation: presentation})
		case provider.ToolCallChunk:
			tc := c.Call
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%s_%d", a.ID, len(res.calls)+1)
			}
			res.calls = append(res.calls, tc)
			s.publish(event.ToolCalled{Agent: a.ID, Call: tc})
		case provider.HostedToolChunk:
			// The provider ran it and the model has the result: shown, not run.
			tc := c.Call
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("hosted_%d", s.hostedSeq.Add(1))
			}
			s.publish(event.ToolCalled{Agent: a.ID, Call: tc})
			s.publish(event.ToolResult{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, Content: c.Result, IsError: c.Failed})
		case provider.UsageChunk:
			res.usage = res.usage.Add(c.Usage)
		}
	}
	res.text = text.String()
	s.account(i, res.usage)
	if streamErr != nil {
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			return res, fmt.Errorf("%w after %s", errCallTimeout, limit)
		}
		return res, streamErr
	}
	return res, nil
}

// account publishes the usage of one call and stops coordination when the cost budget is spent.
func (s *session) account(i int, u provider.Usage) {
	if u == (provider.Usage{}) {
		return
	}
	a := s.agents[i]
	cost := s.o.Price(a.Backend, a.Model, u)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.publish(event.UsageReported{Agent: a.ID, Usage: u, CostUSD: cost})
	s.cost += cost
	s.usage = s.usage.Add(u)
	if max := s.o.Orchestrator.MaxCostUSD; max > 0 && s.cost >= max {
		s.endLocked(event.EndBudget)
	}
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
