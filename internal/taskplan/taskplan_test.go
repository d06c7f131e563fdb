package taskplan

import (
	"encoding/json"
	"strings"
	"testing"
)

// call runs one tool on p and decodes its result.
func call(t *testing.T, p *Plan, name, args string, max int) (map[string]any, Result) {
	t.Helper()
	r := p.Call(name, args, max)
	var out map[string]any
	if err := json.Unmarshal([]byte(r.Content), &out); err != nil {
		t.Fatalf("%s: result is not JSON: %v: %s", name, err, r.Content)
	}
	return out, r
}

func ids(p *Plan) string {
	var s []string
	for _, t := range p.Tasks {
		s = append(s, t.ID+":"+t.Status+"<"+strings.Join(t.Dependencies, ",")+">")
	}
	return strings.Join(s, " ")
}

func TestCall_CreateResolvesDependencies(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"strings", `{"tasks": ["a", "b"]}`, "task_0:pending<> task_1:pending<>"},
		{"index", `{"tasks": ["Research", {"description": "Build", "depends_on": [0]}, {"description": "Test", "depends_on": [1]}]}`,
			"task_0:pending<> task_1:pending<task_0> task_2:pending<task_1>"},
		{"ids, forward", `{"tasks": [{"id": "b", "description": "B", "depends_on": ["a"]}, {"id": "a", "description": "A"}]}`,
			"b:pending<a> a:pending<>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Plan
			out, r := call(t, &p, ToolCreate, tc.args, 10)
			if r.IsError || !r.Changed || out["success"] != true {
				t.Fatalf("refused: %s", r.Content)
			}
			if got := ids(&p); got != tc.want {
				t.Errorf("plan = %s, want %s", got, tc.want)
			}
		})
	}
}

// Every refusal names what to fix and leaves the plan as it was.
func TestCall_RefusalsSayWhatToFix(t *testing.T) {
	long := strings.Repeat("x", MaxDescBytes+1)
	for _, tc := range []struct{ name, tool, args, want string }{
		{"not json", ToolCreate, `{tasks: [}`, "not a JSON object"},
		{"no tasks", ToolCreate, `{}`, "tasks must be a list"},
		{"unknown dependency", ToolCreate, `{"tasks": [{"id": "a", "description": "A", "depends_on": ["zz"]}]}`, `depends on "zz", which is not a task`},
		{"cycle", ToolCreate, `{"tasks": [{"id": "a", "description": "A", "depends_on": ["c"]}, {"id": "b", "description": "B", "depends_on": ["a"]}, {"id": "c", "description": "C", "depends_on": ["b"]}]}`,
			"circular dependency: a -> c -> b -> a"},
		{"self", ToolCreate, `{"tasks": [{"id": "a", "description": "A", "depends_on": ["a"]}]}`, "depends on itself"},
		{"forward index", ToolCreate, `{"tasks": [{"description": "A", "depends_on": [1]}, "B"]}`, "must name an earlier task"},
		{"index out of range", ToolCreate, `{"tasks": [{"description": "A", "depends_on": [7]}]}`, "index 7 is not a task"},
		{"duplicate ids", ToolCreate, `{"tasks": [{"id": "a", "description": "A"}, {"id": "a", "description": "B"}]}`, "used twice"},
		{"over the cap", ToolCreate, `{"tasks": ["1", "2", "3", "4"]}`, "4 tasks is over the limit of 3"},
		{"long description", ToolCreate, `{"tasks": ["` + long + `"]}`, "keep it under 2000"},
		{"bad priority", ToolCreate, `{"tasks": [{"description": "A", "priority": "urgent"}]}`, "use one of low, medium, high"},
		{"unknown task", ToolUpdate, `{"task_id": "nope", "status": "completed"}`, `task "nope" is not in your plan (x, y)`},
		{"bad status", ToolUpdate, `{"task_id": "x", "status": "done"}`, `invalid status "done"`},
		{"status type", ToolUpdate, `{"task_id": "x", "status": 3}`, "status must be a string"},
		{"delete depended on", ToolDelete, `{"task_id": "x"}`, "task y depends on it"},
		{"add unknown dep", ToolAdd, `{"description": "z", "depends_on": ["q"]}`, `depends on "q"`},
		{"add after unknown", ToolAdd, `{"description": "z", "after_task_id": "q"}`, `after_task_id "q"`},
		{"create over a plan", ToolCreate, `{"tasks": ["a"]}`, "already exists with 2 tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan{}
			if tc.tool != ToolCreate || tc.name == "create over a plan" {
				p.Tasks = []Task{{ID: "x", Description: "X", Status: Pending, Priority: "medium", Dependencies: []string{}},
					{ID: "y", Description: "Y", Status: Pending, Priority: "medium", Dependencies: []string{"x"}}}
			}
			before := ids(&p)
			out, r := call(t, &p, tc.tool, tc.args, 3)
			if !r.IsError || r.Changed || out["success"] != false {
				t.Fatalf("accepted: %s", r.Content)
			}
			if msg, _ := out["error"].(string); !strings.Contains(msg, tc.want) {
				t.Errorf("error = %q, want it to contain %q", msg, tc.want)
			}
			if ids(&p) != before {
				t.Errorf("a refused call changed the plan: %s, was %s", ids(&p), before)
			}
		})
	}
}

