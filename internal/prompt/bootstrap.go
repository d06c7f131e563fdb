package prompt

import (
	"fmt"
	"strings"

	"massgen/internal/criteria"
	"massgen/internal/provider"
)

// What agents and orchestrator-launched subagents read about emerging criteria
// (criteria_mode) and the round evaluator. The words are this build's; the shapes
// (proposed_criteria entries, the critique packet's sections) are MassGen's.

// CriteriaCriticQuestion is the critic's task: the task, the criteria already in use, and the
// current answers.
func CriteriaCriticQuestion(task string, current []criteria.Criterion, answers []Answer, max int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<task>\n%s\n</task>\n\nThe checklist's criteria now:\n", Escape(task))
	for _, c := range current {
		fmt.Fprintf(&b, "  %s [%s]: %s\n", c.ID, c.Category, Escape(c.Text))
	}
	b.WriteString("\nThe current answers:\n")
	writeAnswers(&b, answers)
	fmt.Fprintf(&b, "\nPropose at most %d new criteria that separate a stronger answer from all of these. "+
		`Reply with JSON only: {"proposed_criteria": [{"text": "...", "category": "standard"}]}, or {"proposed_criteria": []} if none is needed.`, max)
	return b.String()
}

// RoundEvaluatorQuestion is the round evaluator's task: the task, the criteria verbatim,
// the answers, and how hard to push for a new direction (transformation pressure).
func RoundEvaluatorQuestion(task string, items []criteria.Criterion, answers []Answer, pressure string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<task>\n%s\n</task>\n\nThe evaluation criteria:\n", Escape(task))
	for _, c := range items {
		fmt.Fprintf(&b, "  %s [%s]: %s\n", c.ID, c.Category, Escape(c.Text))
	}
	b.WriteString("\nThe candidate answers:\n")
	writeAnswers(&b, answers)
	b.WriteString("\nReturn one critique packet with these sections: criteria_interpretation (what each criterion really demands), " +
		"criterion_findings (where each answer falls short, with evidence), cross_answer_synthesis (what no answer gets right yet; " +
		"with one answer, its gaps before it could be called done), preserve (what must survive the next revision), " +
		"improvement_spec (one committed plan for the next revision, correctness first), verification_plan (the checks to rerun) " +
		"and evidence_gaps (what you could not verify).\n")
	switch pressure {
	case "gentle":
		b.WriteString("Transformation pressure: gentle. Prefer deepening and correcting the current approach unless its ceiling is evident.")
	case "aggressive":
		b.WriteString("Transformation pressure: aggressive. Search hard for a stronger approach; an incremental plan needs strong justification.")
	default:
		b.WriteString("Transformation pressure: balanced. Allow substantial restructuring once the current approach is plateauing.")
	}
	return b.String()
}

func writeAnswers(b *strings.Builder, answers []Answer) {
	if len(answers) == 0 {
		b.WriteString("(none yet)\n")
	}
	for _, a := range answers {
		fmt.Fprintf(b, "<%s>\n%s\n</%s>\n", a.Label, Escape(a.Content), a.Label)
	}
}

// ProposeRule is the checklist section's line for criteria_mode: bootstrap_inline.
func ProposeRule(max int) string {
	return fmt.Sprintf("  With each checklist you may propose up to %d new criteria in proposed_criteria: what a clearly stronger answer "+
		"would meet that none of the current answers does, specific to this task. They do not change this checklist's verdict; "+
		"they join the criteria from your next round on.", max)
}

// WithProposals adds proposed_criteria to a submit_checklist spec.
func WithProposals(spec provider.ToolSpec, max int) provider.ToolSpec {
	params, _ := spec.Parameters["properties"].(map[string]any)
	props := make(map[string]any, len(params)+1)
	for k, v := range params {
		props[k] = v
	}
	props["proposed_criteria"] = map[string]any{
		"type":        "array",
		"maxItems":    max,
		"description": "Optional: new criteria a stronger answer would meet that no current answer does; they apply from the next round.",
		"items": map[string]any{"type": "object", "required": []any{"text"}, "properties": map[string]any{
			"text":     map[string]any{"type": "string"},
			"category": map[string]any{"type": "string", "enum": []any{"standard", "stretch"}},
		}},
	}
	out := spec
	out.Parameters = make(map[string]any, len(spec.Parameters))
	for k, v := range spec.Parameters {
		out.Parameters[k] = v
	}
	out.Parameters["properties"] = props
	return out
}

// NewCriteria tells an agent at the start of a round which criteria joined the checklist
// (and which left it) since it last read the list.
func NewCriteria(added []criteria.Criterion, gone []string) string {
	var b strings.Builder
	if len(added) > 0 {
		b.WriteString("New evaluation criteria joined the checklist; from now on score them too, like the others:\n")
		for _, c := range added {
			tag := ""
			if c.Category != criteria.Standard {
				tag = " [" + c.Category + "]"
			}
			fmt.Fprintf(&b, "  %s%s: %s\n", c.ID, tag, Escape(c.Text))
		}
	}
	if len(gone) > 0 {
		fmt.Fprintf(&b, "These criteria left the checklist (the list is capped); do not score them: %s.\n", strings.Join(gone, ", "))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// EvaluationReport opens a round with the round evaluator's critique.
func EvaluationReport(report string) string {
	return "The round evaluator reviewed the current answers. Its report is below: use it as the diagnostic basis of your " +
		"submit_checklist scores and of your next answer, and verify yourself only what it lists under evidence_gaps.\n" +
		"<round_evaluator_report>\n" + Escape(report) + "\n</round_evaluator_report>"
}
