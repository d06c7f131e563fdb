package taskplan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"massgen/internal/provider"
)

// The planning tools, MassGen's planning MCP server's tool names (mcp_tools/planning), offered
// here as built-in tools of every agent.
const (
	ToolCreate  = "create_task_plan"
	ToolAdd     = "add_task"
	ToolUpdate  = "update_task_status"
	ToolEdit    = "edit_task"
	ToolGet     = "get_task_plan"
	ToolDelete  = "delete_task"
	ToolReady   = "get_ready_tasks"
	ToolBlocked = "get_blocked_tasks"
	ToolClear   = "clear_task_plan"
)

// Tools are the planning tools' names in the order they are offered.
var Tools = []string{ToolCreate, ToolAdd, ToolUpdate, ToolEdit, ToolGet, ToolDelete, ToolReady, ToolBlocked, ToolClear}

// IsTool reports whether name is a planning tool.
func IsTool(name string) bool { return slices.Contains(Tools, name) }

// Specs are the planning tools' specs; maxTasks is max_tasks_per_plan, told in the
// descriptions so that a model knows the bound before it hits it.
func Specs(maxTasks int) []provider.ToolSpec {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	priority := map[string]any{"type": "string", "enum": Priorities, "description": "How critical the task is (default medium)."}
	ids := func(d string) map[string]any {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": d}
	}
	spec := func(name, desc string, props map[string]any, required ...string) provider.ToolSpec {
		if props == nil {
			props = map[string]any{}
		}
		return provider.ToolSpec{Name: name, Description: desc, Parameters: map[string]any{
			"type": "object", "properties": props, "required": append([]string{}, required...)}}
	}
	task := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"id":          str("Your id for the task (optional; task_<index> when left out)."),
			"description": str("What the task is."),
			"depends_on": map[string]any{"type": "array", "items": map[string]any{"type": "string"},
				"description": "Ids of tasks of this list that must be completed first (a 0-based index of an earlier task works too)."},
			"priority": priority,
		},
		"required": []any{"description"},
	}
	return []provider.ToolSpec{
		spec(ToolCreate, fmt.Sprintf("Create your task plan: a list of tasks, each a description or an object with an id, "+
			"depends_on and priority. Dependencies must name tasks of the list and must not form a cycle. At most %d tasks. "+
			"Fails if you already have a plan: change that one with add_task, edit_task and delete_task, or call clear_task_plan first.", maxTasks),
			map[string]any{"tasks": map[string]any{"type": "array", "items": task, "description": "The tasks, in order."}}, "tasks"),
		spec(ToolAdd, "Add a task to your plan, at the end or after another task.",
			map[string]any{"description": str("What the task is."), "after_task_id": str("Insert after this task (default: at the end)."),
				"depends_on": ids("Ids of tasks that must be completed first."), "priority": priority}, "description"),
		spec(ToolUpdate, "Set a task's status: pending, in_progress, completed (the work is done), verified (it was checked and works) "+
			"or blocked. Completing a task lists the tasks it made ready.",
			map[string]any{"task_id": str("The task's id."), "status": map[string]any{"type": "string", "enum": Statuses},
				"completion_notes": str("How it was done (completed) or what was checked (verified); optional.")}, "task_id", "status"),
		spec(ToolEdit, "Change a task's description.", map[string]any{"task_id": str("The task's id."), "description": str("The new description.")}, "task_id"),
		spec(ToolGet, "Your whole task plan with its statuses and a summary.", nil),
		spec(ToolDelete, "Remove a task from your plan; a task other tasks depend on cannot be removed.", map[string]any{"task_id": str("The task's id.")}, "task_id"),
		spec(ToolReady, "The pending tasks whose dependencies are all completed: what you can work on now.", nil),
		spec(ToolBlocked, "The pending tasks still waiting on dependencies, each with the ids it waits on.", nil),
		spec(ToolClear, "Remove every task of your plan, to start a new one with create_task_plan.", nil),
	}
}

