package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"massgen/examples"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// planOf reads a logged tasks/plan.json as "id=status" pairs.
func planOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Tasks []struct{ ID, Status string } `json:"tasks"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, tk := range p.Tasks {
		out = append(out, tk.ID+"="+tk.Status)
	}
	return strings.Join(out, ",")
}

// MassGen's simple_task_planning example, its agent scripted (the file's keys otherwise as
// MassGen ships them, plus the filesystem mode and a small cap): the agent's bad calls are
// refused with what to fix, its plan is published, shown, logged beside its answer and in
// its workspace, and the run completes.
func TestE2E_TaskPlanningScripted(t *testing.T) {
	ex, err := examples.Lookup("tools/planning/simple_task_planning")
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(ex.Data), `      type: "gemini"
      model: "gemini-2.5-flash"`, `      type: scripted
      answers: ["An API in three steps; research done, build next."]
      tool_calls:
        - {name: update_task_status, args: {task_id: research, status: completed}}
        - {name: create_task_plan, args: {tasks: [{id: research, description: "Research auth options"}, {id: build, description: "Build the API", depends_on: [research]}]}}
        - {name: add_task, args: {description: "Write the tests", depends_on: [build]}}
        - {name: update_task_status, args: {task_id: research, status: done}}
        - {name: update_task_status, args: {task_id: research, status: completed, completion_notes: "JWT it is"}}`, 1)
	yaml = strings.Replace(yaml, "    enable_agent_task_planning: true", "    enable_agent_task_planning: true\n    task_planning_filesystem_mode: true\n    max_tasks_per_plan: 2", 1)
	cfg, rep := config.Parse("simple_task_planning.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Create a REST API with authentication", Logging: true, LogRoot: t.TempDir(),
		Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	evs := readEvents(t, res.Dir)
	var refusals []string
	for _, r := range payloads[event.ToolResult](evs) {
		if r.IsError {
			refusals = append(refusals, r.Content)
		}
	}
	for k, want := range []string{`task \"research\" is not in your plan (the plan has no tasks)`, "3 tasks is over the limit of 2", `invalid status \"done\"`} {
		if k >= len(refusals) || !strings.Contains(refusals[k], want) {
			t.Errorf("refusal %d: want %q in %q", k, want, refusals)
		}
	}
	changes := payloads[event.TaskPlanChanged](evs)
	if len(changes) != 2 || changes[1].Tasks[0].Status != "completed" {
		t.Fatalf("plan changes %+v", changes)
	}
	agentDir := filepath.Join(res.Dir, "agent_a")
	if got := planOf(t, filepath.Join(agentDir, "tasks", "plan.json")); got != "research=completed,build=pending" {
		t.Errorf("logged plan %s", got)
	}
	beside, _ := filepath.Glob(filepath.Join(agentDir, "2*", "tasks", "plan.json"))
	if len(beside) != 1 || planOf(t, beside[0]) != "research=completed,build=pending" {
		t.Errorf("plan beside the answer: %v", beside)
	}
	if got := planOf(t, filepath.Join(res.Dir, "final", "agent_a", "workspace", "tasks", "plan.json")); got != "research=completed,build=pending" {
		t.Errorf("the workspace's tasks/plan.json: %s", got)
	}
	for _, want := range []string{"agent1 agent_a: task plan (create_task_plan): 0/2 done; now: Research auth options",
		"agent1 agent_a: task plan (update_task_status): 1/2 done; now: Build the API", "task plan of agent1 agent_a: 1/2 done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plain view lacks %q:\n%s", want, out.String())
		}
	}
}

