package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/taskplan"
)

func planCall(id, tool, args string) step {
	return step{text: "planning", calls: []provider.ToolCall{{ID: id, Name: tool, Arguments: args}}}
}

// taskPlanner plans before it answers: a cyclic plan first (refused), the fixed plan, one task
// completed, then its answer and votes. Each step follows from the conversation alone, so a
// resumed planner picks up where its log stops.
func taskPlanner(content string) *fake {
	return &fake{next: func(n int, req provider.Request) step {
		switch {
		case req.Stage == provider.StagePresentation:
			return step{text: "FINAL: " + content}
		case hasOwnAnswer(req, content):
			return vote(labels(req)[0], "fine")
		case toolResult(req, "p1") == "":
			return planCall("p1", taskplan.ToolCreate, `{"tasks": [{"id": "r", "description": "Research", "depends_on": ["w"]}, {"id": "w", "description": "Write", "depends_on": ["r"]}]}`)
		case toolResult(req, "p2") == "":
			return planCall("p2", taskplan.ToolCreate, `{"tasks": [{"id": "r", "description": "Research"}, {"id": "w", "description": "Write", "depends_on": ["r"]}]}`)
		case toolResult(req, "p3") == "":
			return planCall("p3", taskplan.ToolUpdate, `{"task_id": "r", "status": "completed", "completion_notes": "read up"}`)
		}
		return answer(content)
	}}
}

func planningOn() config.Orchestrator {
	return config.Orchestrator{TaskPlanning: config.TaskPlanning{Enabled: true, MaxTasks: 5}}
}

func lastPlan(evs []event.Event, agent string) *event.TaskPlanChanged {
	var last *event.TaskPlanChanged
	for _, e := range evs {
		if p, ok := e.Payload.(event.TaskPlanChanged); ok && p.Agent == agent {
			last = &p
		}
	}
	return last
}

func planString(p *event.TaskPlanChanged) string {
	if p == nil {
		return "<none>"
	}
	var s []string
	for _, t := range p.Tasks {
		s = append(s, t.ID+"="+t.Status)
	}
	return p.Tool + ": " + strings.Join(s, ",")
}

func TestTaskPlan_ToolsChangeThePlanAndPublishIt(t *testing.T) {
	a1 := taskPlanner("Paris, after research.")
	res, evs := run(t, t.Context(), Options{Agents: agents(a1, answerThenVote("Paris.", "agent1")), Orchestrator: planningOn()})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	first := a1.requests()[0]
	var offered []string
	for _, tool := range first.Tools {
		offered = append(offered, tool.Name)
	}
	for _, name := range taskplan.Tools {
		if !slices.Contains(offered, name) {
			t.Errorf("%s not offered: %v", name, offered)
		}
	}
	if !strings.Contains(first.System, "create_task_plan early") {
		t.Errorf("the system prompt does not tell how to plan:\n%s", first.System)
	}
	// The cyclic plan was refused with the cycle named, and changed nothing.
	var refused []event.ToolResult
	for _, r := range ofType[event.ToolResult](evs) {
		if r.Agent == "a1" && r.IsError {
			refused = append(refused, r)
		}
	}
	if len(refused) != 1 || refused[0].CallID != "p1" || !strings.Contains(refused[0].Content, "circular dependency: r -> w -> r") {
		t.Fatalf("refused planning calls: %+v", refused)
	}
	var changes []string
	for _, p := range ofType[event.TaskPlanChanged](evs) {
		changes = append(changes, p.Agent+" "+planString(&p))
	}
	want := []string{"a1 create_task_plan: r=pending,w=pending", "a1 update_task_status: r=completed,w=pending"}
	if !slices.Equal(changes, want) {
		t.Errorf("plan changes = %q, want %q", changes, want)
	}
	if notes := lastPlan(evs, "a1").Tasks[0].Metadata["completion_notes"]; notes != "read up" {
		t.Errorf("completion notes = %v", notes)
	}
	// The completed task's result lists what it made ready.
	var upd map[string]any
	_ = json.Unmarshal([]byte(toolResult(a1.requests()[3], "p3")), &upd)
	if ready, _ := upd["newly_ready_tasks"].([]any); len(ready) != 1 {
		t.Errorf("update result: %v", upd)
	}
}

// Cut the log after any event and resume: each agent's plan is back as it stood, so the
// planner's later calls succeed on it, and the plan at the end is the whole run's.
func TestTaskPlan_SurvivesResume(t *testing.T) {
	team := func() []Agent {
		return agents(taskPlanner("Paris, after research."), answerThenVote("Paris.", "agent1"))
	}
	whole, evs := run(t, t.Context(), Options{Agents: team(), Orchestrator: planningOn()})
	want := planString(lastPlan(evs, "a1"))
	for cut := 1; cut < len(evs); cut++ {
		bus := event.NewBus(nil)
		bus.ResumeAt(int64(cut))
		rec := &recorder{}
		bus.Subscribe(rec)
		res := Run(t.Context(), Options{Agents: team(), Orchestrator: planningOn(), Bus: bus, Question: "What is the capital of France?",
			RetryDelay: func(int) time.Duration { return 0 }, Restore: &Restore{Events: evs[:cut], Previous: "killed"}})
		at := fmt.Sprintf("cut after event %d (%s)", cut, evs[cut-1].Payload.Type())
		all := append(slices.Clone(evs[:cut]), rec.all()...)
		if res.ExitCode != 0 || res.FinalAnswer != whole.FinalAnswer {
			t.Fatalf("%s: %+v", at, res)
		}
		if got := planString(lastPlan(all, "a1")); got != want {
			t.Errorf("%s: plan at the end = %s, want %s", at, got, want)
		}
		for _, r := range ofType[event.ToolResult](rec.all()) {
			if r.IsError && r.CallID != "p1" {
				t.Errorf("%s: %s failed after the resume: %s", at, r.Tool, r.Content)
			}
		}
	}
}

