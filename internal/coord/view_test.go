package coord

import (
	"fmt"
	"strings"
	"testing"
)

// A vote cast on a bounded view counts while every answer its voter was shown is current: an
// answer by an agent it was not shown leaves it counting, one it was shown being replaced
// does not; and it may name only an agent it was shown.
func TestMachine_BoundedViewVotes(t *testing.T) {
	m := New(Settings{Agents: 4})
	for i := range 4 {
		if out := m.Resolve(i, []Call{{ID: "a", Name: ToolNewAnswer, Arguments: fmt.Sprintf(`{"content":"answer %d"}`, i)}}, "", m.Version()); out.Kind != Answered {
			t.Fatalf("answer %d: %+v", i, out)
		}
	}
	// agent1 reads its own answer and agent2's only.
	m.SetView(0, []int{1, 1, 0, 0})
	if out := m.Resolve(0, []Call{{ID: "v", Name: ToolVote, Arguments: `{"agent_id":"agent3","reason":"x"}`}}, "", m.Version()); out.Kind != Retry {
		t.Fatalf("a vote for an agent it was not shown: %+v", out)
	}
	if out := m.Resolve(0, []Call{{ID: "v", Name: ToolVote, Arguments: `{"agent_id":"agent2","reason":"x"}`}}, "", m.Version()); out.Kind != Voted {
		t.Fatalf("vote: %+v", out)
	}
	// agent3, which agent1 was not shown, answers again: the vote still counts.
	out := m.Resolve(2, []Call{{ID: "a", Name: ToolNewAnswer, Arguments: `{"content":"answer 3, revised"}`}}, "", m.Version())
	if out.Kind != Answered || len(out.Invalidated) != 0 {
		t.Fatalf("unseen answer: %+v", out)
	}
	if _, ok := m.CurrentVote(0); !ok {
		t.Fatal("an answer the voter was not shown made its vote stale")
	}
	// agent2, which it voted for, answers again: the vote stops counting and is reported so.
	out = m.Resolve(1, []Call{{ID: "a", Name: ToolNewAnswer, Arguments: `{"content":"answer 2, revised"}`}}, "", m.Version())
	if out.Kind != Answered || len(out.Invalidated) != 1 || out.Invalidated[0] != 0 {
		t.Fatalf("seen answer replaced: %+v", out)
	}
	if _, ok := m.CurrentVote(0); ok {
		t.Fatal("the vote still counts after an answer it was shown was replaced")
	}
	// A vote built on the old view is stale.
	if out := m.Resolve(0, []Call{{ID: "v", Name: ToolVote, Arguments: `{"agent_id":"agent2","reason":"x"}`}}, "", m.Version()); out.Kind != StaleVote {
		t.Fatalf("vote on an outdated view: %+v", out)
	}
}

// Restore takes back a vote cast on a bounded view while no answer its voter was shown has
// been replaced, whatever was answered since, and refuses one that a log says is current but
// whose view no longer is.
func TestMachine_RestoreBoundedViewVotes(t *testing.T) {
	answers := []Answer{
		{Agent: 0, Label: "agent1.1", Content: "a", Version: 1},
		{Agent: 1, Label: "agent2.1", Content: "b", Version: 2},
		{Agent: 2, Label: "agent3.1", Content: "c", Version: 3},
		{Agent: 2, Label: "agent3.2", Content: "c2", Version: 4},
	}
	tests := []struct {
		name    string
		vote    Vote
		wantErr string
	}{
		{"cast on an older version, its view current", Vote{Voter: 0, Target: 1, TargetLabel: "agent2", Version: 2, View: []int{1, 1, 0}}, ""},
		{"cast on the current version without a view", Vote{Voter: 0, Target: 1, TargetLabel: "agent2", Version: 4}, ""},
		{"cast on an older version without a view", Vote{Voter: 0, Target: 1, TargetLabel: "agent2", Version: 2}, "not the current 4"},
		{"its view replaced", Vote{Voter: 0, Target: 2, TargetLabel: "agent3", Version: 3, View: []int{1, 0, 1}}, "since been replaced"},
		{"a view of more agents", Vote{Voter: 0, Target: 1, TargetLabel: "agent2", Version: 2, View: []int{1, 1, 0, 0}}, "view of 4 agents"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Settings{Agents: 3})
			err := m.Restore(Restored{Answers: answers, Votes: []Vote{tc.vote}})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one with %q", err, tc.wantErr)
			case tc.wantErr != "":
				return
			}
			if _, ok := m.CurrentVote(0); !ok {
				t.Fatal("the restored vote does not count")
			}
			// An answer by the agent it voted for ends it as it would have before the stop.
			if out := m.Resolve(1, []Call{answerCall("x", "b revised")}, "", m.Version()); out.Kind != Answered || len(out.Invalidated) != 1 {
				t.Fatalf("answer: %+v", out)
			}
			if _, ok := m.CurrentVote(0); ok {
				t.Fatal("the vote still counts after the answer it was cast for was replaced")
			}
		})
	}
}
