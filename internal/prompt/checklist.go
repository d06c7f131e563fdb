package prompt

import (
	"massgen/internal/coord"

	"fmt"
	"strings"

	"massgen/internal/criteria"
	"massgen/internal/provider"
)

// The checklist voting sensitivities (MassGen's checklist, checklist_scored and
// checklist_gated). checklist and checklist_scored only change the prompt, as in MassGen: the
// agent applies a visible rule itself. checklist_gated hides the rule behind submit_checklist,
// whose verdict the session enforces.

// Checklist voting sensitivities.
const (
	SensitivityChecklist       = "checklist"
	SensitivityChecklistScored = "checklist_scored"
	SensitivityChecklistGated  = "checklist_gated"
)

// ChecklistRule is the visible rule of checklist and checklist_scored: how many criteria must
// hold, and (scored) from which score a criterion holds.
type ChecklistRule struct {
	Threshold, Required, Cutoff int
}

// ChecklistSection is the system prompt's voting rule for a checklist sensitivity; it starts
// a list item of the rules. gapReport asks checklist_gated agents for a gap report.
func ChecklistSection(mode string, items []criteria.Criterion, rule ChecklistRule, gapReport bool) string {
	var b strings.Builder
	switch mode {
	case SensitivityChecklistGated:
		b.WriteString("Checklist voting: before you may vote, score every current answer (your own included) " +
			"against the criteria below with the submit_checklist tool, each from 0 to 10 with a short reason. " +
			"Check correctness yourself first: redo the computation, test the claim, compare with what you know. " +
			"A long or confident answer is not a correct one.\n")
		writeCriteria(&b, items)
		b.WriteString("  submit_checklist answers with a verdict. If it is vote, call vote for the answer it ranks best. " +
			"If it is new_answer, write an improved answer that fixes the failing criteria and submit it with new_answer. " +
			"A vote without a checklist on the current answers, against its verdict, or for another answer is refused. " +
			"The bar is not shown to you: score honestly, a 9 means nothing meaningful could be improved.\n")
		if gapReport {
			b.WriteString("  With your scores, give a gap report (at least a few sentences): what each answer gets wrong " +
				"or leaves out, criterion by criterion. Write it to a file in your workspace and pass its path as report_path, " +
				"or pass the text as report.\n")
		}
	case SensitivityChecklistScored:
		fmt.Fprintf(&b, "Checklist voting: before you decide, rate your confidence from 0 to 10 that the best current answer meets each criterion "+
			"(your threshold is %d on a 0-10 scale). Check correctness yourself first; a long answer is not a correct one.\n", rule.Threshold)
		writeCriteria(&b, items)
		fmt.Fprintf(&b, "  A score of %d or more counts as met. If at least %d criteria are met, vote for that answer; "+
			"otherwise write a better one with new_answer.\n", rule.Cutoff, rule.Required)
	default:
		fmt.Fprintf(&b, "Checklist voting: before you decide, judge whether the best current answer meets each criterion, TRUE or FALSE "+
			"(your threshold is %d on a 0-10 scale). Check correctness yourself first; a long answer is not a correct one.\n", rule.Threshold)
		writeCriteria(&b, items)
		fmt.Fprintf(&b, "  If at least %d are TRUE, vote for that answer; otherwise write a better one with new_answer.\n", rule.Required)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func writeCriteria(b *strings.Builder, items []criteria.Criterion) {
	for _, it := range items {
		tag := ""
		if it.Category != criteria.Standard {
			tag = " [" + it.Category + "]"
		}
		fmt.Fprintf(b, "  %s%s: %s\n", it.ID, tag, Escape(it.Text))
	}
}

// ChecklistTool is the submit_checklist tool offered with checklist_gated, for the answers
// labels (agent1, ...) the agent has read. Its schema spells out every answer and criterion,
// so that a model cannot leave one out by accident.
func ChecklistTool(items []criteria.Criterion, labels []string) provider.ToolSpec {
	ids := make([]any, len(items))
	crit := map[string]any{}
	for k, it := range items {
		ids[k] = it.ID
		crit[it.ID] = map[string]any{
			"type":        "object",
			"description": fmt.Sprintf("%s [%s]", it.ID, it.Category),
			"properties": map[string]any{
				"score":     map[string]any{"type": "integer", "minimum": 0, "maximum": 10},
				"reasoning": map[string]any{"type": "string", "description": "Why: cite specific evidence from the answer."},
			},
			"required": []any{"score", "reasoning"},
		}
	}
	answer := map[string]any{"type": "object", "properties": crit, "required": ids}
	props := map[string]any{}
	req := make([]any, len(labels))
	for k, l := range labels {
		props[l] = answer
		req[k] = l
	}
	return provider.ToolSpec{
		Name: coord.ToolSubmitChecklist,
		Description: "Score every current answer against the checklist criteria (0-10 each, with a reason) before you vote. " +
			"Returns the verdict: vote (for the answer ranked best) or new_answer (improve it first).",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"scores": map[string]any{"type": "object", "description": `Per answer label, per criterion: {"agent1": {"E1": {"score": 8, "reasoning": "..."}, ...}, ...}.`,
					"properties": props, "required": req},
				"report_path": map[string]any{"type": "string", "description": "Path of your gap report in your workspace."},
				"report":      map[string]any{"type": "string", "description": "Your gap report as text, when you have no workspace."},
			},
			"required": []any{"scores"},
		},
	}
}
