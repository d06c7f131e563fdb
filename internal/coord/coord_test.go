package coord

import (
	"encoding/json"
	"strings"
	"testing"
)

func voteCall(id, label, reason string) Call {
	b, _ := json.Marshal(map[string]string{"agent_id": label, "reason": reason})
	return Call{ID: id, Name: ToolVote, Arguments: string(b)}
}

func answerCall(id, content string) Call {
	b, _ := json.Marshal(map[string]string{"content": content})
	return Call{ID: id, Name: ToolNewAnswer, Arguments: string(b)}
}

func mustAnswer(t *testing.T, m *Machine, i int, content string) Answer {
	t.Helper()
	out := m.Resolve(i, []Call{answerCall("a", content)}, "", m.Version())
	if out.Kind != Answered {
		t.Fatalf("agent %d answer %q: got kind %v feedback %v", i, content, out.Kind, out.Feedback)
	}
	return out.Answer
}

func mustVote(t *testing.T, m *Machine, i int, label string) Vote {
	t.Helper()
	out := m.Resolve(i, []Call{voteCall("v", label, "best")}, "", m.Version())
	if out.Kind != Voted {
		t.Fatalf("agent %d vote %s: got kind %v feedback %v", i, label, out.Kind, out.Feedback)
	}
	return out.Vote
}

