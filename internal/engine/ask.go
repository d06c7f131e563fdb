package engine

import (
	"context"
	"errors"
	"strings"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// callee is the model a call before coordination goes to: agent i's own, or another model
// whose spending is counted under agent i (orchestrator.dspy's writer).
type callee struct {
	agent          int
	p              provider.Provider
	backend, model string
	params         map[string]any
	unpriced       bool
}

// agentCallee is agent i's own model.
func (s *session) agentCallee(i int) callee {
	a := s.agents[i]
	return callee{agent: i, p: a.Provider, backend: a.Backend, model: a.Model, params: a.Params, unpriced: a.Unpriced}
}

// ask makes one tool-less model call of agent i before coordination (planning mode's check,
// persona_generator) and returns its text, cut to max_response_chars: what such a call is for
// is in its first lines or in the part that fits. An empty reply is an error.
func (s *session) ask(ctx context.Context, i int, stage provider.Stage, system, user string) (string, error) {
	return s.askOn(ctx, s.agentCallee(i), stage, system, user, s.o.Orchestrator.MaxResponseChars)
}

// askOn is ask on callee c, its reply cut to limit characters.
func (s *session) askOn(ctx context.Context, c callee, stage provider.Stage, system, user string, limit int) (string, error) {
	msgs := []provider.Message{{Role: provider.RoleUser, Content: user}}
	s.publish(event.ModelCalled{Agent: s.agents[c.agent].ID, Stage: stage, Attempt: 1, Fresh: true, System: system, Messages: msgs})
	text, u, err := s.replyOn(ctx, c, provider.Request{Model: c.model, System: system, Messages: msgs, Stage: stage, Params: c.params}, limit)
	s.accountOn(c, u)
	return text, err
}

// reply makes one tool-free call of agent i and returns its text and usage, cut to
// max_response_chars. It publishes nothing; the caller accounts the usage.
func (s *session) reply(ctx context.Context, i int, req provider.Request) (string, provider.Usage, error) {
	return s.replyOn(ctx, s.agentCallee(i), req, s.o.Orchestrator.MaxResponseChars)
}

// replyOn makes one tool-free call on c: bounded by the per-call timeout, its text by limit
// characters (at most max_response_chars). A call cut off, or timed out while the session
// went on, is billed by estimate.
func (s *session) replyOn(ctx context.Context, c callee, req provider.Request, limit int) (string, provider.Usage, error) {
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeouts.Agent)
	defer cancel()
	var text strings.Builder
	var u provider.Usage
	var err error
	limit = min(limit, s.o.Orchestrator.MaxResponseChars)
	budget := limit
	req.MaxResponseBytes = 8 * min(limit, s.responseBytes()/8)
	cut, received := false, 0
read:
	for chunk, cerr := range c.p.Stream(cctx, req) {
		if errors.Is(cerr, provider.ErrResponseTooLarge) {
			cut, received = true, max(received, req.MaxResponseBytes)
			break
		}
		if cerr != nil {
			err = cerr
			break
		}
		received += chunkBytes(chunk)
		switch c := chunk.(type) {
		case provider.TextDelta:
			t, over := take(c.Text, &budget)
			text.WriteString(t)
			if over {
				cut = true
				break read
			}
		case provider.UsageChunk:
			u = u.Add(c.Usage)
		}
	}
	if cut || (err != nil && ctx.Err() == nil && cctx.Err() != nil) {
		u = usage.Estimate(u, req, received)
	}
	if err == nil && strings.TrimSpace(text.String()) == "" {
		err = errors.New("empty reply")
	}
	return text.String(), u, err
}

// accountOn counts usage u of a call before coordination on c, priced as c's model.
func (s *session) accountOn(c callee, u provider.Usage) {
	if u == (provider.Usage{}) {
		return
	}
	cost := s.o.Price(c.backend, c.model, u)
	if u.CostUSD > 0 {
		cost = u.CostUSD
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.publish(event.UsageReported{Agent: s.agents[c.agent].ID, Usage: u, CostUSD: cost})
	s.cost += cost
	s.usage = s.usage.Add(u)
	s.unpricedUsed = s.unpricedUsed || c.unpriced && !u.Unknown
	s.overBudget = s.overBudget || budgetSpent(s.o.Orchestrator.MaxCostUSD, s.cost)
}
