// Package taskplan is an agent's task plan (MassGen's agent task planning): tasks with
// dependencies and a status, the nine planning tools that change and read it, and the project
// plan file a planning run (--plan) writes and an execution run (--execute-plan) reads. It is
// pure: no I/O, no clock, no goroutines. The engine keeps one Plan per agent and runs the tools.
package taskplan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Task statuses (MassGen's Task.status): pending -> in_progress -> completed -> verified; a task
// may also be marked blocked by hand.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
	Verified   = "verified"
	Blocked    = "blocked"
)

// Statuses are the statuses update_task_status accepts, in MassGen's order.
var Statuses = []string{Pending, InProgress, Completed, Verified, Blocked}

// Priorities are a task's priorities; medium is the default.
var Priorities = []string{"low", "medium", "high"}

// Bounds on what a model controls in a plan. A call over one is refused with what to send
// instead: a plan is the agent's own notes, so nothing is cut behind its back.
const (
	// DefaultMaxTasks is max_tasks_per_plan when unset (MassGen's default).
	DefaultMaxTasks = 10
	// MaxTasksCeiling bounds max_tasks_per_plan and a project plan: every change to a plan
	// is an event carrying the whole plan, so a plan stays small enough to log in full.
	MaxTasksCeiling = 200
	MaxIDBytes      = 64
	MaxDescBytes    = 2000
	MaxNotesBytes   = 2000
	MaxMetaBytes    = 4096
)

// Task is one task of a plan, serialised with MassGen's field names (Task.to_dict).
type Task struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Status      string `json:"status"`
	Priority    string `json:"priority"`
	// Dependencies are the ids of the tasks that must be completed (or verified) before this
	// one is ready.
	Dependencies []string `json:"dependencies"`
	// Chunk is a project plan's ordered group label (C01_foundation), "" in an agent's own plan.
	Chunk string `json:"chunk,omitempty"`
	// Metadata holds what MassGen keeps there: completion_notes, verification_notes, and a
	// project plan's verification, verification_method and verification_group.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// UnmarshalJSON reads a task written either way MassGen writes one: "dependencies" (a plan