func TestResolve_Rules(t *testing.T) {
	// Agent 0 has answered "Paris is the capital." before each case runs.
	tests := []struct {
		name     string
		settings Settings
		agent    int
		calls    []Call
		text     string
		stale    bool
		want     Kind
		wantErr  []string // substrings of each feedback, in call order
	}{
		{name: "no tool call", calls: nil, want: NoWorkflow},
		{name: "two votes", calls: []Call{voteCall("1", "agent1", "x"), voteCall("2", "agent1", "y")}, want: Retry,
			wantErr: []string{"only one vote per response", "more than one vote"}},
		{name: "vote and answer", calls: []Call{voteCall("1", "agent1", "x"), answerCall("2", "new")}, want: Retry,
			wantErr: []string{"not both", "not both"}},
		{name: "two answers", calls: []Call{answerCall("1", "a"), answerCall("2", "b")}, want: Retry,
			wantErr: []string{"only one new_answer", "only one new_answer"}},
		{name: "unknown label", agent: 1, calls: []Call{voteCall("1", "agent9", "x")}, want: Retry,
			wantErr: []string{`invalid agent_id "agent9"; valid agents: agent1`}},
		{name: "label without answer", agent: 1, calls: []Call{voteCall("1", "agent2", "x")}, want: Retry,
			wantErr: []string{`invalid agent_id "agent2"; valid agents: agent1`}},
		{name: "real id is not a label", agent: 1, calls: []Call{voteCall("1", "researcher", "x")}, want: Retry,
			wantErr: []string{"invalid agent_id"}},
		{name: "vote args not json", agent: 1, calls: []Call{{ID: "1", Name: ToolVote, Arguments: `{"agent_id": "agent1`}}, want: Retry,
			wantErr: []string{"not valid JSON"}},
		{name: "answer args not json", agent: 1, calls: []Call{{ID: "1", Name: ToolNewAnswer, Arguments: `{`}}, want: Retry,
			wantErr: []string{"not valid JSON"}},
		{name: "empty answer", agent: 1, calls: []Call{answerCall("1", "  ")}, want: Retry, wantErr: []string{"non-empty"}},
		{name: "answer falls back to streamed text", agent: 1, calls: []Call{{ID: "1", Name: ToolNewAnswer, Arguments: `{}`}},
			text: "Lyon is not the capital; Paris is.", want: Answered},
		{name: "duplicate answer names the label, not the id", agent: 1, calls: []Call{answerCall("1", " Paris is the capital. ")}, want: Retry,
			wantErr: []string{"identical to agent1's current answer"}},
		{name: "answer cap", settings: Settings{MaxNewAnswersPerAgent: 1}, agent: 0, calls: []Call{answerCall("1", "Paris, on the Seine.")}, want: Retry,
			wantErr: []string{"maximum of 1 answers"}},
		// A 50 MB answer was accepted, won and broke the log (issue 9 item 6): the cap counts
		// characters, not bytes, and covers the streamed-text fallback too.
		{name: "answer over max_answer_chars", settings: Settings{MaxAnswerChars: 30}, agent: 1,
			calls: []Call{answerCall("1", strings.Repeat("é", 31))}, want: Retry,
			wantErr: []string{"31 characters long, over the limit of 30 (orchestrator.max_answer_chars)"}},
		{name: "answer at max_answer_chars", settings: Settings{MaxAnswerChars: 30}, agent: 1,
			calls: []Call{answerCall("1", strings.Repeat("é", 30))}, want: Answered},
		{name: "streamed-text answer over max_answer_chars", settings: Settings{MaxAnswerChars: 30}, agent: 1,
			calls: []Call{{ID: "1", Name: ToolNewAnswer, Arguments: `{}`}}, text: strings.Repeat("x", 31), want: Retry,
			wantErr: []string{"over the limit of 30"}},
		{name: "novelty balanced rejects above 0.70", settings: Settings{Novelty: "balanced"}, agent: 1,
			calls: []Call{answerCall("1", "Paris is the capital. Indeed")}, want: Retry, wantErr: []string{"too similar to agent1"}},
		{name: "novelty balanced accepts at 0.60", settings: Settings{Novelty: "balanced"}, agent: 1,
			calls: []Call{answerCall("1", "Paris is the capital of France")}, want: Answered},
		{name: "novelty strict rejects at 0.60", settings: Settings{Novelty: "strict"}, agent: 1,
			calls: []Call{answerCall("1", "Paris is the capital of France")}, want: Retry, wantErr: []string{"limit is 50%"}},
		{name: "novelty lenient accepts near copy", settings: Settings{Novelty: "lenient"}, agent: 1,
			calls: []Call{answerCall("1", "Paris is the capital. Indeed")}, want: Answered},
		{name: "valid vote", agent: 1, calls: []Call{voteCall("1", "agent1", "good")}, want: Voted},
		{name: "self vote allowed", agent: 0, calls: []Call{voteCall("1", "agent1", "mine")}, want: Voted},
		{name: "stale vote is not counted", agent: 1, calls: []Call{voteCall("1", "agent1", "old")}, stale: true, want: StaleVote},
		{name: "unknown tool", agent: 1, calls: []Call{{ID: "1", Name: "search", Arguments: "{}"}}, want: Retry,
			wantErr: []string{`unknown tool "search"`}},
		{name: "unknown tool beside a vote is ignored", agent: 1,
			calls: []Call{{ID: "1", Name: "search", Arguments: "{}"}, voteCall("2", "agent1", "ok")}, want: Voted},
		{name: "rejected vote explains the other calls", agent: 1,
			calls: []Call{{ID: "1", Name: "search", Arguments: "{}"}, voteCall("2", "agent7", "ok")}, want: Retry,
			wantErr: []string{"not run", "invalid agent_id"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.settings.Agents = 3
			m := New(tc.settings)
			mustAnswer(t, m, 0, "Paris is the capital.")
			seen := m.Version()
			if tc.stale {
				seen--
			}
			out := m.Resolve(tc.agent, tc.calls, tc.text, seen)
			if out.Kind != tc.want {
				t.Fatalf("kind = %v, want %v (feedback %+v)", out.Kind, tc.want, out.Feedback)
			}
			if len(tc.wantErr) != len(out.Feedback) {
				t.Fatalf("feedback = %+v, want %d entries", out.Feedback, len(tc.wantErr))
			}
			for k, w := range tc.wantErr {
				if !strings.Contains(out.Feedback[k].Error, w) {
					t.Errorf("feedback[%d] = %q, want it to contain %q", k, out.Feedback[k].Error, w)
				}
				if out.Feedback[k].CallID != tc.calls[k].ID {
					t.Errorf("feedback[%d] is for call %q, want %q", k, out.Feedback[k].CallID, tc.calls[k].ID)
				}
			}
			if tc.want == StaleVote {
				if _, ok := m.CurrentVote(tc.agent); ok {
					t.Error("stale vote was recorded as current")
				}
			}
		})
	}
}

func TestResolve_VoteBeforeAnyAnswer(t *testing.T) {
	m := New(Settings{Agents: 2})
	out := m.Resolve(0, []Call{voteCall("1", "agent1", "x")}, "", 0)
	if out.Kind != Retry || !strings.Contains(out.Feedback[0].Error, "no answers exist yet") {
		t.Fatalf("got %v %+v", out.Kind, out.Feedback)
	}
}

func TestAnswer_InvalidatesEveryCurrentVote(t *testing.T) {
	m := New(Settings{Agents: 3})
	mustAnswer(t, m, 0, "first")
	mustVote(t, m, 1, "agent1")
	mustVote(t, m, 2, "agent1")
	out := m.Resolve(0, []Call{answerCall("x", "second, better")}, "", m.Version())
	if out.Kind != Answered || out.Answer.Label != "agent1.2" || out.Answer.Version != 2 {
		t.Fatalf("got %+v", out)
	}
	if got := out.Invalidated; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("invalidated = %v, want [1 2]", got)
	}
	for i := range 3 {
		if _, ok := m.CurrentVote(i); ok {
			t.Errorf("agent %d still holds a vote", i)
		}
		if !m.NeedsTurn(i) {
			t.Errorf("agent %d does not need a turn", i)
		}
	}
	if m.Converged() {
		t.Error("converged with no votes")
	}
}

