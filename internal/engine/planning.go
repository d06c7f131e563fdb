package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// mcpPrefix marks the tools planning mode may hold back: MCP servers act on the outside world,
// while the file and command tools stay inside the agent's workspace.
const mcpPrefix = "mcp__"

// planning is planning mode's decision, made once before coordination and read-only after.
type planning struct {
	on   bool
	held []string // the MCP tools held back, sorted; empty holds every one
}

// decidePlanning asks the first agent, without tools, whether the task needs MCP tools whose
// effects cannot be undone, and holds those back until the final presentation. A failed or
// unclear check holds every MCP tool back.
func (s *session) decidePlanning(ctx context.Context) {
	var specs []provider.ToolSpec
	for _, a := range s.agents {
		for _, t := range a.Tools.Specs() {
			if strings.HasPrefix(t.Name, mcpPrefix) && !slices.ContainsFunc(specs, func(x provider.ToolSpec) bool { return x.Name == t.Name }) {
				specs = append(specs, t)
			}
		}
	}
	if len(specs) == 0 {
		s.publish(event.PlanningDecided{Reason: "no MCP tools: nothing to hold back"})
		return
	}
	judge := s.agents[0]
	reply, err := s.planningCheck(ctx, 0, specs)
	ev := event.PlanningDecided{Agent: judge.ID}
	ev.Reply, _ = cut(strings.TrimSpace(reply), 400)
	var named []string
	switch {
	case err != nil:
		ev.HoldBack, ev.Reason = true, fmt.Sprintf("the check failed (%v): every MCP tool held back", err)
	default:
		ev.HoldBack, named, ev.Reason = prompt.PlanningVerdict(reply)
	}
	if ev.HoldBack {
		for _, t := range specs {
			if slices.ContainsFunc(named, func(n string) bool { return t.Name == n || strings.HasSuffix(t.Name, "__"+n) }) {
				ev.Held = append(ev.Held, t.Name)
			}
		}
		slices.Sort(ev.Held)
		if len(named) > 0 && len(ev.Held) == 0 {
			ev.Reason += "; none of the tools named exists: every MCP tool held back"
		}
		s.plan = planning{on: true, held: ev.Held}
	}
	s.publish(ev)
}

// planningCheck makes the check's one model call and returns the reply.
func (s *session) planningCheck(ctx context.Context, i int, specs []provider.ToolSpec) (string, error) {
	return s.ask(ctx, i, provider.StagePlanning, s.agents[i].System, prompt.PlanningCheck(s.o.Question, specs))
}

// ask makes one tool-less model call of agent i before coordination (planning mode's check,
// persona_generator) and returns its text, cut to max_response_chars: what such a call is for
// is in its first lines or in the part that fits. An empty reply is an error.
func (s *session) ask(ctx context.Context, i int, stage provider.Stage, system, user string) (string, error) {
	a := s.agents[i]
	msgs := []provider.Message{{Role: provider.RoleUser, Content: user}}
	s.publish(event.ModelCalled{Agent: a.ID, Stage: stage, Attempt: 1, Fresh: true, System: system, Messages: msgs})
	text, u, err := s.reply(ctx, i, provider.Request{Model: a.Model, System: system, Messages: msgs, Stage: stage, Params: a.Params})
	s.account(i, u, false)
	return text, err
}

// reply makes one tool-free call of agent i and returns its text and usage: bounded by the
// per-call timeout, its text by max_response_chars (a cut call's usage is estimated). It
// publishes nothing; the caller accounts the usage.
func (s *session) reply(ctx context.Context, i int, req provider.Request) (string, provider.Usage, error) {
	a := s.agents[i]
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeouts.Agent)
	defer cancel()
	var text strings.Builder
	var u provider.Usage
	var err error
	budget := s.o.Orchestrator.MaxResponseChars
	req.MaxResponseBytes = s.responseBytes()
	cut, received := false, 0
read:
	for chunk, cerr := range a.Provider.Stream(cctx, req) {
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

// heldBack reports whether the tool must wait for the final presentation.
func (s *session) heldBack(name string) bool {
	if !s.plan.on || s.presenting.Load() || !strings.HasPrefix(name, mcpPrefix) {
		return false
	}
	return len(s.plan.held) == 0 || slices.Contains(s.plan.held, name)
}

// planningSection is what the coordination system prompt adds while tools are held back.
func (s *session) planningSection() string {
	if !s.plan.on {
		return ""
	}
	return prompt.Planning(s.o.Orchestrator.PlanningInstruction, s.plan.held)
}