// as the tools return it) or "depends_on" (a project plan).
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	var v struct {
		plain
		DependsOn []string `json:"depends_on"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = Task(v.plain)
	if t.Dependencies == nil {
		t.Dependencies = v.DependsOn
	}
	return nil
}

// Plan is one agent's task plan. The zero value is an empty plan. It is not safe for
// concurrent use: the engine guards it.
type Plan struct {
	Tasks []Task `json:"tasks"`
}

// Clone returns a deep copy of the plan's tasks.
func (p *Plan) Clone() []Task {
	out := make([]Task, len(p.Tasks))
	for i, t := range p.Tasks {
		t.Dependencies = slices.Clone(t.Dependencies)
		if t.Metadata != nil {
			m := make(map[string]any, len(t.Metadata))
			for k, v := range t.Metadata {
				m[k] = v
			}
			t.Metadata = m
		}
		out[i] = t
	}
	return out
}

func (p *Plan) index(id string) int {
	return slices.IndexFunc(p.Tasks, func(t Task) bool { return t.ID == id })
}

// Get returns the task id, or false.
func (p *Plan) Get(id string) (Task, bool) {
	if i := p.index(id); i >= 0 {
		return p.Tasks[i], true
	}
	return Task{}, false
}

// done reports whether a dependency on t is satisfied.
func done(t Task) bool { return t.Status == Completed || t.Status == Verified }

// blocking returns the dependencies of t not yet done, in its order.
func (p *Plan) blocking(t Task) []string {
	var out []string
	for _, d := range t.Dependencies {
		if i := p.index(d); i >= 0 && !done(p.Tasks[i]) {
			out = append(out, d)
		}
	}
	return out
}

// Ready returns the pending tasks whose dependencies are all done, in plan order.
func (p *Plan) Ready() []Task {
	var out []Task
	for _, t := range p.Tasks {
		if t.Status == Pending && len(p.blocking(t)) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// BlockedTasks returns the pending tasks waiting on a dependency, in plan order.
func (p *Plan) BlockedTasks() []Task {
	var out []Task
	for _, t := range p.Tasks {
		if t.Status == Pending && len(p.blocking(t)) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// Count returns how many tasks have status.
func (p *Plan) Count(status string) int {
	n := 0
	for _, t := range p.Tasks {
		if t.Status == status {
			n++
		}
	}
	return n
}

// Validate checks a whole list of tasks against the bounds and the dependency rules: unique
// ids, known dependencies, no task depending on itself, no cycle. The error names the task
// and what to change.
func Validate(tasks []Task, maxTasks int) error {
	if len(tasks) > maxTasks {
		return fmt.Errorf("%d tasks is over the limit of %d per plan; merge related tasks into one", len(tasks), maxTasks)
	}
	seen := make(map[string]bool, len(tasks))
	for i, t := range tasks {
		if err := checkTask(t); err != nil {
			return fmt.Errorf("task %d: %w", i, err)
		}
		if seen[t.ID] {
			return fmt.Errorf("task id %q is used twice; give every task its own id", t.ID)
		}
		seen[t.ID] = true
	}
	for _, t := range tasks {
		for _, d := range t.Dependencies {
			switch {
			case d == t.ID:
				return fmt.Errorf("task %q depends on itself; remove %q from its depends_on", t.ID, d)
			case !seen[d]:
				return fmt.Errorf("task %q depends on %q, which is not a task of the plan; use one of its ids (%s)", t.ID, d, idList(tasks))
			}
		}
	}
	if cycle := findCycle(tasks); cycle != nil {
		return fmt.Errorf("circular dependency: %s; a task cannot wait, directly or not, on itself", strings.Join(cycle, " -> "))
	}
	return nil
}

// checkTask checks one task's fields against the bounds.
func checkTask(t Task) error {
	switch {
	case t.ID == "":
		return fmt.Errorf("has no id")
	case len(t.ID) > MaxIDBytes:
		return fmt.Errorf("id %.20q... is %d bytes; use at most %d", t.ID, len(t.ID), MaxIDBytes)
	case strings.TrimSpace(t.Description) == "":
		return fmt.Errorf("%q has no description; say what the task is", t.ID)
	case len(t.Description) > MaxDescBytes:
		return fmt.Errorf("the description of %q is %d bytes; keep it under %d (put details in your answer or workspace)", t.ID, len(t.Description), MaxDescBytes)
	case !slices.Contains(Statuses, t.Status):
		return fmt.Errorf("%q has status %q; use one of %s", t.ID, t.Status, strings.Join(Statuses, ", "))
	case !slices.Contains(Priorities, t.Priority):
		return fmt.Errorf("%q has priority %q; use one of %s", t.ID, t.Priority, strings.Join(Priorities, ", "))
	case len(t.Chunk) > MaxIDBytes:
		return fmt.Errorf("the chunk of %q is %d bytes; use at most %d", t.ID, len(t.Chunk), MaxIDBytes)
	}
	if len(t.Metadata) > 0 {
		b, err := json.Marshal(t.Metadata)
		if err != nil {
			return fmt.Errorf("the metadata of %q cannot be written as JSON: %v", t.ID, err)
		}
		if len(b) > MaxMetaBytes {
			return fmt.Errorf("the metadata of %q is %d bytes; keep it under %d", t.ID, len(b), MaxMetaBytes)
		}
	}
	return nil
}

// findCycle returns the ids of one dependency cycle, first id repeated at the end, or nil.
func findCycle(tasks []Task) []string {
	deps := make(map[string][]string, len(tasks))
	for _, t := range tasks {
		deps[t.ID] = t.Dependencies
	}
	const (
		unseen = iota
		onPath
		finished
	)
	state := make(map[string]int, len(tasks))
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		switch state[id] {
		case onPath:
			start := slices.Index(path, id)
			return append(slices.Clone(path[start:]), id)
		case finished:
			return nil
		}
		state[id] = onPath
		path = append(path, id)
		for _, d := range deps[id] {
			if c := visit(d); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[id] = finished
		return nil
	}
	for _, t := range tasks {
		if c := visit(t.ID); c != nil {
			return c
		}
	}
	return nil
}

// idList is the ids of tasks for a message, the first few only.
func idList(tasks []Task) string {
	if len(tasks) == 0 {
		return "the plan has no tasks"
	}
	var ids []string
	for i, t := range tasks {
		if i == 12 {
			ids = append(ids, fmt.Sprintf("and %d more", len(tasks)-i))
			break
		}
		ids = append(ids, t.ID)
	}
	return strings.Join(ids, ", ")
}

// freeID returns task_<n> for the smallest n >= from not taken in tasks.
func freeID(tasks []Task, from int) string {
	for n := from; ; n++ {
		id := fmt.Sprintf("task_%d", n)
		if !slices.ContainsFunc(tasks, func(t Task) bool { return t.ID == id }) {
			return id
		}
	}
}
