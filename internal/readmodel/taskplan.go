package readmodel

import "massgen/internal/event"

// PlanProgress sums up an agent's task plan for a one-line view.
type PlanProgress struct {
	Total, Done int // Done counts completed and verified tasks
	// Current is the first task in progress, else the first ready one, "" when none.
	Current string
}

// Progress sums up the agent's task plan; Total is 0 when it has none.
func (a *Agent) Progress() PlanProgress {
	var p PlanProgress
	status := make(map[string]string, len(a.Plan))
	for _, t := range a.Plan {
		status[t.ID] = t.Status
	}
	var ready string
	for _, t := range a.Plan {
		p.Total++
		switch t.Status {
		case "completed", "verified":
			p.Done++
		case "in_progress":
			if p.Current == "" {
				p.Current = t.Description
			}
		case "pending":
			if ready != "" {
				continue
			}
			ok := true
			for _, d := range t.Dependencies {
				if s := status[d]; s != "completed" && s != "verified" {
					ok = false
				}
			}
			if ok {
				ready = t.Description
			}
		}
	}
	if p.Current == "" {
		p.Current = ready
	}
	return p
}

func (s *State) taskPlan(p event.Payload) {
	if v, ok := p.(event.TaskPlanChanged); ok {
		if a := s.byID[v.Agent]; a != nil {
			a.Plan = v.Tasks
		}
	}
}
