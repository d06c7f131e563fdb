package coord

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"massgen/internal/criteria"
)

// MassGen's ChecklistGate, computed by hand from its formulas (system_prompt_sections.py):
// effective = T + 2 when remaining <= 2, + 1 when remaining/total <= 0.4, - 1 when >= 0.7;
// required = max(floor, n - round(span*et/10)) with floor = ceil(n/2), span = n - floor;
// cutoff = max(4, int(10 - et/2)).
func TestGateFor(t *testing.T) {
	for _, tc := range []struct {
		threshold, remaining, total, items int
		want                               Gate
	}{
		{5, 5, 5, 4, Gate{4, 3, 8}},   // ample budget: 5-1; 4 - round(0.8); int(8.0)
		{5, 4, 5, 4, Gate{4, 3, 8}},   // 0.8 >= 0.7
		{5, 3, 5, 4, Gate{5, 3, 7}},   // 0.6: no change; 4 - round(1.0); int(7.5)
		{5, 2, 5, 4, Gate{7, 3, 6}},   // remaining <= 2: 5+2; 4 - round(1.4); int(6.5)
		{5, 0, 5, 4, Gate{7, 3, 6}},   // exhausted
		{0, 5, 5, 4, Gate{0, 4, 10}},  // clamped at 0: every item, score 10
		{10, 1, 5, 4, Gate{10, 2, 5}}, // clamped at 10: the floor
		{5, 3, 5, 3, Gate{5, 3, 7}},   // n=3: floor 2, span 1, round(0.5) = 0 (half to even)
		{3, 10, 10, 6, Gate{2, 5, 9}}, // n=6: floor 3, span 3, round(0.6) = 1
		{5, 3, 5, 6, Gate{5, 4, 7}},   // n=6: round(1.5) = 2 (half to even)
	} {
		got := GateFor(tc.threshold, tc.remaining, tc.total, tc.items)
		if got != tc.want {
			t.Errorf("GateFor(%d, %d, %d, %d) = %+v, want %+v", tc.threshold, tc.remaining, tc.total, tc.items, got, tc.want)
		}
	}
}

func gatedMachine(agents int, cs ChecklistSettings) *Machine {
	if cs.Criteria == nil {
		cs.Criteria = criteria.Default()
	}
	cs.Threshold = 5 // MassGen's default
	return New(Settings{Agents: agents, Checklist: &cs})
}

func answer(t *testing.T, m *Machine, i int, text string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"content": text})
	if out := m.Resolve(i, []Call{{ID: "a", Name: ToolNewAnswer, Arguments: string(args)}}, "", m.Version()); out.Kind != Answered {
		t.Fatalf("answer of agent%d: %+v", i+1, out)
	}
}

func vote(m *Machine, i int, label string) Outcome {
	return m.Resolve(i, []Call{{ID: "v", Name: ToolVote, Arguments: `{"agent_id": "` + label + `", "reason": "r"}`}}, "", m.Version())
}

func scores(per map[string][]int) ChecklistArgs {
	out := map[string]map[string]any{}
	for label, s := range per {
		e := map[string]any{}
		for k, n := range s {
			e["E"+string(rune('1'+k))] = map[string]any{"score": n, "reasoning": "why"}
		}
		out[label] = e
	}
	b, _ := json.Marshal(out)
	return ChecklistArgs{Scores: b}
}