func TestCall_WorkThroughAPlan(t *testing.T) {
	var p Plan
	call(t, &p, ToolCreate, `{"tasks": [{"id": "r", "description": "Research"}, {"id": "b", "description": "Build", "depends_on": ["r"]}, {"id": "d", "description": "Docs", "depends_on": ["r"], "priority": "low"}]}`, 10)
	out, _ := call(t, &p, ToolReady, `{}`, 10)
	if out["count"].(float64) != 1 {
		t.Fatalf("ready = %v, want only r", out)
	}
	out, _ = call(t, &p, ToolBlocked, ``, 10)
	blocked := out["blocked_tasks"].([]any)
	if len(blocked) != 2 || blocked[0].(map[string]any)["blocking_task_ids"].([]any)[0] != "r" {
		t.Fatalf("blocked = %v", out)
	}
	out, r := call(t, &p, ToolUpdate, `{"task_id": "r", "status": "completed", "completion_notes": "read the RFC"}`, 10)
	if !r.Changed || len(out["newly_ready_tasks"].([]any)) != 2 {
		t.Fatalf("completing r: %s", r.Content)
	}
	if p.Tasks[0].Metadata["completion_notes"] != "read the RFC" {
		t.Errorf("notes not kept: %v", p.Tasks[0].Metadata)
	}
	call(t, &p, ToolAdd, `{"description": "Release", "depends_on": ["b", "d"], "after_task_id": "b"}`, 10)
	call(t, &p, ToolEdit, `{"task_id": "d", "description": "Write the docs"}`, 10)
	if _, r := call(t, &p, ToolDelete, `{"task_id": "d"}`, 10); !r.IsError {
		t.Fatalf("deleted a task another depends on")
	}
	if got, want := ids(&p), "r:completed<> b:pending<r> task_3:pending<b,d> d:pending<r>"; got != want {
		t.Errorf("plan = %s, want %s", got, want)
	}
	out, _ = call(t, &p, ToolGet, "", 10)
	sum := out["summary"].(map[string]any)
	if sum["total_tasks"].(float64) != 4 || sum["completed_tasks"].(float64) != 1 || sum["ready_tasks"].(float64) != 2 {
		t.Errorf("summary = %v", sum)
	}
	if out, r := call(t, &p, ToolClear, "", 10); !r.Changed || out["had_existing_plan"] != true || len(p.Tasks) != 0 {
		t.Errorf("clear: %s", r.Content)
	}
}

func TestParseProject(t *testing.T) {
	good := `{"tasks": [{"id": "F1", "description": "Set up", "chunk": "C01"}, {"id": "F2", "description": "Build", "depends_on": ["F1"], "priority": "high"}]}`
	for _, tc := range []struct{ name, answer, want, err string }{
		{"bare", good, "F1:pending<> F2:pending<F1>", ""},
		{"fenced after prose", "Here is the plan.\n\n```json\n" + good + "\n```\nVote for it.", "F1:pending<> F2:pending<F1>", ""},
		{"no plan", "I would build it in three steps.", "", "holds no project plan"},
		{"bad json", "```json\n{\"tasks\": [}\n```", "", "does not parse"},
		{"cycle", `{"tasks": [{"id": "a", "description": "A", "depends_on": ["b"]}, {"id": "b", "description": "B", "depends_on": ["a"]}]}`, "", "circular dependency"},
		{"empty list", `{"tasks": []}`, "", "list is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks, err := ParseProject(tc.answer)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := Plan{Tasks: tasks}
			if got := ids(&p); got != tc.want {
				t.Errorf("tasks = %s, want %s", got, tc.want)
			}
		})
	}
	// The file round-trips.
	tasks, _ := ParseProject(good)
	p, err := ReadProject(Project{Tasks: tasks, Question: "q", Depth: "shallow"}.Marshal())
	if err != nil || p.Question != "q" || len(p.Tasks) != 2 || p.Tasks[0].Chunk != "C01" {
		t.Fatalf("round trip: %+v, %v", p, err)
	}
}
