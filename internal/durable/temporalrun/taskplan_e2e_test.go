package temporalrun

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/taskplan"
)

// modelInput is everything agent's model calls were sent in the turn logged at dir.
func modelInput(t *testing.T, dir, agent string) string {
	t.Helper()
	var b strings.Builder
	for _, e := range readLog(t, dir) {
		if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Agent == agent {
			b.WriteString(mc.System + "\n")
			for _, m := range mc.Messages {
				b.WriteString(m.Content + "\n")
			}
		}
	}
	return b.String()
}

// firstSystem is the system prompt of agent's first model call in the turn logged at dir.
func firstSystem(t *testing.T, dir, agent string) string {
	t.Helper()
	for _, e := range readLog(t, dir) {
		if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Agent == agent && mc.System != "" {
			return mc.System
		}
	}
	return ""
}

// planLog is each plan change logged at dir, as "agent tool: id=status,...", in order.
func planLog(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, e := range readLog(t, dir) {
		if p, ok := e.Payload.(event.TaskPlanChanged); ok {
			var s []string
			for _, tk := range p.Tasks {
				s = append(s, tk.ID+"="+tk.Status)
			}
			out = append(out, p.Agent+" "+p.Tool+": "+strings.Join(s, ","))
		}
	}
	return out
}

// seedOrder is the order of the personas and the seeded plans in the turn logged at dir.
func seedOrder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, e := range readLog(t, dir) {
		switch p := e.Payload.(type) {
		case event.PersonasGenerated:
			out = append(out, "personas")
		case event.TaskPlanChanged:
			if p.Tool == event.PlanSeeded {
				out = append(out, "seed "+p.Agent)
			}
		}
	}
	return out
}

// ofAgent keeps the entries of planLog made by agent.
func ofAgent(log []string, agent string) []string {
	var out []string
	for _, l := range log {
		if strings.HasPrefix(l, agent+" ") {
			out = append(out, l)
		}
	}
	return out
}

