package readmodel

import (
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// a1 answers fast (0-1 s) and waits; a2 answers slowly (0-3 s); a1, woken by a2's answer,
// calls a tool (call 3-3.5 s, tool 3.5-4 s) and votes (4-4.05 s), and a2 presents (4.1-5 s).
// By hand the path is a2's answer, a1's three steps, the presentation: 3 + 0.5 + 0.5 + 0.05 +
// 0.9 = 4.95 s of the 5 s wall; a1's first call is not on it.
func TestCriticalPath(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	s := NewState()
	for _, e := range []struct {
		t float64
		p event.Payload
	}{
		{0, event.SessionStarted{Agents: []event.AgentInfo{{ID: "a1"}, {ID: "a2"}}}},
		{0, event.ModelCalled{Agent: "a1", Stage: provider.StageInitial}},
		{0, event.ModelCalled{Agent: "a2", Stage: provider.StageInitial}},
		{0.5, event.TextDelta{Agent: "a1", Text: "x"}},
		{1, event.UsageReported{Agent: "a1"}},
		{1, event.AnswerSubmitted{Agent: "a1", Label: "agent1.1", Version: 1}},
		{3, event.UsageReported{Agent: "a2"}},
		{3, event.AnswerSubmitted{Agent: "a2", Label: "agent2.1", Version: 2}},
		{3, event.ModelCalled{Agent: "a1", Stage: provider.StageEnforcement}},
		{3.5, event.UsageReported{Agent: "a1"}},
		{4, event.ToolResult{Agent: "a1", Tool: "read_file", DurationMS: 500}},
		{4, event.ModelCalled{Agent: "a1", Stage: provider.StageEnforcement}},
		{4.05, event.VoteCast{Agent: "a1", TargetLabel: "agent2", Version: 2}},
		{4.1, event.ModelCalled{Agent: "a2", Stage: provider.StagePresentation}},
		{5, event.FinalAnswer{Agent: "a2"}},
		{5, event.SessionEnded{}},
	} {
		s.Apply(event.Event{Time: at(e.t), Payload: e.p})
	}
	cp := s.CriticalPath(at(5))
	var got []string
	for _, st := range cp.Steps {
		got = append(got, st.Agent+" "+st.Kind+" "+st.Name)
	}
	want := []string{"a2 model initial_answer", "a1 model enforcement", "a1 tool read_file", "a1 model enforcement", "a2 model presentation"}
	if len(got) != len(want) {
		t.Fatalf("path %v, want %v", got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("path %v, want %v", got, want)
		}
	}
	if cp.Wall != 5*time.Second || cp.Path.Round(time.Millisecond) != 4950*time.Millisecond || cp.Calls != 6 {
		t.Errorf("wall %v path %v calls %d; want 5s 4.95s 6", cp.Wall, cp.Path, cp.Calls)
	}
}

// The path names each step by what it led to, as the dashboard's votes and answers do: an
// answer by its label, a vote, a vote that came too late (stale), a refused second answer,
// the final answer; a presentation round that led to no answer yet is a presentation call.
func TestCriticalPath_NamesSteps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	s := NewState()
	for _, e := range []struct {
		t float64
		p event.Payload
	}{
		{0, event.SessionStarted{Agents: []event.AgentInfo{{ID: "r"}, {ID: "h"}}}},
		{0, event.ModelCalled{Agent: "r", Stage: provider.StageInitial}},
		{1, event.AnswerSubmitted{Agent: "r", Label: "agent1.1", Version: 1}},
		{1, event.ModelCalled{Agent: "r", Stage: provider.StageInitial}},
		{2, event.VoteIgnored{Agent: "r", TargetLabel: "agent2", SeenVersion: 1, CurrentVersion: 2}},
		{2, event.ModelCalled{Agent: "r", Stage: provider.StageInitial}},
		{3, event.ToolRejected{Agent: "r", Tool: "new_answer", Error: "you have reached the maximum of 1 answers"}},
		{3, event.ModelCalled{Agent: "r", Stage: provider.StageEnforcement}},
		{4, event.VoteCast{Agent: "r", TargetLabel: "agent1", AnswerLabel: "agent1.1", Version: 2}},
		{4, event.ModelCalled{Agent: "r", Stage: provider.StagePresentation}},
		{4.8, event.ToolCalled{Agent: "r", Call: provider.ToolCall{Name: "read_file"}}},
		{5, event.ToolResult{Agent: "r", Tool: "read_file", DurationMS: 100}},
		{5.1, event.ModelCalled{Agent: "r", Stage: provider.StagePresentation}},
		{6, event.FinalAnswer{Agent: "r"}},
		{6, event.SessionEnded{}},
	} {
		s.Apply(event.Event{Time: at(e.t), Payload: e.p})
	}
	cp := s.CriticalPath(at(6))
	var got []string
	for _, st := range cp.Steps {
		got = append(got, st.What())
	}
	want := []string{"agent1.1", "stale vote for agent2", "r's refused new_answer", "vote for agent1.1", "r's presentation call", "r ran read_file", "final answer"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("steps\n got  %q\n want %q", got, want)
	}
	if sum := cp.Summary(); !strings.Contains(sum, "stale vote for agent2 at +2.0s → r's refused new_answer at +3.0s") {
		t.Errorf("summary: %s", sum)
	}
}