func TestTaskPlan_SeededPlanAndCap(t *testing.T) {
	seed := []taskplan.Task{{ID: "T1", Description: "Set up", Status: "pending", Priority: "high", Dependencies: []string{}},
		{ID: "T2", Description: "Build", Status: "pending", Priority: "medium", Dependencies: []string{"T1"}}}
	adder := &fake{next: func(n int, req provider.Request) step {
		switch {
		case req.Stage == provider.StagePresentation:
			return step{text: "done"}
		case toolResult(req, "x") == "":
			// One task past the bound: the seeded plan's 2, the config's 1, plus the room an
			// execution run keeps (DefaultMaxTasks) is 12.
			var tasks []string
			for k := range 12 {
				tasks = append(tasks, fmt.Sprintf(`{"description": "more %d"}`, k))
			}
			return planCall("x", taskplan.ToolCreate, `{"tasks": [`+strings.Join(tasks, ",")+`]}`)
		case toolResult(req, "y") == "":
			return planCall("y", taskplan.ToolUpdate, `{"task_id": "T1", "status": "in_progress"}`)
		case !hasOwnAnswer(req, "built"):
			return answer("built")
		}
		return vote(labels(req)[0], "ok")
	}}
	orch := config.Orchestrator{TaskPlanning: config.TaskPlanning{Enabled: true, MaxTasks: 1}}
	res, evs := run(t, t.Context(), Options{Agents: agents(adder, answerThenVote("also built", "agent1")), Orchestrator: orch, PlanSeed: seed})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	seeded := 0
	for _, p := range ofType[event.TaskPlanChanged](evs) {
		if p.Tool == event.PlanSeeded {
			seeded++
		}
	}
	if seeded != 2 {
		t.Errorf("%d agents seeded, want 2", seeded)
	}
	if got := toolResult(adder.requests()[1], "x"); !strings.Contains(got, "already exists with 2 tasks") {
		t.Errorf("create over the seeded plan: %s", got)
	}
	if got := planString(lastPlan(evs, "a1")); got != "update_task_status: T1=in_progress,T2=pending" {
		t.Errorf("a1's plan = %s", got)
	}
	if got := planString(lastPlan(evs, "a2")); got != "seed: T1=pending,T2=pending" {
		t.Errorf("a2's plan = %s", got)
	}
}

// A planning run's check refuses an answer without a plan; the model is told why and fixes it.
func TestCheckAnswer_RefusesAndTheModelFixes(t *testing.T) {
	a := &fake{next: func(n int, req provider.Request) step {
		switch {
		case req.Stage == provider.StagePresentation:
			return step{text: "PLAN"}
		case n == 1:
			return answer("no plan here")
		case !hasOwnAnswer(req, "PLAN ok"):
			return answer("PLAN ok")
		}
		return vote("agent1", "ok")
	}}
	check := func(s string) error {
		if !strings.HasPrefix(s, "PLAN") {
			return errors.New("the answer holds no project plan")
		}
		return nil
	}
	res, evs := run(t, t.Context(), Options{Agents: agents(a), CheckAnswer: check})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	if got := toolResult(a.requests()[1], "c1"); !strings.Contains(got, "answer rejected: the answer holds no project plan") {
		t.Errorf("feedback = %q", got)
	}
	if answers := ofType[event.AnswerSubmitted](evs); len(answers) != 1 || answers[0].Content != "PLAN ok" {
		t.Errorf("answers = %+v", answers)
	}
}

// persist_across_turns: personas of an earlier turn that cover the team are kept, with no
// call; a team they do not cover gets new ones.
func TestPersonas_KeptFromAnEarlierTurn(t *testing.T) {
	kept := []event.Persona{{Agent: "a1", Label: "agent1", Text: "a careful engineer"}, {Agent: "a2", Label: "agent2", Text: "a bold designer"}}
	orch := config.Orchestrator{PersonaGenerator: config.PersonaGenerator{Enabled: true, PersistAcrossTurns: true}}
	a1 := answerThenVote("Paris.", "agent1")
	_, evs := run(t, t.Context(), Options{Agents: agents(a1, answerThenVote("Paris!", "agent1")), Orchestrator: orch,
		Personas: kept, PersonasTurn: 1})
	pg := ofType[event.PersonasGenerated](evs)
	if len(pg) != 1 || pg[0].FromTurn != 1 || pg[0].Personas[1].Text != "a bold designer" {
		t.Fatalf("personas: %+v", pg)
	}
	for _, r := range a1.requests() {
		if r.Stage == provider.StagePersona {
			t.Fatalf("a persona call was made")
		}
	}
	if !strings.Contains(a1.requests()[0].System, "a careful engineer") {
		t.Errorf("the kept persona is not in the system prompt")
	}
	// A third agent the kept personas do not cover: new personas are written.
	_, evs = run(t, t.Context(), Options{Agents: agents(answerThenVote("Paris.", "agent1"), answerThenVote("Paris!", "agent1"), answerThenVote("P", "agent1")),
		Orchestrator: orch, Personas: kept, PersonasTurn: 1})
	if pg := ofType[event.PersonasGenerated](evs); len(pg) != 1 || pg[0].FromTurn != 0 {
		t.Errorf("personas for a changed team: %+v", pg)
	}
}