func TestSubmitChecklist_VerdictAndVoteGate(t *testing.T) {
	m := gatedMachine(2, ChecklistSettings{MaxCallsPerRound: 1})
	answer(t, m, 0, "long and wrong")
	answer(t, m, 1, "right")
	if out := vote(m, 0, "agent1"); out.Kind != Retry || !strings.Contains(out.Feedback[0].Error, "submit_checklist") {
		t.Fatalf("vote without a checklist: %+v", out)
	}
	both := []int{0, 1}
	// The gate with 1 answer of 5 used: effective 4, required 3, cutoff 8.
	out := m.SubmitChecklist(0, scores(map[string][]int{"agent1": {2, 10, 10, 10}, "agent2": {9, 8, 8, 6}}), both, m.Version(), "")
	if out.Error != "" {
		t.Fatal(out.Error)
	}
	ck := out.Checklist
	// agent1 totals 32, agent2 31: MassGen's total ranking would pick agent1; correctness
	// (E1, primary) first picks agent2, which passes E1-E3 (>= 8): 3 of 4, the required 3.
	if ck.BestLabel != "agent2" || ck.Verdict != VerdictVote || ck.Gate != (Gate{4, 3, 8}) {
		t.Fatalf("checklist %+v", ck)
	}
	if out := vote(m, 0, "agent1"); out.Kind != Retry || !strings.Contains(out.Feedback[0].Error, "ranked agent2 best") {
		t.Fatalf("vote for the answer the checklist did not rank best: %+v", out)
	}
	if out := vote(m, 0, "agent2"); out.Kind != Voted {
		t.Fatalf("vote for the best: %+v", out)
	}
	// agent2 scores the best answer below the bar: new_answer; its vote is refused.
	out = m.SubmitChecklist(1, scores(map[string][]int{"agent1": {2, 9, 9, 9}, "agent2": {9, 7, 7, 7}}), both, m.Version(), "")
	if out.Error != "" || out.Checklist.Verdict != VerdictNewAnswer || !strings.Contains(out.Checklist.Explanation, "E2, E3, E4") {
		t.Fatalf("below the bar: %+v", out)
	}
	if out := vote(m, 1, "agent2"); out.Kind != Retry || !strings.Contains(out.Feedback[0].Error, "verdict is new_answer") {
		t.Fatalf("vote against the verdict: %+v", out)
	}
	// One accepted checklist per round; the next round (or new answers) allows another.
	if out := m.SubmitChecklist(1, scores(map[string][]int{"agent1": {9, 9, 9, 9}, "agent2": {9, 9, 9, 9}}), both, m.Version(), ""); !strings.Contains(out.Error, "already called 1 time") {
		t.Fatalf("second checklist in a round: %+v", out)
	}
	answer(t, m, 1, "right, and explained")
	if out := vote(m, 0, "agent2"); out.Kind != Retry || !strings.Contains(out.Feedback[0].Error, "answers changed") {
		t.Fatalf("vote on a stale checklist: %+v", out)
	}
	if out := m.SubmitChecklist(0, scores(map[string][]int{"agent1": {2, 9, 9, 9}, "agent2": {9, 9, 9, 9}}), both, m.Version(), ""); out.Error != "" {
		t.Fatalf("recheck after new answers: %s", out.Error)
	}
}

func TestSubmitChecklist_Validation(t *testing.T) {
	m := gatedMachine(3, ChecklistSettings{RequireReport: true})
	if out := m.SubmitChecklist(0, scores(nil), nil, 0, ""); !strings.Contains(out.Error, "before your first answer") {
		t.Fatalf("before the first answer: %+v", out)
	}
	answer(t, m, 0, "a")
	answer(t, m, 1, "b")
	both := []int{0, 1}
	report := strings.Repeat("agent1 misses the edge case; agent2 ", 4)
	for _, tc := range []struct {
		name   string
		args   ChecklistArgs
		report string
		want   string
	}{
		{"not an object", ChecklistArgs{Scores: json.RawMessage(`[1]`)}, report, `"scores" must be a JSON object`},
		{"flat with two answers", ChecklistArgs{Scores: json.RawMessage(`{"E1": 9, "E2": 9, "E3": 9, "E4": 9}`)}, report, "score every one of them"},
		{"unknown label", scores(map[string][]int{"agent1": {9, 9, 9, 9}, "agent3": {9, 9, 9, 9}}), report, `"agent3" is not an answer you can score`},
		{"missing answer", scores(map[string][]int{"agent1": {9, 9, 9, 9}}), report, "missing scores for agent2"},
		{"missing criterion", scores(map[string][]int{"agent1": {9, 9, 9}, "agent2": {9, 9, 9, 9}}), report, "agent1: missing scores for E4"},
		{"out of range", scores(map[string][]int{"agent1": {9, 9, 9, 11}, "agent2": {9, 9, 9, 9}}), report, "a score is a number from 0 to 10"},
		{"no report", scores(map[string][]int{"agent1": {9, 9, 9, 9}, "agent2": {9, 9, 9, 9}}), "", "no gap report was given"},
		{"short report", scores(map[string][]int{"agent1": {9, 9, 9, 9}, "agent2": {9, 9, 9, 9}}), "fine", "too short"},
		{"answer labels", scores(map[string][]int{"agent1.1": {9, 9, 9, 9}, "agent2.1": {9, 9, 9, 9}}), report, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := m.SubmitChecklist(0, tc.args, both, m.Version(), tc.report)
			if tc.want == "" && out.Error != "" || !strings.Contains(out.Error, tc.want) {
				t.Errorf("error %q, want %q", out.Error, tc.want)
			}
		})
	}
}

