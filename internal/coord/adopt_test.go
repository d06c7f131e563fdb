package coord

import (
	"encoding/json"
	"testing"

	"massgen/internal/criteria"
)

// A checklist accepted on one copy of a machine and adopted by another gates votes there as
// it did where it was made, and its proposals join the criteria once.
func TestAdoptChecklist(t *testing.T) {
	cs := ChecklistSettings{MaxCallsPerRound: 1, Propose: true}
	there, here := gatedMachine(2, cs), gatedMachine(2, cs)
	for _, m := range []*Machine{there, here} {
		answer(t, m, 0, "long and wrong")
		answer(t, m, 1, "right")
	}
	args := scores(map[string][]int{"agent1": {2, 10, 10, 10}, "agent2": {9, 8, 8, 6}})
	args.Proposed = json.RawMessage(`[{"text": "Shows its check."}]`)
	out := there.SubmitChecklist(0, args, []int{0, 1}, there.Version(), "")
	if out.Error != "" || len(out.Added) != 1 {
		t.Fatalf("submit: %+v", out)
	}
	// As it travels: Best and the scores' agents are not encoded.
	b, _ := json.Marshal(out.Checklist)
	var ck Checklist
	if err := json.Unmarshal(b, &ck); err != nil {
		t.Fatal(err)
	}
	props := []criteria.Proposal{{Text: out.Added[0].Text, Category: out.Added[0].Category}}
	if v := vote(here, 0, "agent2"); v.Kind != Retry {
		t.Fatalf("vote before the adoption: %+v", v)
	}
	added, _, err := here.AdoptChecklist(0, ck, props)
	if err != nil || len(added) != 1 || added[0].ID != "E5" {
		t.Fatalf("adopt: %v, added %+v", err, added)
	}
	if again, _, _ := here.AdoptChecklist(1, ck, props); len(again) != 0 {
		t.Errorf("the same proposal added twice: %+v", again)
	}
	if v := vote(here, 0, "agent1"); v.Kind != Retry {
		t.Fatalf("a vote against the adopted checklist's ranking: %+v", v)
	}
	if v := vote(here, 0, "agent2"); v.Kind != Voted {
		t.Fatalf("a vote the adopted checklist allows: %+v", v)
	}
	bad := ck
	bad.Scores = append([]AnswerScores{{Label: "agent9"}}, ck.Scores...)
	if _, _, err := here.AdoptChecklist(1, bad, nil); err == nil {
		t.Error("a checklist scoring no agent was adopted")
	}
	if _, _, err := New(Settings{Agents: 2}).AdoptChecklist(0, ck, nil); err == nil {
		t.Error("a checklist adopted without checklist_gated")
	}
}
