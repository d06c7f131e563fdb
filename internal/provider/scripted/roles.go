package scripted

import (
	"encoding/json"
	"fmt"
	"strings"

	"massgen/internal/provider"
	"massgen/internal/subagent"
)

// Roles a scripted agent plays inside a subagent the orchestrator launches (the criteria
// critic of criteria_mode: bootstrap_subagent, the round evaluator), told apart by the
// profile's first sentence in its system prompt: its answer is the one the role calls for,
// Script.CriteriaReply or Script.EvaluationReply, or a default of the right shape.

// ProposedCriterion is what a scripted agent proposes with each checklist under
// criteria_mode: bootstrap_inline: the same text from every agent, so that the checklist
// gains it once and the others' proposals are duplicates.
const ProposedCriterion = "The answer shows the check that confirms its result."

// DefaultCriteria are the criteria a scripted critic writes when Script.CriteriaReply is unset.
var DefaultCriteria = []string{
	"The answer states the assumptions its result rests on.",
	"The answer gives a worked example that shows the result holds.",
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

var (
	criticMark    = firstSentence(subagent.CriteriaCriticProfile)
	evaluatorMark = firstSentence(subagent.RoundEvaluatorProfile)
)

// takeRole switches the script to the role req's system prompt gives, once, at the agent's
// first call.
func (p *Provider) takeRole(req provider.Request) {
	switch {
	case strings.Contains(req.System, criticMark):
		reply := p.script.CriteriaReply
		if reply == "" {
			list := make([]map[string]string, len(DefaultCriteria))
			for k, t := range DefaultCriteria {
				list[k] = map[string]string{"text": t, "category": "standard"}
			}
			b, _ := json.Marshal(map[string]any{"proposed_criteria": list})
			reply = string(b)
		}
		p.script.Answers, p.script.Final = []string{reply}, ""
	case strings.Contains(req.System, evaluatorMark):
		reply := p.script.EvaluationReply
		if reply == "" {
			reply = evaluationReply(req)
		}
		p.script.Answers, p.script.Final = []string{reply}, ""
	}
}

// evaluationReply is a short critique packet naming each answer the question shows.
func evaluationReply(req provider.Request) string {
	var labels []string
	for _, m := range req.Messages {
		for rest := m.Content; ; {
			i := strings.Index(rest, "<agent")
			if i < 0 {
				break
			}
			rest = rest[i+1:]
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				break
			}
			if l := rest[:end]; !strings.ContainsAny(l, " /") && !containsString(labels, l) {
				labels = append(labels, l)
			}
		}
	}
	var b strings.Builder
	b.WriteString("criterion_findings: ")
	for _, l := range labels {
		fmt.Fprintf(&b, "%s states its result without showing the check behind it. ", l)
	}
	b.WriteString("preserve: the result itself. improvement_spec: state the result first, then show the check that confirms it. " +
		"verification_plan: redo the check. evidence_gaps: none.")
	return b.String()
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// offersProposals reports whether the submit_checklist spec takes proposed_criteria.
func offersProposals(req provider.Request) bool {
	for _, t := range req.Tools {
		if t.Name != "submit_checklist" {
			continue
		}
		props, _ := t.Parameters["properties"].(map[string]any)
		_, ok := props["proposed_criteria"]
		return ok
	}
	return false
}