// TestSession_TaskPlansOnTemporal: agent task planning on Temporal as locally. The planner
// makes its plan in its first turn, which then fails; its next turn, a new activity on a
// replica rebuilt from the ops, completes a task of that plan (the plan travelled with its
// conversation, through runs continued as new). Each plan change is logged once, the same as
// the local run's, and task_planning_filesystem_mode leaves tasks/plan.json in the final
// workspace. An execution run's plan (--execute-plan) reaches every agent's turns there too.
func TestSession_TaskPlansOnTemporal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	target, c, root := heldSessions(t, "taskplan-test", &Activities{})
	// The sessions continue as new runs between turns: the plans ride in the carried
	// conversations.
	target.HistoryLimit = minHistoryLimit
	remote := remoteOn(c, target)
	seed := []taskplan.Task{{ID: "T1", Description: "Set up", Status: "pending", Priority: "high", Dependencies: []string{}},
		{ID: "T2", Description: "Build", Status: "pending", Priority: "medium", Dependencies: []string{"T1"}}}
	tests := []struct {
		name, calls string
		seed        []taskplan.Task
		extra       string   // more of orchestrator.coordination
		want        []string // the planner's plan changes
	}{
		{"the plan outlives a failed turn", `[{name: create_task_plan, args: {tasks: [{id: r, description: Research}, {id: w, description: Write, depends_on: [r]}]}},
        {name: update_task_status, args: {task_id: r, status: completed}}]`, nil, "",
			[]string{"planner create_task_plan: r=pending,w=pending", "planner update_task_status: r=completed,w=pending"}},
		{"an execution run's plan", `[{name: update_task_status, args: {task_id: T1, status: in_progress}},
        {name: update_task_status, args: {task_id: T1, status: completed}}]`, seed,
			"\n    persona_generator: {enabled: true, diversity_mode: methodology}",
			[]string{"planner seed: T1=pending,T2=pending", "planner update_task_status: T1=in_progress,T2=pending", "planner update_task_status: T1=completed,T2=pending"}},
	}
	for k, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadTeam(t, `
agents:
  - id: planner
    backend:
      type: scripted
      cwd: ws
      tool_calls: `+tt.calls+`
      faults: [{kind: fail, call: 2}]
      answers: ["Planned and done."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, latency: 300ms, answers: ["Short."], vote: agent1}
orchestrator:
  final_presentation: verbatim
  coordination:
    enable_agent_task_planning: true
    task_planning_filesystem_mode: true`+tt.extra+`
`)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			o := app.Options{Question: "Plan it.", Logging: true, PlanSeed: tt.seed}
			o.LogRoot, o.WorkspaceRoot = filepath.Join(root, fmt.Sprint(k), "local-logs"), filepath.Join(root, fmt.Sprint(k), "local-ws")
			local, err := app.Run(ctx, cfg, o)
			if err != nil || local.ExitCode != 0 {
				t.Fatalf("local run: %+v, %v", local.Result, err)
			}
			o.LogRoot, o.WorkspaceRoot, o.Remote = filepath.Join(root, fmt.Sprint(k), "logs"), "", remote
			res, err := app.Run(ctx, cfg, o)
			if err != nil || res.ExitCode != 0 || res.Winner != local.Winner {
				t.Fatalf("remote run: %+v, %v; locally the winner is %q", res.Result, err, local.Winner)
			}
			runs := 0
			for rid := ""; ; runs++ {
				h := historyOf(t, c, fmt.Sprintf("massgen-%s-turn-1", res.Session), rid)
				replay(t, h)
				if rid = h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId(); rid == "" {
					break
				}
			}
			if runs == 0 {
				t.Error("the session never continued as new: the carried plans are not tested")
			}
			for _, e := range readLog(t, res.Dir) {
				if r, ok := e.Payload.(event.ToolResult); ok && r.IsError {
					t.Errorf("%s of %s failed on Temporal: %s", r.Tool, r.Agent, r.Content)
				}
			}
			// The prompt names the plan file, which the planner's workspace on the worker holds.
			if sys := firstSystem(t, res.Dir, "planner"); sys != firstSystem(t, local.Dir, "planner") || !strings.Contains(sys, "tasks/plan.json") {
				t.Errorf("the planner's system prompt on Temporal differs from the local one:\n%s", sys)
			}
			if o, l := seedOrder(t, res.Dir), seedOrder(t, local.Dir); !slices.Equal(o, l) {
				t.Errorf("the steps before coordination and the seeded plans on Temporal came as %q, locally as %q", o, l)
			}
			got, gotLocal := planLog(t, res.Dir), planLog(t, local.Dir)
			if p := ofAgent(got, "planner"); !slices.Equal(p, tt.want) {
				t.Errorf("the planner's plan changes on Temporal %q, want %q", p, tt.want)
			}
			slices.Sort(got)
			slices.Sort(gotLocal)
			if !slices.Equal(got, gotLocal) {
				t.Errorf("plan changes on Temporal %q, locally %q", got, gotLocal)
			}
			ws := workspaceFiles(t, filepath.Join(res.Dir, "final", res.Winner, "workspace"))
			var plan taskplan.Plan
			if err := json.Unmarshal([]byte(ws[filepath.Join("tasks", "plan.json")]), &plan); err != nil {
				t.Fatalf("tasks/plan.json in the final workspace: %v (files %v)", err, slices.Collect(maps.Keys(ws)))
			}
			var file []string
			for _, tk := range plan.Tasks {
				file = append(file, tk.ID+"="+tk.Status)
			}
			if last := tt.want[len(tt.want)-1]; !strings.HasSuffix(last, ": "+strings.Join(file, ",")) {
				t.Errorf("tasks/plan.json in the final workspace holds %v, the plan is %s", file, last)
			}
		})
	}
}

