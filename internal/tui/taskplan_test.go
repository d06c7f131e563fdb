package tui

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

// An agent's task plan shows in its column as one line, updated with every change.
func TestApply_TaskPlanLine(t *testing.T) {
	s := started(2).
		add(ms, event.TurnStarted{Agent: "alice", Fresh: true}).
		add(ms, event.TaskPlanChanged{Agent: "alice", Tool: "create_task_plan", Tasks: []event.PlanTask{
			{ID: "r", Description: "Research the options", Status: "pending"},
			{ID: "w", Description: "Write it up", Status: "pending", Dependencies: []string{"r"}}}})
	if v := screenText(newModel(160, 40, s.events)); !strings.Contains(v, "☰ plan 0/2 done; now: Research the options") {
		t.Errorf("no plan line:\n%s", v)
	}
	s.add(ms, event.TaskPlanChanged{Agent: "alice", Tool: "update_task_status", Tasks: []event.PlanTask{
		{ID: "r", Description: "Research the options", Status: "completed"},
		{ID: "w", Description: "Write it up", Status: "in_progress", Dependencies: []string{"r"}}}})
	v := screenText(newModel(160, 40, s.events))
	if !strings.Contains(v, "☰ plan 1/2 done; now: Write it up") {
		t.Errorf("plan line not updated:\n%s", v)
	}
	if strings.Count(v, "☰ plan") != 1 {
		t.Errorf("bob, without a plan, shows one:\n%s", v)
	}
}
