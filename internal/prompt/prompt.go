// Package prompt builds what agents read: the coordination and presentation prompts, the
// update that brings a busy agent up to date, and the workflow tool specs. Stable parts come
// first and volatile parts last, with no timestamps, so provider prompt caches keep hitting (P10).
package prompt

import (
	"fmt"
	"regexp"
	"strings"

	"massgen/internal/provider"
)

// Answer is an answer as an agent sees it: under its anonymous agent label only.
type Answer struct {
	Label   string // agent<i>
	Content string
}

// Block renders one answer the way every prompt shows answers. The scripted backend reads
// these blocks back, so the format is part of the contract. The content is escaped: it cannot
// close its own block or open another one.
func Block(a Answer) string {
	return fmt.Sprintf("<%s>\n%s\n<end of %s>", a.Label, Escape(a.Content), a.Label)
}

// delimiterLike matches the start of anything a reader could take for one of the prompt's
// markers: <agent2>, <end of agent1>, </agent1>, <END OF ORIGINAL MESSAGE>, < current answers>,
// in any case and spacing. It is deliberately wider than the markers themselves, because the
// reader that matters is a model, not a parser.
var delimiterLike = regexp.MustCompile(`(?i)<(\s*/?\s*(?:end\s+of\b|agent\s*\d|original\s+message|current\s+answers|` +
	`conversation\s+history|voting\s+results|all\s+answers))`)

// Escape neutralises every marker-like tag in text that came from a model or a user (answers,
// vote reasons, the question, history), so that it cannot end the section it sits in and forge
// another: "<end of agent1>" becomes "‹end of agent1>". Everything else is left as it was.
//
// Escaping, rather than unguessable per-session markers, keeps MassGen's prompt layout and
// stable prefixes (P10), and protects against a model being fooled by a near-miss marker,
// which a nonce the model is never told to check would not.
func Escape(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	return delimiterLike.ReplaceAllString(text, "‹$1")
}

func blocks(answers []Answer) string {
	parts := make([]string, len(answers))
	for i, a := range answers {
		parts[i] = Block(a)
	}
	return strings.Join(parts, "\n\n")
}

var sensitivity = map[string]string{
	"lenient": "Vote when the best current answer handles the original message well. " +
		"Write a new answer only when you can clearly do better.",
	"balanced": "Check the best current answer for completeness and accuracy. Vote only if it is " +
		"strong and complete and could not be improved in a meaningful way; otherwise write a better one.",
	"strict": "Hold the answers to a high bar: every part of the request, edge cases included, handled " +
		"at reference quality. Vote only for an answer that meets it; otherwise write one that does.",
}

var novelty = map[string]string{
	"balanced": "A new answer must take a meaningfully different approach from the current ones; " +
		"near-copies are rejected.",
	"strict": "A new answer must be substantially different from every current answer; " +
		"anything close to an existing one is rejected.",
}

// System returns the coordination system prompt: the agent's own system message, then the
// rules of coordination.
func System(agentSystem, votingSensitivity, answerNovelty string) string {
	var b strings.Builder
	if s := strings.TrimSpace(agentSystem); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString(`You are one of several agents working on the same request. Each agent writes a complete answer; ` +
		`the agents read each other's answers, shown anonymously as agent1, agent2, and so on, and vote for the best. ` +
		`The answer with the most votes is presented to the user.

How to take your turn:
- Read the ORIGINAL MESSAGE and the CURRENT ANSWERS.
- Ask one question: does the best current answer address the original message well?
- If it does, call vote with that answer's agent label and a short reason. Do not write a new answer.
- If it does not, or there are no answers yet, call new_answer with a complete, improved answer that keeps the ` +
		`strengths of the current answers and fixes their weaknesses. It must stand on its own: the reader will not see the others.

Rules:
- End every turn with exactly one tool call: new_answer or vote. Plain text alone does not count.
- Vote only for a label listed among the current answers; you may vote for your own answer.
- Never ask the user for clarification; make reasonable assumptions and state them.
`)
	s := sensitivity[votingSensitivity]
	if s == "" {
		s = sensitivity["lenient"]
	}
	b.WriteString("- " + s + "\n")
	if n := novelty[answerNovelty]; n != "" {
		b.WriteString("- " + n + "\n")
	}
	return b.String()
}