// TestSession_MemoryFilesMoveWithTheSession: filesystem memory on Temporal. The builder saves a
// memory and answers on worker A, which is then killed (SIGKILL); worker B takes the session
// over from the snapshots in the store, and the reviewer's turn there reads the builder's
// memory, as locally. The final workspace holds every agent's memories (gathered into the
// winner's, as locally), and the conversation's next turn reads them.
func TestSession_MemoryFilesMoveWithTheSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server and two workers, one killed: about 20 s")
	}
	team := func(builderCalls, reviewerCalls string) *config.Config {
		return loadTeam(t, `
agents:
  - id: builder
    backend:
      type: scripted
      latency: 200ms
      tool_calls: `+builderCalls+`
      answers: ["Done."]
      vote: agent1
  - id: reviewer
    backend:
      type: scripted
      latency: 3s
      tool_calls: `+reviewerCalls+`
      answers: ["Also done."]
      vote: agent1
orchestrator:
  final_presentation: verbatim
  coordination: {enable_memory_filesystem_mode: true}
`)
	}
	first := team(`[{name: create_memory, args: {name: prefs, description: "What the user likes", content: "Answers in French."}}]`,
		`[{name: create_memory, args: {name: style, description: "How reviews read", content: "Reviews are short."}}]`)
	addr := devServer(t)
	root := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	local, err := app.Run(ctx, first, app.Options{Question: "Remember things.", Logging: true, LogRoot: filepath.Join(root, "local-logs"),
		WorkspaceRoot: filepath.Join(root, "local-ws")})
	if err != nil || local.ExitCode != 0 || local.Winner != "builder" {
		t.Fatalf("local run: %+v, %v", local.Result, err)
	}
	if !strings.Contains(modelInput(t, local.Dir, "reviewer"), "Answers in French.") {
		t.Fatal("locally the reviewer did not read the builder's memory: the test checks nothing")
	}

	store := filepath.Join(root, "store")
	target := durable.Target{Address: addr, Queue: "memfiles-test", Heartbeat: 2 * time.Second, Store: store}
	c := dialTarget(t, target)
	killA, aErr := heldWorker(t, addr, target.Queue, filepath.Join(root, "ws-a"), store)
	var once sync.Once
	var bErr *strings.Builder
	watch := event.SinkFunc(func(e event.Event) {
		if a, ok := e.Payload.(event.AnswerSubmitted); ok && a.Agent == "builder" && !e.Preview {
			once.Do(func() {
				killA()
				_, bErr = heldWorker(t, addr, target.Queue, filepath.Join(root, "ws-b"), store)
			})
		}
	})
	remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		o.Bus.Subscribe(watch)
		return Run(ctx, c, target, cfg, o)
	}
	conv := app.NewConversation()
	defer conv.Close()
	logs := filepath.Join(root, "logs")
	res, err := app.Run(ctx, first, app.Options{Question: "Remember things.", Logging: true, LogRoot: logs, Remote: remote, Conversation: conv})
	if err != nil || res.ExitCode != 0 || res.Winner != local.Winner {
		t.Fatalf("remote run: %+v, %v\nworker A: %s\nworker B: %v", res.Result, err, aErr, bErr)
	}
	if bErr == nil {
		t.Fatal("worker A was never killed")
	}
	moved := false
	for _, e := range readLog(t, res.Dir) {
		if p, ok := e.Payload.(event.ToolServerStatus); ok && p.Status == "moved" {
			moved = true
		}
	}
	if !moved {
		t.Error("no event says the session moved to worker B")
	}
	if sys := firstSystem(t, res.Dir, "reviewer"); sys != firstSystem(t, local.Dir, "reviewer") || !strings.Contains(sys, "create_memory") {
		t.Errorf("the reviewer's system prompt on Temporal differs from the local one:\n%s", sys)
	}
	if got := modelInput(t, res.Dir, "reviewer"); !strings.Contains(got, "### prefs [Agent: agent1]") || !strings.Contains(got, "Answers in French.") {
		t.Errorf("on worker B the reviewer did not read the builder's memory; it read:\n%s", got)
	}
	memories := func(dir string) []string {
		var out []string
		for f := range workspaceFiles(t, filepath.Join(dir, "final", "builder", "workspace")) {
			if strings.HasPrefix(f, "memory"+string(os.PathSeparator)) {
				out = append(out, f)
			}
		}
		slices.Sort(out)
		return out
	}
	if got, want := memories(res.Dir), memories(local.Dir); !slices.Equal(got, want) || len(want) != 2 {
		t.Errorf("memories in the final workspace on Temporal %v, locally %v (want both agents')", got, want)
	}

	// The next turn starts from the winner's workspace: the builder reads the reviewer's memory.
	second, err := app.Run(ctx, team(`[]`, `[]`), app.Options{Question: "What do you remember?",
		History: []provider.Message{{Role: provider.RoleUser, Content: "Remember things."}, {Role: provider.RoleAssistant, Content: "Done."}},
		Logging: true, LogRoot: logs, Session: res.Session, Turn: 2, Remote: remoteOn(c, target), Conversation: conv})
	if err != nil || second.ExitCode != 0 {
		t.Fatalf("turn 2: %+v, %v", second.Result, err)
	}
	if got := modelInput(t, second.Dir, "builder"); !strings.Contains(got, "Reviews are short.") || !strings.Contains(got, "Answers in French.") {
		t.Errorf("turn 2: the builder did not read turn 1's memories:\n%s", got)
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("the store keeps %d entries after the turns", len(entries))
	}
}
