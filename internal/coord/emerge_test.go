package coord

import (
	"encoding/json"
	"strings"
	"testing"

	"massgen/internal/criteria"
)

// criteria_mode: bootstrap_inline. Proposals ride on an accepted checklist: they never change
// its verdict, are capped per agent per round, deduplicated by text, and reach an agent's
// criteria at its next round only.
func TestSubmitChecklist_ProposedCriteria(t *testing.T) {
	m := gatedMachine(2, ChecklistSettings{Propose: true, MaxProposals: 2, MaxEmerged: 3, FirstAnswer: true})
	answer(t, m, 0, "Paris")
	m.BeginRound(1)
	args := scores(map[string][]int{"agent1": {9, 9, 9, 9}})
	args.Proposed = json.RawMessage(`[{"text": "Names the river.", "category": "primary"}, "Gives the population.",
		{"text": "Names the river."}, {"text": "  "}, {"text": "Third one."}]`)
	out := m.SubmitChecklist(1, args, []int{0}, m.Version(), "")
	if out.Error != "" {
		t.Fatal(out.Error)
	}
	ck := out.Checklist
	if ck.Verdict != VerdictVote || len(out.Added) != 2 || out.Added[0].ID != "E5" || out.Added[0].Category != criteria.Standard {
		t.Fatalf("outcome = %+v", out)
	}
	if !strings.Contains(ck.ProposalNote, "entry 4 has no text") || !strings.Contains(ck.ProposalNote, "2 over the 2 per round") {
		t.Errorf("note = %q", ck.ProposalNote)
	}
	if n := len(m.CriteriaOf(1)); n != 4 {
		t.Errorf("agent2 scores %d criteria this round, want the 4 it began with", n)
	}
	m.BeginRound(1)
	if got := idRange(m.CriteriaOf(1)); got != "E1-E6" {
		t.Errorf("next round: %s", got)
	}
	// A checklist of the new round must score the new criteria too.
	out = m.SubmitChecklist(1, scores(map[string][]int{"agent1": {9, 9, 9, 9}}), []int{0}, m.Version(), "")
	if !strings.Contains(out.Error, "missing scores for E5, E6") {
		t.Errorf("error = %q", out.Error)
	}
	// The cap keeps the newest: E5 leaves when two more come.
	added, evicted := m.AddCriteria([]criteria.Proposal{{Text: "Gives the population."}, {Text: "Cites a source."}, {Text: "Has a map."}})
	if len(added) != 2 || strings.Join(evicted, ",") != "E5" {
		t.Errorf("added %v, evicted %v", added, evicted)
	}
	if got := idRange(m.Criteria()); got != "E1, E2, E3, E4, E6, E7, E8" {
		t.Errorf("criteria = %s", got)
	}
}

func TestSubmitChecklist_ProposalsOffOrGarbage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		propose bool
		raw     string
		note    string
	}{
		{"not bootstrap_inline", false, `[{"text": "x"}]`, "criteria_mode is not bootstrap_inline"},
		{"not an array", true, `{"text": "x"}`, "must be a JSON array"},
		{"a number", true, `7`, "must be a JSON array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := gatedMachine(1, ChecklistSettings{Propose: tc.propose, FirstAnswer: true})
			answer(t, m, 0, "Paris")
			m.BeginRound(0)
			args := scores(map[string][]int{"agent1": {9, 9, 9, 9}})
			args.Proposed = json.RawMessage(tc.raw)
			out := m.SubmitChecklist(0, args, []int{0}, m.Version(), "")
			if out.Error != "" || len(out.Added) != 0 || !strings.Contains(out.Checklist.ProposalNote, tc.note) {
				t.Fatalf("outcome = %+v, want an accepted checklist noting %q", out, tc.note)
			}
			if len(m.Emerged()) != 0 {
				t.Errorf("emerged %v", m.Emerged())
			}
		})
	}
}