// Result is what a planning call returns: Content is MassGen's JSON result; Changed says the
// plan changed (the engine publishes it); IsError marks a refused call, whose Content says
// what to fix.
type Result struct {
	Content string
	Changed bool
	IsError bool
}

// Call runs the planning tool name with the model's JSON arguments on p. maxTasks bounds the
// plan (max_tasks_per_plan). A refused call leaves p as it was.
func (p *Plan) Call(name, args string, maxTasks int) Result {
	if maxTasks <= 0 {
		maxTasks = DefaultMaxTasks
	}
	var params map[string]json.RawMessage
	if s := strings.TrimSpace(args); s != "" && s != "null" {
		if err := json.Unmarshal([]byte(args), &params); err != nil {
			return failed(name, fmt.Sprintf("the arguments are not a JSON object (%v); send one object with the parameters the tool's schema lists", err))
		}
	}
	out, changed, err := p.run(name, params, maxTasks)
	if err != nil {
		return failed(name, err.Error())
	}
	out["success"], out["operation"] = true, name
	return Result{Content: marshal(out), Changed: changed}
}

func failed(op, msg string) Result {
	return Result{Content: marshal(map[string]any{"success": false, "operation": op, "error": msg}), IsError: true}
}

// marshal writes a result without HTML escaping: models read "a -> b", not "a -\u003e b".
func marshal(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf(`{"success": false, "error": %q}`, err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (p *Plan) run(name string, a map[string]json.RawMessage, maxTasks int) (map[string]any, bool, error) {
	switch name {
	case ToolCreate:
		return p.create(a, maxTasks)
	case ToolAdd:
		return p.add(a, maxTasks)
	case ToolUpdate:
		return p.update(a)
	case ToolEdit:
		return p.edit(a)
	case ToolGet:
		return map[string]any{"plan": p.view(), "summary": p.summary()}, false, nil
	case ToolDelete:
		return p.remove(a)
	case ToolReady:
		ready := p.Ready()
		return map[string]any{"ready_tasks": nonNil(ready), "count": len(ready)}, false, nil
	case ToolBlocked:
		var out []map[string]any
		for _, t := range p.BlockedTasks() {
			out = append(out, map[string]any{"id": t.ID, "description": t.Description, "status": t.Status,
				"priority": t.Priority, "dependencies": t.Dependencies, "blocking_task_ids": p.blocking(t)})
		}
		if out == nil {
			out = []map[string]any{}
		}
		return map[string]any{"blocked_tasks": out, "count": len(out)}, false, nil
	case ToolClear:
		had := len(p.Tasks) > 0
		p.Tasks = nil
		return map[string]any{"had_existing_plan": had}, had, nil
	}
	return nil, false, fmt.Errorf("unknown planning tool %q; the planning tools are %s", name, strings.Join(Tools, ", "))
}

func nonNil(ts []Task) []Task {
	if ts == nil {
		return []Task{}
	}
	return ts
}

func (p *Plan) view() Plan { return Plan{Tasks: nonNil(p.Clone())} }

func (p *Plan) summary() map[string]int {
	return map[string]int{"total_tasks": len(p.Tasks), "completed_tasks": p.Count(Completed), "verified_tasks": p.Count(Verified),
		"in_progress_tasks": p.Count(InProgress), "ready_tasks": len(p.Ready()), "blocked_tasks": len(p.BlockedTasks())}
}

// str reads the string argument key; absent or null is "".
func str(a map[string]json.RawMessage, key string) (string, error) {
	raw, ok := a[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s must be a string, got %s", key, clip(string(raw)))
	}
	return s, nil
}

func required(a map[string]json.RawMessage, key string) (string, error) {
	s, err := str(a, key)
	if err == nil && s == "" {
		err = fmt.Errorf("%s is required", key)
	}
	return s, err
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// refs reads depends_on: ids, or 0-based indexes when index is set (create_task_plan). Index
// i refers to ids[i]; self is the position of the task that depends.
func refs(raw json.RawMessage, ids []string, self int) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return []string{}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("depends_on must be a list of task ids, got %s", clip(string(raw)))
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			out = append(out, s)
			continue
		}
		n, err := strconv.Atoi(string(it))
		switch {
		case err != nil || ids == nil:
			return nil, fmt.Errorf("depends_on holds %s; name tasks by their id (a string)", clip(string(it)))
		case n < 0 || n >= len(ids):
			return nil, fmt.Errorf("depends_on index %d is not a task of the list (0 to %d)", n, len(ids)-1)
		case n >= self:
			return nil, fmt.Errorf("depends_on index %d must name an earlier task than %d; dependencies by index point back", n, self)
		}
		out = append(out, ids[n])
	}
	return out, nil
}

