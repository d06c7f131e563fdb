package prompt

import (
	"fmt"
	"strings"

	"massgen/internal/coord"
	"massgen/internal/provider"
)

// PostEvaluationTools are the two tools that end a post-evaluation (MassGen's
// get_post_evaluation_tools): submit accepts the final answer, restart_orchestration starts
// the turn over with a reason and instructions.
func PostEvaluationTools() []provider.ToolSpec {
	return []provider.ToolSpec{
		{
			Name:        coord.ToolSubmit,
			Description: "Accept the final answer: it fully addresses the original message and nothing more is needed.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"confirmed": map[string]any{"type": "boolean", "enum": []any{true}, "description": "Confirm the answer is complete."},
				},
				"required": []any{"confirmed"},
			},
		},
		{
			Name: coord.ToolRestart,
			Description: "Start the whole coordination over because the final answer falls short: every agent begins again " +
				"with your reason and instructions.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"reason":       map[string]any{"type": "string", "description": "What is wrong or missing in the final answer."},
					"instructions": map[string]any{"type": "string", "description": "What the agents must do differently in the next attempt."},
				},
				"required": []any{"reason", "instructions"},
			},
		},
	}
}

// PostEvaluationSystem is the system prompt of the presenter's check of the final answer: its
// own system message, then what to check and how to end.
func PostEvaluationSystem(agentSystem string) string {
	var b strings.Builder
	if s := strings.TrimSpace(agentSystem); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString(`## Post-Presentation Evaluation

You presented the final answer below. Check it against the original message before it reaches the user:
- Does it answer every part of the original message, correctly and completely?
- Did the work it describes actually happen? Use your tools to check files and claims where you can.

Then end with exactly one tool call:
- submit(confirmed=true) when the answer is satisfactory;
- restart_orchestration(reason, instructions) when it falls short: the whole team starts over with your reason and instructions, so make them specific.
`)
	return b.String()
}

// PostEvaluationUser is the message the check reads: the original message (and earlier turns)
// and the final answer to evaluate.
func PostEvaluationUser(question string, history []provider.Message, answer string) string {
	var b strings.Builder
	writeHistory(&b, history)
	b.WriteString("<ORIGINAL MESSAGE>\n")
	b.WriteString(Escape(question))
	b.WriteString("\n<END OF ORIGINAL MESSAGE>\n\n")
	b.WriteString("<FINAL ANSWER TO EVALUATE>\n")
	b.WriteString(Escape(answer))
	b.WriteString("\n<END OF FINAL ANSWER TO EVALUATE>\n\n")
	b.WriteString("Review this answer and decide: call submit if it is satisfactory, or restart_orchestration with a reason and instructions if it needs improvement.")
	return b.String()
}

// PostEvaluationRetry is what a check that called neither tool, or called them wrongly, is told
// once; a second miss accepts the answer.
const PostEvaluationRetry = "End the evaluation with exactly one tool call: submit(confirmed=true) to accept the final answer, " +
	"or restart_orchestration(reason, instructions) to start over."

// RestartContext is the block every agent's first message starts with in attempt attempt of
// maxAttempts (MassGen's format_restart_context): why the last attempt was restarted, what to
// do now, and the answer that attempt presented.
func RestartContext(attempt, maxAttempts int, reason, instructions, previous string) string {
	var b strings.Builder
	b.WriteString("<PREVIOUS ATTEMPT FEEDBACK>\n")
	fmt.Fprintf(&b, "This is attempt %d of %d. The previous attempt was restarted because:\n", attempt, maxAttempts)
	b.WriteString(Escape(reason))
	b.WriteString("\n\n**Instructions for this attempt:**\n")
	b.WriteString(Escape(instructions))
	if strings.TrimSpace(previous) != "" {
		b.WriteString("\n\n**Previous attempt's final answer (for reference):**\n")
		b.WriteString(Escape(previous))
	}
	b.WriteString("\n\nAddress these issues in your work and in your answer.\n<END OF PREVIOUS ATTEMPT FEEDBACK>")
	return b.String()
}
