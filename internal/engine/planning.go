package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
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
// unclear check holds every MCP tool back. It returns the decision it published.
func (s *session) decidePlanning(ctx context.Context) event.PlanningDecided {
	var specs []provider.ToolSpec
	for _, a := range s.agents {
		for _, t := range a.Tools.Specs() {
			if strings.HasPrefix(t.Name, mcpPrefix) && !slices.ContainsFunc(specs, func(x provider.ToolSpec) bool { return x.Name == t.Name }) {
				specs = append(specs, t)
			}
		}
	}
	if len(specs) == 0 {
		ev := event.PlanningDecided{Reason: "no MCP tools: nothing to hold back"}
		s.publish(ev)
		return ev
	}
	reply, err := s.planningCheck(ctx, 0, specs)
	ev := s.planningVerdict(specs, reply, err)
	s.plan = planFrom(ev)
	s.publish(ev)
	return ev
}

// planningVerdict is the decision the judge's reply (or its failure, err) makes over the MCP
// tools specs.
func (s *session) planningVerdict(specs []provider.ToolSpec, reply string, err error) event.PlanningDecided {
	ev := event.PlanningDecided{Agent: s.agents[0].ID}
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
	}
	return ev
}

// planFrom is the decision ev holds.
func planFrom(ev event.PlanningDecided) planning { return planning{on: ev.HoldBack, held: ev.Held} }

// planningCheck makes the check's one model call and returns the reply.
func (s *session) planningCheck(ctx context.Context, i int, specs []provider.ToolSpec) (string, error) {
	return s.ask(ctx, i, provider.StagePlanning, s.agents[i].System, prompt.PlanningCheck(s.o.Question, specs))
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
