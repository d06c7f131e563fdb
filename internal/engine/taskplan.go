package engine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/taskplan"
)

// Agent task planning (coordination.enable_agent_task_planning): every agent keeps a task
// plan of its own and changes it with MassGen's planning tools, which the engine runs itself
// (MassGen starts a planning MCP server per agent; here they are built in). Each change is a
// TaskPlanChanged event holding the whole plan: the views show it and a resumed session takes
// each agent's plan from its last one. A plan lives for the session and carries over between
// the agent's turns.

// taskPlans is a session's planning state; nil when task planning is off.
type taskPlans struct {
	max   int             // max_tasks_per_plan
	plans []taskplan.Plan // by agent, guarded by the session's mu
}

func newTaskPlans(o Options) *taskPlans {
	tp := o.Orchestrator.TaskPlanning
	if !tp.Enabled {
		return nil
	}
	limit := cmp.Or(tp.MaxTasks, taskplan.DefaultMaxTasks)
	if len(o.PlanSeed) > 0 {
		// An execution run's plan may be longer than the bound: the agents may still add tasks.
		limit = min(max(limit, len(o.PlanSeed)+taskplan.DefaultMaxTasks), taskplan.MaxTasksCeiling)
	}
	return &taskPlans{max: limit, plans: make([]taskplan.Plan, len(o.Agents))}
}

// planTools are the planning tools an agent is offered.
func (s *session) planTools() []provider.ToolSpec {
	if s.tp == nil {
		return nil
	}
	return taskplan.Specs(s.tp.max)
}

// isPlanTool reports whether the engine runs the call as a planning tool.
func (s *session) isPlanTool(name string) bool { return s.tp != nil && taskplan.IsTool(name) }

// runPlanTool runs one planning call of agent i and answers it in c.
func (s *session) runPlanTool(i int, c *conversation, tc provider.ToolCall) {
	a := s.agents[i]
	start := s.o.Now()
	s.mu.Lock()
	res := s.tp.plans[i].Call(tc.Name, tc.Arguments, s.tp.max)
	var tasks []taskplan.Task
	if res.Changed {
		tasks = s.tp.plans[i].Clone()
	}
	s.mu.Unlock()
	if res.Changed {
		s.planChanged(i, tc.Name, tasks)
	}
	ev := event.ToolResult{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, IsError: res.IsError,
		DurationMS: float64(s.o.Now().Sub(start).Microseconds()) / 1000}
	ev.Content, ev.Truncated = cut(res.Content, eventContentLimit)
	s.publish(ev)
	c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: res.Content, IsError: res.IsError})
}

// planChanged publishes agent i's plan as tool left it and hands it to the agent's SavePlan
// (task_planning_filesystem_mode). A plan that cannot be saved is reported, not fatal: the
// plan itself is in the log.
func (s *session) planChanged(i int, tool string, tasks []taskplan.Task) {
	s.publish(event.TaskPlanChanged{Agent: s.agents[i].ID, Tool: tool, Tasks: eventTasks(tasks)})
	s.savePlan(i, tasks)
}

// savePlan writes agent i's plan to its SavePlan, if it has one.
func (s *session) savePlan(i int, tasks []taskplan.Task) {
	a := s.agents[i]
	if a.SavePlan == nil {
		return
	}
	data, err := json.MarshalIndent(taskplan.Plan{Tasks: tasks}, "", "  ")
	if err == nil {
		err = a.SavePlan(append(data, '\n'))
	}
	if err != nil {
		s.publish(event.ToolServerStatus{Server: event.ServerTools, Status: "warning",
			Detail: fmt.Sprintf("%s's task plan could not be written to tasks/plan.json: %v", a.ID, err)})
	}
}

// seedPlans gives every agent the planned tasks of an execution run (Options.PlanSeed) that
// does not have a plan yet.
func (s *session) seedPlans(have []bool) {
	if s.tp == nil || len(s.o.PlanSeed) == 0 {
		return
	}
	for i := range s.agents {
		if i < len(have) && have[i] {
			continue
		}
		s.mu.Lock()
		s.tp.plans[i] = taskplan.Plan{Tasks: s.o.PlanSeed}
		tasks := s.tp.plans[i].Clone()
		s.mu.Unlock()
		s.planChanged(i, event.PlanSeeded, tasks)
	}
}

// restoreTaskPlans gives each agent its plan as the log left it, and reports which agents
// had one. An agent whose last call is made again (redo) gets the plan as it stood when that
// call was made: the planning calls of its response are made again too, on the plan they were
// first made on, not applied twice.
func (s *session) restoreTaskPlans(evs []event.Event, redo []string) []bool {
	have := make([]bool, len(s.agents))
	if s.tp == nil {
		return have
	}
	index := make(map[string]int, len(s.agents))
	for i, a := range s.agents {
		index[a.ID] = i
	}
	latest := make([][]event.PlanTask, len(s.agents))
	atCall := make([][]event.PlanTask, len(s.agents))
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.TaskPlanChanged:
			if i, ok := index[p.Agent]; ok {
				latest[i] = p.Tasks
			}
		case event.ModelCalled:
			if i, ok := index[p.Agent]; ok && (p.Stage == provider.StageInitial || p.Stage == provider.StageEnforcement) {
				atCall[i] = latest[i]
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, a := range s.agents {
		tasks := latest[i]
		if slices.Contains(redo, a.ID) {
			tasks = atCall[i]
		}
		if tasks != nil {
			s.tp.plans[i] = taskplan.Plan{Tasks: planTasks(tasks)}
			have[i] = true
		}
	}
	return have
}

func eventTasks(ts []taskplan.Task) []event.PlanTask {
	out := make([]event.PlanTask, len(ts))
	for k, t := range ts {
		out[k] = event.PlanTask{ID: t.ID, Description: t.Description, Status: t.Status, Priority: t.Priority,
			Dependencies: t.Dependencies, Chunk: t.Chunk, Metadata: t.Metadata}
	}
	return out
}

func planTasks(ts []event.PlanTask) []taskplan.Task {
	out := make([]taskplan.Task, len(ts))
	for k, t := range ts {
		deps := t.Dependencies
		if deps == nil {
			deps = []string{}
		}
		out[k] = taskplan.Task{ID: t.ID, Description: t.Description, Status: t.Status, Priority: cmp.Or(t.Priority, "medium"),
			Dependencies: deps, Chunk: t.Chunk, Metadata: t.Metadata}
	}
	return out
}