func priorityOf(a map[string]json.RawMessage) (string, error) {
	p, err := str(a, "priority")
	if err != nil || p == "" {
		return "medium", err
	}
	return p, nil
}

func (p *Plan) create(a map[string]json.RawMessage, maxTasks int) (map[string]any, bool, error) {
	if len(p.Tasks) > 0 {
		return nil, false, fmt.Errorf("a task plan already exists with %d tasks (%d completed, %d in_progress, %d pending); "+
			"use get_task_plan to see it and add_task, edit_task or delete_task to change it, or clear_task_plan to start over",
			len(p.Tasks), p.Count(Completed)+p.Count(Verified), p.Count(InProgress), p.Count(Pending))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(a["tasks"], &items); err != nil || items == nil {
		return nil, false, fmt.Errorf("tasks must be a list of tasks (each a description or an object with a description), got %s", clip(string(a["tasks"])))
	}
	if len(items) > maxTasks {
		return nil, false, fmt.Errorf("%d tasks is over the limit of %d per plan; merge related tasks into one", len(items), maxTasks)
	}
	// First pass: ids, so that depends_on may name any task of the list.
	specs := make([]map[string]json.RawMessage, len(items))
	ids := make([]string, len(items))
	tasks := make([]Task, len(items))
	for i, it := range items {
		var desc string
		if json.Unmarshal(it, &desc) == nil {
			specs[i] = map[string]json.RawMessage{}
		} else if err := json.Unmarshal(it, &specs[i]); err != nil || specs[i] == nil {
			return nil, false, fmt.Errorf("task %d must be a description or an object with a description, got %s", i, clip(string(it)))
		} else if desc, err = required(specs[i], "description"); err != nil {
			return nil, false, fmt.Errorf("task %d: %w", i, err)
		}
		id, err := str(specs[i], "id")
		if err != nil {
			return nil, false, fmt.Errorf("task %d: %w", i, err)
		}
		if id == "" {
			id = fmt.Sprintf("task_%d", i)
		}
		prio, err := priorityOf(specs[i])
		if err != nil {
			return nil, false, fmt.Errorf("task %d: %w", i, err)
		}
		ids[i] = id
		tasks[i] = Task{ID: id, Description: desc, Status: Pending, Priority: prio}
	}
	for i := range tasks {
		deps, err := refs(specs[i]["depends_on"], ids, i)
		if err != nil {
			return nil, false, fmt.Errorf("task %q: %w", ids[i], err)
		}
		tasks[i].Dependencies = deps
	}
	if err := Validate(tasks, maxTasks); err != nil {
		return nil, false, err
	}
	p.Tasks = tasks
	return map[string]any{"plan_id": "own", "tasks": p.Clone(), "summary": map[string]int{
		"total_tasks": len(tasks), "ready_tasks": len(p.Ready()), "blocked_tasks": len(p.BlockedTasks())}}, true, nil
}

func (p *Plan) add(a map[string]json.RawMessage, maxTasks int) (map[string]any, bool, error) {
	desc, err := required(a, "description")
	if err != nil {
		return nil, false, err
	}
	after, err := str(a, "after_task_id")
	if err != nil {
		return nil, false, err
	}
	deps, err := refs(a["depends_on"], nil, 0)
	if err != nil {
		return nil, false, err
	}
	prio, err := priorityOf(a)
	if err != nil {
		return nil, false, err
	}
	t := Task{ID: freeID(p.Tasks, len(p.Tasks)), Description: desc, Status: Pending, Priority: prio, Dependencies: deps}
	at := len(p.Tasks)
	if after != "" {
		if at = p.index(after); at < 0 {
			return nil, false, fmt.Errorf("after_task_id %q is not a task of your plan (%s)", after, idList(p.Tasks))
		}
		at++
	}
	next := slices.Insert(p.Clone(), at, t)
	if err := Validate(next, maxTasks); err != nil {
		return nil, false, err
	}
	p.Tasks = next
	return map[string]any{"task": t}, true, nil
}

func (p *Plan) find(a map[string]json.RawMessage) (int, error) {
	id, err := required(a, "task_id")
	if err != nil {
		return -1, err
	}
	i := p.index(id)
	if i < 0 {
		return -1, fmt.Errorf("task %q is not in your plan (%s)", id, idList(p.Tasks))
	}
	return i, nil
}

func (p *Plan) update(a map[string]json.RawMessage) (map[string]any, bool, error) {
	i, err := p.find(a)
	if err != nil {
		return nil, false, err
	}
	status, err := required(a, "status")
	if err != nil {
		return nil, false, err
	}
	if !slices.Contains(Statuses, status) {
		return nil, false, fmt.Errorf("invalid status %q; use one of %s", status, strings.Join(Statuses, ", "))
	}
	notes, err := str(a, "completion_notes")
	if err != nil {
		return nil, false, err
	}
	if len(notes) > MaxNotesBytes {
		return nil, false, fmt.Errorf("completion_notes is %d bytes; keep it under %d", len(notes), MaxNotesBytes)
	}
	next := p.Clone()
	t := &next[i]
	t.Status = status
	if notes != "" && (status == Completed || status == Verified) {
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		key := "completion_notes"
		if status == Verified {
			key = "verification_notes"
		}
		t.Metadata[key] = notes
	}
	if err := checkTask(*t); err != nil {
		return nil, false, err
	}
	p.Tasks = next
	out := map[string]any{"task": p.Tasks[i]}
	if status == Completed {
		var ready []Task
		for _, o := range p.Tasks {
			if o.Status == Pending && slices.Contains(o.Dependencies, p.Tasks[i].ID) && len(p.blocking(o)) == 0 {
				ready = append(ready, o)
			}
		}
		out["newly_ready_tasks"] = nonNil(ready)
	}
	return out, true, nil
}

func (p *Plan) edit(a map[string]json.RawMessage) (map[string]any, bool, error) {
	i, err := p.find(a)
	if err != nil {
		return nil, false, err
	}
	desc, err := str(a, "description")
	if err != nil {
		return nil, false, err
	}
	if desc == "" {
		return map[string]any{"task": p.Tasks[i]}, false, nil
	}
	next := p.Clone()
	next[i].Description = desc
	if err := checkTask(next[i]); err != nil {
		return nil, false, err
	}
	p.Tasks = next
	return map[string]any{"task": p.Tasks[i]}, true, nil
}

func (p *Plan) remove(a map[string]json.RawMessage) (map[string]any, bool, error) {
	i, err := p.find(a)
	if err != nil {
		return nil, false, err
	}
	id := p.Tasks[i].ID
	for _, o := range p.Tasks {
		if slices.Contains(o.Dependencies, id) {
			return nil, false, fmt.Errorf("cannot delete task %s: task %s depends on it; delete or edit that task first", id, o.ID)
		}
	}
	p.Tasks = slices.Delete(p.Clone(), i, i+1)
	return map[string]any{"deleted_task_id": id}, true, nil
}
