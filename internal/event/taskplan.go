package event

// Task planning events (coordination.enable_agent_task_planning, MassGen's planning tools):
// each agent keeps a task plan of its own and changes it with the planning tools.

// TaskPlanChanged: Agent's task plan as it stands after Tool changed it, or after an
// execution run (--execute-plan) gave it the planned tasks (Tool is PlanSeeded). Tasks is the
// whole plan, so that the last such event of an agent is its plan: views show it and a
// resumed session restores it from there.
type TaskPlanChanged struct {
	Agent string     `json:"agent"`
	Tool  string     `json:"tool"`
	Tasks []PlanTask `json:"tasks"`
}

// PlanSeeded is TaskPlanChanged.Tool when an execution run gave the agent its plan.
const PlanSeeded = "seed"

// PlanTask is one task of a plan, with MassGen's field names (Task.to_dict).
type PlanTask struct {
	ID           string         `json:"id"`
	Description  string         `json:"description"`
	Status       string         `json:"status"`
	Priority     string         `json:"priority,omitempty"`
	Dependencies []string       `json:"dependencies,omitempty"`
	Chunk        string         `json:"chunk,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

func (TaskPlanChanged) Type() string { return "task_plan_changed" }
