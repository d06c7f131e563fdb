package readmodel

import (
	"testing"

	"massgen/internal/event"
)

// The parts fold: subtasks, a stop, the stop undone by another's answer, a stale stop, and
// the parts' statuses at the end.
func TestState_Parts(t *testing.T) {
	st := NewState()
	seq := int64(0)
	apply := func(p event.Payload) {
		seq++
		st.Apply(event.Event{Seq: seq, Payload: p})
	}
	apply(event.SessionStarted{Agents: []event.AgentInfo{{ID: "ui", Label: "agent1"}, {ID: "api", Label: "agent2"}},
		Settings: event.Settings{CoordinationMode: "decomposition"}})
	apply(event.SubtasksAssigned{Subtasks: []event.Subtask{{Agent: "ui", Label: "agent1", Text: "The page.", Source: event.SubtaskConfig},
		{Agent: "api", Label: "agent2", Text: "The API.", Source: event.SubtaskDecomposer}}})
	ui, api := st.Agent("ui"), st.Agent("api")
	if ui.Part == nil || ui.Part.Subtask != "The page." || api.Part.Source != event.SubtaskDecomposer || ui.Part.Status != PartWorking {
		t.Fatalf("parts %+v %+v", ui.Part, api.Part)
	}
	apply(event.AnswerSubmitted{Agent: "ui", Label: "agent1.1", Content: "page", Version: 1})
	apply(event.AgentStopped{Agent: "ui", Label: "agent1", Summary: "page done", Status: event.PartComplete, Version: 1})
	if ui.Status != StatusStopped || ui.Part.Status != event.PartComplete || ui.Part.Summary != "page done" {
		t.Fatalf("after the stop: %s %+v", ui.Status, ui.Part)
	}
	apply(event.AnswerSubmitted{Agent: "api", Label: "agent2.1", Content: "api", Version: 2})
	if ui.Status != StatusRestarting || ui.Part.Status != PartWorking || ui.Restarts != 1 {
		t.Fatalf("a new answer did not wake the stopped part: %s %+v", ui.Status, ui.Part)
	}
	apply(event.AgentStopped{Agent: "api", Label: "agent2", Summary: "x", Status: event.PartComplete, Version: 1, Stale: true})
	if api.Part.Status != PartWorking || api.Status != StatusRestarting {
		t.Fatalf("a stale stop counted: %s %+v", api.Status, api.Part)
	}
	apply(event.PartsIntegrated{Presenter: "api", Parts: []event.PartStatus{{Agent: "ui", Label: "agent1", Status: event.PartComplete},
		{Agent: "api", Label: "agent2", Status: event.PartUnfinished, Why: "the session timed out before it stopped"}},
		Conflicts: []event.FileConflict{{Path: "README.md", Kept: "agent1", Copies: map[string]string{"agent2": "README.md.from-agent2"}}}})
	if api.Part.Status != event.PartUnfinished || st.Integrated == nil || len(st.Integrated.Unfinished()) != 1 {
		t.Fatalf("end: %+v %+v", api.Part, st.Integrated)
	}
}