// User returns the first message of a coordination conversation: earlier turns of an
// interactive session, the original message and the current answers.
func User(question string, history []provider.Message, answers []Answer) string {
	var b strings.Builder
	if len(history) > 0 {
		b.WriteString("<CONVERSATION HISTORY>\n")
		for _, m := range history {
			who := "User"
			if m.Role == provider.RoleAssistant {
				who = "Assistant"
			}
			fmt.Fprintf(&b, "%s: %s\n", who, Escape(m.Content))
		}
		b.WriteString("<END OF CONVERSATION HISTORY>\n\n")
	}
	b.WriteString("<ORIGINAL MESSAGE>\n")
	b.WriteString(Escape(question))
	b.WriteString("\n<END OF ORIGINAL MESSAGE>\n\n<CURRENT ANSWERS>\n")
	if len(answers) == 0 {
		b.WriteString("(none yet: you are among the first to answer, so call new_answer)\n")
	} else {
		b.WriteString(blocks(answers))
		b.WriteString("\n")
	}
	b.WriteString("<END OF CURRENT ANSWERS>")
	return b.String()
}

// Update tells an agent what changed since it last looked: the answers accepted since then.
// lead says why it is being told (its answer was recorded, its vote went stale, ...).
func Update(lead string, newAnswers []Answer) string {
	var b strings.Builder
	b.WriteString(lead)
	if len(newAnswers) > 0 {
		b.WriteString("\n\nNew or revised answers since you last looked (they replace earlier answers under the same label):\n\n")
		b.WriteString(blocks(newAnswers))
	}
	b.WriteString("\n\nEvaluate the current answers again and finish with exactly one call: vote or new_answer.")
	return b.String()
}

// Enforcement is sent when a response made no workflow tool call.
const Enforcement = "You did not call a tool. Finish your turn by calling exactly one of the tools: " +
	"vote (if the best current answer is good) or new_answer (with a complete, better answer)."

// VoteResult is the outcome of the vote as the presenter is told it.
type VoteResult struct {
	Votes   int
	Reasons []string
	Tie     bool
}

// PresentationSystem is the winner's system prompt for the final presentation.
func PresentationSystem(agentSystem string) string {
	var b strings.Builder
	if s := strings.TrimSpace(agentSystem); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString("The other agents voted for your answer. Now write the final answer for the user: " +
		"the best, complete response to the original message, combining the strengths of every answer you are shown " +
		"and fixing their weaknesses. Write it for the user directly; do not mention agents, votes or this process.")
	return b.String()
}

// PresentationUser is the winner's message for the final presentation: the original message,
// the vote result for its answer, and every current answer, its own marked.
func PresentationUser(question string, own string, vr VoteResult, answers []Answer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE>\n%s\n<END OF ORIGINAL MESSAGE>\n\n<VOTING RESULTS>\n", Escape(question))
	fmt.Fprintf(&b, "Your answer (%s) received %d vote(s).", own, vr.Votes)
	if vr.Tie {
		b.WriteString(" Another answer had as many votes; the tie was broken in your favour by agent order.")
	}
	b.WriteString("\n")
	for _, r := range vr.Reasons {
		if r = strings.TrimSpace(r); r != "" {
			// One line each: a reason cannot add lines that pass for other voters' reasons.
			fmt.Fprintf(&b, "- %s\n", Escape(strings.Join(strings.Fields(r), " ")))
		}
	}
	b.WriteString("<END OF VOTING RESULTS>\n\n<ALL ANSWERS>\n")
	for i, a := range answers {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if a.Label == own {
			fmt.Fprintf(&b, "(your own answer)\n")
		}
		b.WriteString(Block(a))
	}
	b.WriteString("\n<END OF ALL ANSWERS>\n\nPresent the final answer now.")
	return b.String()
}

// Tools returns the workflow tools. The vote enum lists only labels that have an answer (P2);
// with none, vote is still offered so that a model that calls it gets a clear error.
func Tools(voteLabels []string) []provider.ToolSpec {
	agentID := map[string]any{
		"type":        "string",
		"description": "The label of the agent whose answer you vote for, such as agent1.",
	}
	if len(voteLabels) > 0 {
		enum := make([]any, len(voteLabels))
		for i, l := range voteLabels {
			enum[i] = l
		}
		agentID["enum"] = enum
	}
	return []provider.ToolSpec{
		{
			Name:        "new_answer",
			Description: "Submit a new, complete answer to the original message that improves on the current answers.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"content": map[string]any{"type": "string", "description": "Your complete answer."},
				},
				"required": []any{"content"},
			},
		},
		{
			Name:        "vote",
			Description: "Vote for the agent whose current answer is best; it will present the final answer.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"agent_id": agentID,
					"reason":   map[string]any{"type": "string", "description": "A brief reason for your choice."},
				},
				"required": []any{"agent_id", "reason"},
			},
		},
	}
}