// An agent that cannot answer again gets a vote verdict whatever its scores (MassGen: "If
// budget remaining == 0 -> call vote regardless").
func TestSubmitChecklist_ForcedVote(t *testing.T) {
	cs := ChecklistSettings{Criteria: criteria.Default(), Threshold: 5}
	m := New(Settings{Agents: 2, MaxNewAnswersPerAgent: 1, Checklist: &cs})
	answer(t, m, 0, "a")
	answer(t, m, 1, "b")
	out := m.SubmitChecklist(0, scores(map[string][]int{"agent1": {1, 1, 1, 1}, "agent2": {3, 1, 1, 1}}), []int{0, 1}, m.Version(), "")
	if ck := out.Checklist; out.Error != "" || ck.Verdict != VerdictVote || !ck.Forced || ck.BestLabel != "agent2" {
		t.Fatalf("forced: %+v", out)
	}
	if out := vote(m, 0, "agent2"); out.Kind != Voted {
		t.Fatalf("vote: %+v", out)
	}
}

func TestParseChecklistArgs_ScoresAsString(t *testing.T) {
	a, err := ParseChecklistArgs(`{"scores": "{\"E1\": 9}", "report": "r"}`)
	if err != nil || string(a.Scores) != `{"E1": 9}` || a.Report != "r" {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := ParseChecklistArgs(`{"scores": `); err == nil {
		t.Fatal("bad JSON accepted")
	}
}

// A log's checklists are restored only into a state they fit: a gated machine, agents and
// labels of the session, a verdict the protocol gives.
func TestRestore_Checklists(t *testing.T) {
	ans := []Answer{{Agent: 0, Label: "agent1.1", Content: "x", Version: 1}}
	scores := []AnswerScores{{Label: "agent1", TrueCount: 4, Total: 40, Primary: 10}}
	for _, tc := range []struct {
		name  string
		gated bool
		cks   map[int]Checklist
		want  string
	}{
		{"ok", true, map[int]Checklist{1: {Version: 1, Verdict: VerdictVote, Scores: scores}}, ""},
		{"not gated", false, map[int]Checklist{1: {Version: 1, Verdict: VerdictVote, Scores: scores}}, "not checklist_gated"},
		{"no such agent", true, map[int]Checklist{5: {Version: 1, Verdict: VerdictVote, Scores: scores}}, "agent 6 of 2"},
		{"future version", true, map[int]Checklist{1: {Version: 2, Verdict: VerdictVote, Scores: scores}}, "past the 1 accepted"},
		{"bad label", true, map[int]Checklist{1: {Version: 1, Verdict: VerdictVote, Scores: []AnswerScores{{Label: "agent9"}}}}, `scores "agent9"`},
		{"vote on nothing", true, map[int]Checklist{1: {Version: 1, Verdict: VerdictVote}}, `verdict "vote" on 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Settings{Agents: 2})
			if tc.gated {
				m = gatedMachine(2, ChecklistSettings{})
			}
			err := m.Restore(Restored{Answers: ans, Checklists: tc.cks})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c, ok := m.LastChecklist(1); !ok || c.BestLabel != "agent1" || !slices.Equal(c.Best, []int{0}) {
					t.Errorf("restored checklist %+v, %v", c, ok)
				}
				if why := m.checklistBlocksVote(1, 0, 1); why != "" {
					t.Errorf("the restored checklist does not allow its vote: %s", why)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
