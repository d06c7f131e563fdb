package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/event"
	"massgen/internal/taskplan"
)

const planJSON = "```json\n" + `{"tasks": [{"id": "T1", "description": "Set up the blog engine", "priority": "high"},` +
	` {"id": "T2", "description": "Write the first post", "depends_on": ["T1"], "metadata": {"verification": "it renders"}}]}` + "\n```"

// --plan, then --execute-plan latest, offline: the planning agents' answers must hold a valid
// plan (the first one, prose only, is refused with what to fix), the plan lands in plan.json
// in the log folder, and the execution run starts every agent with those tasks as its task
// plan and the planned request as its question.
func TestE2E_PlanThenExecute(t *testing.T) {
	t.Chdir(t.TempDir())
	planCfg := writeConfig(t, `
agents:
  - id: a
    backend: {type: scripted, answers: ["Three steps: set up, write, publish.", `+quoteYAML(planJSON)+`]}
  - id: b
    backend: {type: scripted, answers: [`+quoteYAML(planJSON)+`]}
`)
	code, out, stderr := execute(t, t.Context(), "--automation", "--config", planCfg, "--plan", "--plan-depth", "shallow", "Start a blog")
	if code != 0 {
		t.Fatalf("--plan: exit %d\n%s\n%s", code, out, stderr)
	}
	lines := automationLines(out)
	path := lines["PLAN_FILE"]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("PLAN_FILE %q: %v\n%s", path, err, out)
	}
	proj, err := taskplan.ReadProject(data)
	if err != nil || proj.Question != "Start a blog" || proj.Depth != "shallow" || len(proj.Tasks) != 2 || proj.Tasks[1].Dependencies[0] != "T1" {
		t.Fatalf("plan file: %+v, %v", proj, err)
	}
	evs, err := event.ReadFile(filepath.Join(filepath.Dir(path), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	start := evs[0].Payload.(event.SessionStarted)
	if !strings.Contains(start.Question, "TASK PLANNING MODE") || !strings.Contains(start.Question, "5 to 10 tasks") {
		t.Errorf("the planning question: %s", start.Question)
	}
	refused := false
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolRejected); ok && strings.Contains(r.Error, "answer rejected: the answer holds no project plan") {
			refused = true
		}
	}
	if !refused {
		t.Errorf("the answer without a plan was not refused with what to fix")
	}

	execCfg := writeConfig(t, `
agents:
  - id: a
    backend:
      type: scripted
      answers: ["The blog is up, with its first post."]
      tool_calls: [{name: get_ready_tasks}, {name: update_task_status, args: {task_id: T1, status: completed, completion_notes: "hugo"}}]
  - id: b
    backend: {type: scripted, answers: ["Blog set up."]}
`)
	code, out, stderr = execute(t, t.Context(), "--automation", "--config", execCfg, "--execute-plan", "latest")
	if code != 0 {
		t.Fatalf("--execute-plan: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "executing the plan in "+path+" (2 tasks)") {
		t.Errorf("stderr: %s", stderr)
	}
	turns, _ := filepath.Glob(filepath.Join(automationLines(out)["LOG_DIR"], "turn_*"))
	if len(turns) != 1 {
		t.Fatalf("execution log: %v\n%s", turns, out)
	}
	evs, err = event.ReadFile(filepath.Join(turns[0], "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	start = evs[0].Payload.(event.SessionStarted)
	if !strings.Contains(start.Question, "PLAN EXECUTION MODE") || !strings.Contains(start.Question, "Start a blog") {
		t.Errorf("the execution question: %s", start.Question)
	}
	plans := map[string]string{}
	for _, e := range evs {
		if p, ok := e.Payload.(event.TaskPlanChanged); ok {
			var s []string
			for _, tk := range p.Tasks {
				s = append(s, tk.ID+"="+tk.Status)
			}
			plans[p.Agent] = p.Tool + ": " + strings.Join(s, ",")
		}
	}
	if plans["a"] != "update_task_status: T1=completed,T2=pending" || plans["b"] != "seed: T1=pending,T2=pending" {
		t.Errorf("plans: %v", plans)
	}
}

func quoteYAML(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func TestExecutePlan_RefusesBadPlans(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	bad := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(bad, []byte(`{"tasks": [{"id": "a", "description": "A", "depends_on": ["b"]}, {"id": "b", "description": "B", "depends_on": ["a"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--execute-plan", bad}, "the plan file is not valid: circular dependency: a -> b -> a"},
		{[]string{"--execute-plan", t.TempDir()}, "holds no plan.json: it is not the log folder of a --plan run"},
		{[]string{"--execute-plan", "nowhere.json"}, "no such plan file or log folder"},
		{[]string{"--plan", "--execute-plan", "latest", "q?"}, "run massgen --plan first, then massgen --execute-plan latest"},
		{[]string{"--plan", "--temporal", "127.0.0.1:7233", "q?"}, "--plan does not run on Temporal yet"},
		{[]string{"--plan", "--no-logs", "q?"}, "--plan writes the plan into the log folder"},
		{[]string{"--plan", "--plan-depth", "huge", "q?"}, `--plan-depth "huge": use dynamic, shallow`},
	} {
		code, _, stderr := execute(t, t.Context(), append([]string{"--config", cfg}, tc.args...)...)
		if code != ExitConfig || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 1 with %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}
