package eval

import "testing"

// Under lazy start an agent may never run (the first agreed), or join and vote for an answer it
// agrees with instead of writing its own: the first is left out of the figures, the second's
// vote is graded as its answer.
func TestSummarize_LazyStart(t *testing.T) {
	items := []Item{
		{ID: "agreed", Grader: GraderNumeric, Answers: []string{"42"}, Tolerance: DefaultTolerance},
		{ID: "split", Grader: GraderNumeric, Answers: []string{"42"}, Tolerance: DefaultTolerance},
	}
	recs := map[string]Record{
		"agreed": {ID: "agreed", Status: StatusOK, Final: "42", Calls: 3, Agents: []AgentRecord{
			{ID: "a", Answers: []string{"The answer is 42."}, Calls: 2},
			{ID: "b", Endorsed: "The answer is 42.", Calls: 1},
			{ID: "c"}, // never needed
		}},
		"split": {ID: "split", Status: StatusOK, Final: "41", Calls: 6, Agents: []AgentRecord{
			{ID: "a", Answers: []string{"The answer is 41."}, Calls: 2},
			{ID: "b", Answers: []string{"The answer is 42."}, Calls: 2},
			{ID: "c", Answers: []string{"The answer is 41."}, Calls: 1},
		}},
	}
	s := Summarize(items, recs)
	if s.Agreement.N != 1 || s.Majority.N != 1 {
		t.Errorf("agreement %+v, majority %+v: want the agreed item agreed and right", s.Agreement, s.Majority)
	}
	for _, a := range s.Agents {
		want := map[string][2]int{"a": {1, 2}, "b": {2, 2}, "c": {0, 1}}[a.ID]
		if a.First.N != want[0] || a.First.Of != want[1] {
			t.Errorf("%s: first %d/%d, want %d/%d", a.ID, a.First.N, a.First.Of, want[0], want[1])
		}
	}
}
