package prompt

import (
	"strings"

	"massgen/internal/provider"
)

// VerifierSystem is the system prompt of a verifier's check (orchestrator.verifiers): a fresh
// conversation that judges one aspect of one answer and replies with a JSON verdict.
const VerifierSystem = "You are a verifier. You judge one aspect of an answer to a question, strictly and only that aspect. " +
	`Reply with JSON only, in this shape: {"verdict": "pass", "reason": "..."}: verdict is pass or fail, reason one or two sentences saying why.`

// aspectChecks say what each aspect of config.Aspects asks (custom: the instructions alone).
var aspectChecks = map[string]string{
	"correctness":  "Check correctness: is every claim, result and step in the answer right? Fail it for any error that matters.",
	"completeness": "Check completeness: does the answer address every part of the question? Fail it when a part is missing or left vague.",
	"format":       "Check format: is the answer in the form the question asks for (structure, length, notation)? Fail it when it is not.",
}

// VerifierUser is the question a verifier reads: the task, the answer and what to check.
func VerifierUser(question string, history []provider.Message, answer, aspect, instructions string) string {
	var b strings.Builder
	writeHistory(&b, history)
	b.WriteString("<ORIGINAL MESSAGE>\n")
	b.WriteString(Escape(question))
	b.WriteString("\n<END OF ORIGINAL MESSAGE>\n\n")
	b.WriteString("<ANSWER TO VERIFY>\n")
	b.WriteString(Escape(answer))
	b.WriteString("\n<END OF ANSWER TO VERIFY>\n\n")
	if c := aspectChecks[aspect]; c != "" {
		b.WriteString(c)
		b.WriteString("\n")
	}
	if i := strings.TrimSpace(instructions); i != "" {
		b.WriteString("What to check: ")
		b.WriteString(i)
		b.WriteString("\n")
	}
	b.WriteString(`Reply with {"verdict": "pass" or "fail", "reason": "..."} only.`)
	return b.String()
}
