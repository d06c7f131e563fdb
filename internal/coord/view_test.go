package coord

import (
	"fmt"
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
