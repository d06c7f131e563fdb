package view

import (
	"fmt"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

// taskPlan prints a task plan's change as one line; it reports whether e was one.
func (p *Plain) taskPlan(e event.Payload) bool {
	v, ok := e.(event.TaskPlanChanged)
	if !ok {
		return false
	}
	a := p.st.Agent(v.Agent)
	if a == nil {
		return true
	}
	p.flush(v.Agent)
	how := v.Tool
	if how == event.PlanSeeded {
		how = "the plan to execute"
	}
	p.line("%s: task plan (%s): %s", p.who(v.Agent), how, PlanText(a.Progress()))
	return true
}

// PlanText is a plan's progress in a few words: "2/5 done; now: Write the tests".
func PlanText(pr readmodel.PlanProgress) string {
	if pr.Total == 0 {
		return "empty"
	}
	s := fmt.Sprintf("%d/%d done", pr.Done, pr.Total)
	if pr.Current != "" {
		s += "; now: " + oneLine(pr.Current, 100)
	}
	return s
}

// planSummary prints each agent's task plan at the end of the session.
func (p *Plain) planSummary() {
	for _, a := range p.st.Agents {
		if len(a.Plan) > 0 {
			p.line("task plan of %s: %s", p.who(a.ID), PlanText(a.Progress()))
		}
	}
}