func TestConverged_OnlyWhenEveryLiveAgentHoldsACurrentVote(t *testing.T) {
	m := New(Settings{Agents: 3, FailureBudget: 2})
	mustAnswer(t, m, 0, "a")
	mustVote(t, m, 0, "agent1")
	mustVote(t, m, 1, "agent1")
	if m.Converged() {
		t.Fatal("converged while agent 3 has not voted")
	}
	if n, dead := m.TurnFailed(2); n != 1 || dead {
		t.Fatalf("first failure: %d %v", n, dead)
	}
	m.TurnSucceeded(2)
	m.TurnFailed(2)
	if _, dead := m.TurnFailed(2); !dead {
		t.Fatal("agent not dead after budget of 2 consecutive failures")
	}
	if !m.Converged() {
		t.Fatal("not converged once the only non-voter died")
	}
	if m.NeedsTurn(2) {
		t.Error("dead agent needs a turn")
	}
}

func TestKill_AllDead(t *testing.T) {
	m := New(Settings{Agents: 2})
	m.Kill(0)
	m.Kill(1)
	if m.Live() != 0 || m.Converged() {
		t.Fatalf("live=%d converged=%v", m.Live(), m.Converged())
	}
}

func TestWinner(t *testing.T) {
	tests := []struct {
		name    string
		answers []int
		votes   [][2]int // voter, target
		want    int
		tie     bool
	}{
		{name: "most votes", answers: []int{0, 1}, votes: [][2]int{{0, 1}, {1, 1}, {2, 0}}, want: 1},
		{name: "tie goes to config order", answers: []int{0, 1, 2}, votes: [][2]int{{0, 2}, {1, 1}}, want: 1, tie: true},
		{name: "no votes: first with an answer", answers: []int{2, 1}, want: 1},
		{name: "no answers", want: -1},
		{name: "self vote counts", answers: []int{0, 1}, votes: [][2]int{{1, 1}}, want: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Settings{Agents: 3})
			for _, a := range tc.answers {
				mustAnswer(t, m, a, "answer of "+Label(a))
			}
			for _, v := range tc.votes {
				mustVote(t, m, v[0], Label(v[1]))
			}
			r := m.Winner()
			if r.Winner != tc.want || r.Tie != tc.tie {
				t.Fatalf("winner=%d tie=%v, want %d %v (tally %+v)", r.Winner, r.Tie, tc.want, tc.tie, r.Tally)
			}
		})
	}
}

func TestWinner_StaleVotesDoNotCount(t *testing.T) {
	m := New(Settings{Agents: 3})
	mustAnswer(t, m, 0, "a")
	mustAnswer(t, m, 1, "b")
	mustVote(t, m, 2, "agent1")
	mustVote(t, m, 0, "agent1")
	mustAnswer(t, m, 2, "c") // invalidates both votes
	mustVote(t, m, 1, "agent2")
	r := m.Winner()
	if r.Winner != 1 {
		t.Fatalf("winner = %d, want 1 (only the current vote counts); tally %+v", r.Winner, r.Tally)
	}
	for _, c := range r.Tally {
		if c.Agent == 0 && c.Votes != 0 {
			t.Errorf("agent1 has %d votes from before the last answer", c.Votes)
		}
	}
}

func TestLabels(t *testing.T) {
	if Label(0) != "agent1" || Label(11) != "agent12" {
		t.Fatal(Label(0), Label(11))
	}
	for s, want := range map[string]int{"agent1": 0, "agent3": 2, "agent4": -1, "agent0": -1, "agent01": -1, "agent": -1, "x1": -1, "agent1x": -1, "agent99999999999999999999": -1} {
		if got := ParseLabel(s, 3); got != want {
			t.Errorf("ParseLabel(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestJaccard(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"a b c", "a b c", 1},
		{"a b", "c d", 0},
		{"A b", "a B c d", 0.5},
		{"", "", 1},
	} {
		if got := Jaccard(tc.a, tc.b); got != tc.want {
			t.Errorf("Jaccard(%q,%q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestEnded_RejectsEverything(t *testing.T) {
	m := New(Settings{Agents: 2})
	mustAnswer(t, m, 0, "a")
	m.End()
	if out := m.Resolve(1, []Call{voteCall("1", "agent1", "x")}, "", m.Version()); out.Kind != Retry {
		t.Fatalf("vote after end: %v", out.Kind)
	}
	if m.NeedsTurn(1) {
		t.Error("turn needed after end")
	}
}
