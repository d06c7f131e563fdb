package prompt

import (
	"strings"
	"testing"

	"massgen/internal/criteria"
)

func TestChecklistSection(t *testing.T) {
	items := criteria.Default()
	rule := ChecklistRule{Threshold: 5, Required: 3, Cutoff: 8}
	for _, tc := range []struct {
		mode      string
		gap       bool
		want, not []string
	}{
		// The gated rule is hidden: no threshold, count or cutoff.
		{SensitivityChecklistGated, true, []string{"submit_checklist", "E1 [primary]: Correctness", "gap report", "is refused"}, []string{"threshold is", "at least 3"}},
		{SensitivityChecklistGated, false, []string{"submit_checklist"}, []string{"gap report"}},
		{SensitivityChecklistScored, false, []string{"threshold is 5", "A score of 8 or more", "at least 3 criteria"}, []string{"submit_checklist"}},
		{SensitivityChecklist, false, []string{"TRUE or FALSE", "threshold is 5", "at least 3 are TRUE"}, []string{"submit_checklist"}},
	} {
		got := ChecklistSection(tc.mode, items, rule, tc.gap)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: lacks %q:\n%s", tc.mode, w, got)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: has %q:\n%s", tc.mode, n, got)
			}
		}
	}
	sys := SystemFor(Coordination{VotingSensitivity: SensitivityChecklistGated, Checklist: ChecklistSection(SensitivityChecklistGated, items, rule, false)})
	if !strings.Contains(sys, "- Checklist voting:") || strings.Contains(sys, sensitivity["lenient"]) {
		t.Errorf("the system prompt does not replace the sensitivity line with the checklist:\n%s", sys)
	}
}

func TestChecklistTool_SpellsOutEveryAnswerAndCriterion(t *testing.T) {
	spec := ChecklistTool(criteria.Default(), []string{"agent1", "agent2"})
	scores := spec.Parameters["properties"].(map[string]any)["scores"].(map[string]any)
	props := scores["properties"].(map[string]any)
	if len(props) != 2 || len(scores["required"].([]any)) != 2 {
		t.Fatalf("scores schema %v", scores)
	}
	crit := props["agent1"].(map[string]any)["properties"].(map[string]any)
	if len(crit) != 4 || !strings.Contains(crit["E1"].(map[string]any)["description"].(string), "[primary]") {
		t.Fatalf("criteria schema %v", crit)
	}
}
