package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/taskplan"
)

// planSteps is an agent that makes steps in order, one per model call whatever the
// conversation holds (a failed turn's reset does not make it start over), then votes.
func planSteps(steps ...step) *fake {
	return &fake{next: func(n int, req provider.Request) step {
		if req.Stage == provider.StagePresentation {
			return step{text: "FINAL"}
		}
		if n <= len(steps) {
			return steps[n-1]
		}
		return vote(labels(req)[0], "fine")
	}}
}

// planChanges are the agent's plan changes in the log, in order.
func planChanges(evs []event.Event, agent string) []string {
	var out []string
	for _, p := range ofType[event.TaskPlanChanged](evs) {
		if p.Agent == agent {
			out = append(out, planString(&p))
		}
	}
	return out
}

// TestCoordinator_TaskPlanTravelsWithTheConversation: driven remotely (each turn on a replica
// rebuilt from the ops, conversations through JSON), an agent's plan made in one turn is there
// in its next one, after a successful turn and after a failed one (whose conversation is
// reset), and an execution run's seeded plan reaches the turns; every change is published once,
// as Run publishes it.
func TestCoordinator_TaskPlanTravelsWithTheConversation(t *testing.T) {
	seed := []taskplan.Task{{ID: "T1", Description: "Set up", Status: "pending", Priority: "high", Dependencies: []string{}},
		{ID: "T2", Description: "Build", Status: "pending", Priority: "medium", Dependencies: []string{"T1"}}}
	tests := []struct {
		name  string
		seed  []taskplan.Task
		steps []step
		want  []string // a1's plan changes
	}{
		{"a failed turn keeps the plan", nil, []step{
			planCall("p1", taskplan.ToolCreate, `{"tasks": [{"id": "r", "description": "Research"}, {"id": "w", "description": "Write", "depends_on": ["r"]}]}`),
			{err: errors.New("connection reset")},
			planCall("p2", taskplan.ToolUpdate, `{"task_id": "r", "status": "completed"}`),
			answer("Planned and done."),
		}, []string{"create_task_plan: r=pending,w=pending", "update_task_status: r=completed,w=pending"}},
		{"the next turn has the seeded plan as the last one left it", seed, []step{
			planCall("p1", taskplan.ToolUpdate, `{"task_id": "T1", "status": "in_progress"}`),
			answer("Set up."),
			planCall("p2", taskplan.ToolUpdate, `{"task_id": "T1", "status": "completed"}`),
		}, []string{"seed: T1=pending,T2=pending", "update_task_status: T1=in_progress,T2=pending", "update_task_status: T1=completed,T2=pending"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mk := func() Options {
				return Options{Question: "Plan it.", Agents: agents(planSteps(tt.steps...), answerThenVote("Paris.", "agent1")),
					Orchestrator: config.Orchestrator{TaskPlanning: config.TaskPlanning{Enabled: true}}, PlanSeed: tt.seed,
					RetryDelay: func(int) time.Duration { return 0 }}
			}
			_, local := run(t, t.Context(), mk())
			res, driven := drive(t, mk(), nil)
			if res.ExitCode != 0 {
				t.Fatalf("driven: %+v", res)
			}
			for _, r := range ofType[event.ToolResult](driven) {
				if r.Agent == "a1" && r.IsError {
					t.Errorf("driven: %s %s failed: %s", r.CallID, r.Tool, r.Content)
				}
			}
			got := planChanges(driven, "a1")
			if !slices.Equal(got, tt.want) {
				t.Errorf("driven: a1's plan changes %q, want %q", got, tt.want)
			}
			if l := planChanges(local, "a1"); !slices.Equal(l, tt.want) {
				t.Errorf("Run: a1's plan changes %q, want %q", l, tt.want)
			}
			wantSeeds := 0
			if tt.seed != nil {
				wantSeeds = 1
			}
			if got := planChanges(driven, "a2"); len(got) != wantSeeds {
				t.Errorf("driven: a2's plan changes %q, want %d seeded", got, wantSeeds)
			}
			if got := count(driven, "agent_error"); tt.seed == nil && got != 1 {
				t.Errorf("driven: %d failed turns, want 1", got)
			}
		})
	}
}

// The plan rides in the conversation as JSON, tasks whole: a plan made of every field a task
// holds comes back equal, and no plan (planning off) stays nil.
func TestConversation_PlanRoundTrips(t *testing.T) {
	p := &taskplan.Plan{Tasks: []taskplan.Task{{ID: "a", Description: "A", Status: taskplan.Completed, Priority: "high",
		Dependencies: []string{}, Chunk: "C01", Metadata: map[string]any{"completion_notes": "done"}},
		{ID: "b", Description: "B", Status: taskplan.Pending, Priority: "low", Dependencies: []string{"a"}}}}
	back := viaJSON(t, Conversation{Plan: p})
	if fmt.Sprint(back.Plan) != fmt.Sprint(p) {
		t.Errorf("plan after the trip %+v, want %+v", back.Plan, p)
	}
	if viaJSON(t, Conversation{}).Plan != nil {
		t.Error("no plan came back as one")
	}
}
