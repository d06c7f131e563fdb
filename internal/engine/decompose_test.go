package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
)

// partsTeam is three scripted agents owning one part each; the last integrates them.
func partsTeam(hang int) []Agent {
	scripts := []config.Script{
		{Answers: []string{"Frontend: the page layout."}, StopSummary: "layout done"},
		{Answers: []string{"Backend: the API, first cut.", "Backend: the API, with tests."}, ImproveAfter: 3, StopSummary: "API done"},
		{Answers: []string{"Docs: how to run it."}, Final: "Integrated:\n{{parts}}", StopSummary: "docs done"},
	}
	subtasks := []string{"the page", "the API", "the docs"}
	out := make([]Agent, len(scripts))
	for i, s := range scripts {
		if i == hang {
			s.Faults = []config.Fault{{Kind: config.FaultHang}}
		}
		out[i] = Agent{ID: fmt.Sprintf("a%d", i+1), Backend: "scripted", Subtask: subtasks[i], Provider: scripted.New(s, "scripted")}
	}
	return out
}

var decompose = config.Orchestrator{CoordinationMode: config.ModeDecomposition}

func TestDecomposition_EveryPartIntegrated(t *testing.T) {
	res, evs := run(t, t.Context(), Options{Agents: partsTeam(-1), Orchestrator: decompose})
	if res.ExitCode != 0 || res.Winner != "a3" || res.EndReason != event.EndAllStopped {
		t.Fatalf("result %+v", res)
	}
	for _, part := range []string{"Frontend: the page layout.", "Backend: the API, with tests.", "Docs: how to run it."} {
		if !strings.Contains(res.FinalAnswer, part) {
			t.Errorf("the final answer lacks %q:\n%s", part, res.FinalAnswer)
		}
	}
	if strings.Contains(res.FinalAnswer, "Incomplete") {
		t.Errorf("every part finished, yet the answer says:\n%s", res.FinalAnswer)
	}
	if n := len(ofType[event.VoteCast](evs)); n != 0 {
		t.Errorf("%d votes in decomposition mode", n)
	}
	stops := ofType[event.AgentStopped](evs)
	if len(stops) < 3 {
		t.Errorf("stops: %+v", stops)
	}
	parts := ofType[event.PartsIntegrated](evs)
	if len(parts) != 1 || len(parts[0].Parts) != 3 || len(parts[0].Unfinished()) != 0 {
		t.Fatalf("parts: %+v", parts)
	}
	for _, p := range parts[0].Parts {
		if p.Status != event.PartComplete {
			t.Errorf("part %s: %s", p.Label, p.Status)
		}
	}
	assigned := ofType[event.SubtasksAssigned](evs)
	if len(assigned) != 1 || assigned[0].Subtasks[1].Text != "the API" || assigned[0].Subtasks[1].Source != event.SubtaskConfig {
		t.Errorf("subtasks: %+v", assigned)
	}
	// The agents were offered stop, never vote, and told their own subtask.
	for _, e := range ofType[event.ModelCalled](evs) {
		if e.Fresh && e.Stage != provider.StagePresentation && !strings.Contains(e.System, "YOUR SUBTASK") {
			t.Errorf("%s's system prompt names no subtask:\n%s", e.Agent, e.System)
		}
	}
}