// The same over the official OpenAI SDK against the local fake of the Responses API: the
// model's function calls reach the planning tools, their results go back as
// function_call_output, and the plan is published.
func TestE2E_TaskPlanningOverOpenAI(t *testing.T) {
	var step atomic.Int32
	called := func(body map[string]any, name string) bool {
		for _, it := range list(body["input"]) {
			if obj(it)["type"] == "function_call" && obj(it)["name"] == name {
				return true
			}
		}
		return false
	}
	var outputs atomic.Value
	player := func(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
		var outs []string
		for _, it := range list(body["input"]) {
			if obj(it)["type"] == "function_call_output" {
				outs = append(outs, fmt.Sprint(obj(it)["output"]))
			}
		}
		if len(outs) >= 2 {
			outputs.CompareAndSwap(nil, outs)
		}
		switch {
		case slices.Contains(offered, "create_task_plan") && !called(body, "create_task_plan") && step.Add(1) == 1:
			return move{tool: "create_task_plan", args: `{"tasks": ["Look it up", {"description": "Answer", "depends_on": [0]}]}`}
		case slices.Contains(offered, "update_task_status") && called(body, "create_task_plan") && !called(body, "update_task_status"):
			return move{tool: "update_task_status", args: `{"task_id": "task_0", "status": "completed"}`}
		}
		return decide(answer, offered, enum, answered, body)
	}
	gpt := newFake(t, nil, openaiResponsesAs("Paris is the capital of France.", player))
	cfg, rep := config.Parse("team.yaml", []byte(fmt.Sprintf(`
agents:
  - id: gpt
    backend: {type: openai, model: gpt-5-mini, base_url: "%s/v1"}
orchestrator:
  coordination: {enable_agent_task_planning: true}
timeout_settings: {agent_timeout_seconds: 20, orchestrator_timeout_seconds: 120}
`, gpt.URL)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	res, err := Run(t.Context(), cfg, Options{Question: "What is the capital of France?", Logging: true, LogRoot: t.TempDir(),
		Getenv: func(k string) string { return keys[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res.Result)
	}
	var changes []string
	for _, c := range payloads[event.TaskPlanChanged](readEvents(t, res.Dir)) {
		var s []string
		for _, tk := range c.Tasks {
			s = append(s, tk.ID+"="+tk.Status)
		}
		changes = append(changes, c.Tool+": "+strings.Join(s, ","))
	}
	if want := []string{"create_task_plan: task_0=pending,task_1=pending", "update_task_status: task_0=completed,task_1=pending"}; !slices.Equal(changes, want) {
		t.Errorf("plan changes %q, want %q", changes, want)
	}
	outs, _ := outputs.Load().([]string)
	if len(outs) < 2 || !strings.Contains(outs[1], `"newly_ready_tasks":[{"id":"task_1"`) {
		t.Errorf("the model read %q", outs)
	}
}

// persona_generator.persist_across_turns: the second turn of a session keeps the personas the
// first wrote (read from its log), without a persona call; without the key it writes new ones.
func TestE2E_PersonasKeptAcrossTurns(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(fmt.Sprint("persist=", persist), func(t *testing.T) {
			cfg, rep := config.Parse("team.yaml", []byte(fmt.Sprintf(`
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris."]}
  - id: b
    backend: {type: scripted, answers: ["Paris, France."]}
orchestrator:
  coordination:
    persona_generator: {enabled: true, persist_across_turns: %v}
`, persist)))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			root := t.TempDir()
			first, err := Run(t.Context(), cfg, Options{Question: "Capital of France?", Logging: true, LogRoot: root})
			if err != nil || first.ExitCode != 0 {
				t.Fatalf("turn 1: %+v, %v", first, err)
			}
			second, err := Run(t.Context(), cfg, Options{Question: "And of Italy?", Logging: true, LogRoot: root, Session: first.Session, Turn: 2})
			if err != nil || second.ExitCode != 0 {
				t.Fatalf("turn 2: %+v, %v", second, err)
			}
			p1 := payloads[event.PersonasGenerated](readEvents(t, first.Dir))
			p2 := payloads[event.PersonasGenerated](readEvents(t, second.Dir))
			if len(p1) != 1 || len(p2) != 1 {
				t.Fatalf("personas events: %d and %d", len(p1), len(p2))
			}
			calls := 0
			for _, e := range readEvents(t, second.Dir) {
				if u, ok := e.Payload.(event.UsageReported); ok && u.Round == 0 && !u.Presentation { // before coordination: the persona call
					calls++
				}
			}
			if persist {
				if p2[0].FromTurn != 1 || p2[0].Personas[0].Text != p1[0].Personas[0].Text || calls != 0 {
					t.Errorf("turn 2 personas %+v (%d persona calls), want turn 1's kept", p2[0], calls)
				}
			} else if p2[0].FromTurn != 0 || calls != 1 {
				t.Errorf("turn 2 personas %+v (%d persona calls), want new ones", p2[0], calls)
			}
		})
	}
}
