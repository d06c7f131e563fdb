package coord

import (
	"slices"
	"strings"
	"testing"
)

func TestCandidates(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Result
		want []int
	}{
		{"no answer", Result{Winner: -1}, nil},
		{"winner first, then by score, ties in agent order, at most 3",
			Result{Winner: 2, Tally: []Count{{Agent: 0, points: 1}, {Agent: 1, points: 3}, {Agent: 2, points: 3}, {Agent: 3, points: 1}, {Agent: 4, points: 2}}},
			[]int{2, 1, 4}},
		{"no votes: agent order", Result{Winner: 0, Tally: []Count{{Agent: 0}, {Agent: 1}}}, []int{0, 1}},
	} {
		if got := c.r.Candidates(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The candidates of a real machine start with its winner.
func TestCandidates_StartWithWinner(t *testing.T) {
	m := New(Settings{Agents: 3})
	for i := range 3 {
		mustAnswer(t, m, i, "answer "+Label(i))
	}
	mustVote(t, m, 0, "agent3")
	mustVote(t, m, 1, "agent3")
	mustVote(t, m, 2, "agent2")
	r := m.Winner()
	if got := r.Candidates(); !slices.Equal(got, []int{2, 1, 0}) {
		t.Errorf("candidates = %v, want [2 1 0]", got)
	}
}

func TestReadVerdict(t *testing.T) {
	for _, c := range []struct {
		reply          string
		pass, readable bool
		reason         string
	}{
		{`{"verdict": "pass", "reason": "right"}`, true, true, "right"},
		{"```json\n{\"verdict\": \"FAIL\", \"reason\": \"2+2 is 4\"}\n```", false, true, "2+2 is 4"},
		{`{"verdict": "fail"}`, false, true, "the verifier gave no reason"},
		{`{"verdict": "maybe", "reason": "x"}`, false, false, `the verifier's verdict is "maybe", not pass or fail`},
		{`{"verdict": 1}`, false, false, `the verifier's verdict is "1"`},
		{"I think it is fine.", false, false, `not the verdict JSON: "I think it is fine."`},
		{"", false, false, "not the verdict JSON"},
		{`{"verdict": "pass", "reason": "` + strings.Repeat("x", 2000) + `"}`, true, true, strings.Repeat("x", maxVerdictReason) + "…"},
	} {
		got := ReadVerdict(c.reply)
		if got.Pass != c.pass || got.Readable != c.readable || !strings.Contains(got.Reason, c.reason) {
			t.Errorf("ReadVerdict(%.40q) = %+v, want pass %v readable %v reason containing %.60q", c.reply, got, c.pass, c.readable, c.reason)
		}
	}
}