// An agent that never stops is cut by the session timeout: its part is named unfinished in
// the final answer, which still integrates the others.
func TestDecomposition_TimedOutPartIsNamed(t *testing.T) {
	res, evs := run(t, t.Context(), Options{Agents: partsTeam(1), Orchestrator: decompose,
		Timeouts: config.Timeouts{Orchestrator: 300 * time.Millisecond, Agent: time.Minute}})
	if res.ExitCode != 3 || res.EndReason != event.EndTimeout {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(res.FinalAnswer, "Incomplete: agent2 (the session timed out before it stopped)") ||
		!strings.Contains(res.FinalAnswer, "Frontend: the page layout.") || !strings.Contains(res.FinalAnswer, "Docs: how to run it.") {
		t.Fatalf("final answer:\n%s", res.FinalAnswer)
	}
	parts := ofType[event.PartsIntegrated](evs)
	if len(parts) != 1 || parts[0].Parts[1].Status != event.PartUnfinished {
		t.Fatalf("parts: %+v", parts)
	}
}

// The task decomposer writes the subtasks of agents without one, in one call before
// coordination; a reply it cannot read gives built-in ones, and says so.
func TestDecomposition_DecomposerAssignsMissingSubtasks(t *testing.T) {
	team := partsTeam(-1)
	team[0].Subtask, team[2].Subtask = "", ""
	_, evs := run(t, t.Context(), Options{Agents: team, Orchestrator: decompose})
	assigned := ofType[event.SubtasksAssigned](evs)
	if len(assigned) != 1 || assigned[0].Warning != "" {
		t.Fatalf("subtasks: %+v", assigned)
	}
	want := []string{event.SubtaskDecomposer, event.SubtaskConfig, event.SubtaskDecomposer}
	for i, st := range assigned[0].Subtasks {
		if st.Source != want[i] || st.Text == "" {
			t.Errorf("subtask %d: %+v", i, st)
		}
	}
	calls := 0
	for _, e := range ofType[event.ModelCalled](evs) {
		if e.Stage == provider.StageDecompose {
			calls++
			if !strings.Contains(e.Messages[0].Content, "agent2 (general-purpose agent) already owns: the API") {
				t.Errorf("the decomposer was not told the configured subtask:\n%s", e.Messages[0].Content)
			}
		}
	}
	if calls != 1 {
		t.Errorf("%d decomposer calls", calls)
	}

	silent := &fake{next: func(int, provider.Request) step { return step{text: "no idea"} }}
	team = partsTeam(-1)
	team[0] = Agent{ID: "a1", Backend: "fake", Provider: silent}
	team[0].Subtask, team[2].Subtask = "", ""
	_, evs = run(t, t.Context(), Options{Agents: team, Orchestrator: decompose, Timeouts: config.Timeouts{Orchestrator: 200 * time.Millisecond}})
	assigned = ofType[event.SubtasksAssigned](evs)
	if len(assigned) != 1 || !strings.Contains(assigned[0].Warning, "agent1, agent3") || assigned[0].Subtasks[0].Source != event.SubtaskFallback {
		t.Fatalf("fallback subtasks: %+v", assigned)
	}
}

// Resuming a decomposition session from any event of its log (kill -9) ends with every part
// integrated, no answer accepted twice, and the subtasks as first assigned.
func TestDecomposition_ResumeFromEveryEvent(t *testing.T) {
	whole, evs := run(t, t.Context(), Options{Agents: partsTeam(-1), Orchestrator: decompose})
	if whole.ExitCode != 0 {
		t.Fatalf("whole run: %+v", whole)
	}
	for cut := 1; cut < len(evs); cut++ {
		rec := &recorder{}
		bus := event.NewBus(nil)
		bus.ResumeAt(int64(cut))
		bus.Subscribe(rec)
		res := Run(t.Context(), Options{Agents: partsTeam(-1), Orchestrator: decompose, Bus: bus, Question: "What is the capital of France?",
			RetryDelay: func(int) time.Duration { return 0 }, Restore: &Restore{Events: evs[:cut], Previous: "killed"}})
		at := fmt.Sprintf("cut after event %d (%s)", cut, evs[cut-1].Payload.Type())
		if res.ExitCode != 0 || res.Winner != whole.Winner || res.FinalAnswer != whole.FinalAnswer {
			t.Fatalf("%s: %+v, want %q", at, res, whole.FinalAnswer)
		}
		before := map[string]bool{}
		assigned := false
		for _, e := range evs[:cut] {
			switch p := e.Payload.(type) {
			case event.AnswerSubmitted:
				before[p.Content] = true
			case event.SubtasksAssigned:
				assigned = true
			}
		}
		got := rec.all()
		for _, a := range ofType[event.AnswerSubmitted](got) {
			if before[a.Content] {
				t.Fatalf("%s: %q accepted again", at, a.Content)
			}
		}
		if again := len(ofType[event.SubtasksAssigned](got)); assigned && again > 0 || !assigned && again != 1 {
			t.Fatalf("%s: subtasks assigned %d times after the resume", at, again)
		}
	}
}
