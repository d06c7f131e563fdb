package taskplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"massgen/internal/lazy"
)

// A project plan is what a planning run (--plan) produces: MassGen's project_plan.json, a task
// list with dependencies that a later run (--execute-plan) carries out. Here the planning
// agents write it as their answer, so that it is checked at every new_answer.

// ProjectFile is the plan file's name in a planning run's log folder; MassGen names the frozen
// copy plan.json (plans/plan_<id>/frozen/plan.json).
const ProjectFile = "plan.json"

// fence finds fenced code blocks; the plan is the last one that holds a task list.
var fence = lazy.Regexp("(?s)```[a-zA-Z]*[ \\t]*\\n(.*?)```")

// ErrNoPlan is the error of an answer that holds no task list at all.
var ErrNoPlan = errors.New(`the answer holds no project plan: put the plan in it as one JSON object {"tasks": [...]}, ` +
	`each task with an id, a description, depends_on (ids of earlier tasks), a priority and a status of pending`)

// ParseProject reads the project plan in an answer: a JSON object with a "tasks" list, alone
// or in a fenced code block (the last such block wins). Missing statuses become pending and
// missing priorities medium; the tasks are then checked as Validate does, within
// MaxTasksCeiling. The error says what to fix, for the model that wrote the answer.
func ParseProject(answer string) ([]Task, error) {
	candidates := []string{strings.TrimSpace(answer)}
	blocks := fence().FindAllStringSubmatch(answer, -1)
	for i := len(blocks) - 1; i >= 0; i-- {
		candidates = append(candidates, strings.TrimSpace(blocks[i][1]))
	}
	if i, j := strings.Index(answer, "{"), strings.LastIndex(answer, "}"); i >= 0 && j > i {
		candidates = append(candidates, answer[i:j+1])
	}
	var firstErr error
	for _, c := range candidates {
		if !strings.HasPrefix(c, "{") {
			continue
		}
		var doc struct {
			Tasks json.RawMessage `json:"tasks"`
		}
		if err := json.Unmarshal([]byte(c), &doc); err != nil {
			firstErr = cmpErr(firstErr, fmt.Errorf("the plan's JSON does not parse: %v", err))
			continue
		}
		if len(doc.Tasks) == 0 {
			continue
		}
		tasks, err := projectTasks(doc.Tasks)
		if err != nil {
			return nil, err
		}
		return tasks, nil
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, ErrNoPlan
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func projectTasks(raw json.RawMessage) ([]Task, error) {
	var tasks []Task
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&tasks); err != nil {
		return nil, fmt.Errorf(`"tasks" must be a list of task objects: %v`, err)
	}
	if len(tasks) == 0 {
		return nil, errors.New(`the plan's "tasks" list is empty; list the tasks the work needs`)
	}
	withDefaults(tasks)
	if err := Validate(tasks, MaxTasksCeiling); err != nil {
		return nil, fmt.Errorf("the project plan is not valid: %w", err)
	}
	return tasks, nil
}

// Project is the plan file: MassGen's frozen plan.json ({"tasks": [...]}) with what an
// execution run needs to know of the planning run.
type Project struct {
	Tasks []Task `json:"tasks"`
	// Question is the planning run's question, without the planning instructions.
	Question string `json:"question"`
	// Depth is --plan-depth; Session is the planning run's log folder name and Turn its turn.
	Depth   string `json:"plan_depth,omitempty"`
	Session string `json:"planning_session_id,omitempty"`
	Turn    int    `json:"planning_turn,omitempty"`
}

// ReadProject decodes and checks a plan file.
func ReadProject(data []byte) (Project, error) {
	var p Project
	if err := json.Unmarshal(data, &p); err != nil {
		return Project{}, fmt.Errorf("not a plan file (a JSON object with a tasks list): %w", err)
	}
	if len(p.Tasks) == 0 {
		return Project{}, errors.New("the plan file has no tasks")
	}
	withDefaults(p.Tasks)
	if err := Validate(p.Tasks, MaxTasksCeiling); err != nil {
		return Project{}, fmt.Errorf("the plan file is not valid: %w", err)
	}
	return p, nil
}

// Marshal writes p as the plan file.
func (p Project) Marshal() []byte {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		panic(err) // a Project always marshals
	}
	return append(b, '\n')
}

// withDefaults fills what a project plan may leave out: status pending, priority medium, no
// dependencies.
func withDefaults(tasks []Task) {
	for i := range tasks {
		t := &tasks[i]
		if t.Status == "" {
			t.Status = Pending
		}
		if t.Priority == "" {
			t.Priority = "medium"
		}
		if t.Dependencies == nil {
			t.Dependencies = []string{}
		}
	}
}
