// Package prompt builds what agents read: the coordination and presentation prompts, the
// update that brings a busy agent up to date, and the workflow tool specs. Stable parts come
// first and volatile parts last, with no timestamps, so provider prompt caches keep hitting (P10).
package prompt

import (
	"maps"
	"massgen/internal/coord"
	"massgen/internal/lazy"

	"fmt"
	"strings"

	"massgen/internal/provider"
)

// Answer is an answer as an agent sees it: under its anonymous agent label only.
type Answer struct {
	Label   string // agent<i>
	Content string
	// Changedoc is the decision journal its author kept with it (coordination.enable_changedoc),
	// "" when none.
	Changedoc string
}

// Block renders one answer the way every prompt shows answers. The scripted backend reads
// these blocks back, so the format is part of the contract. The content is escaped: it cannot
// close its own block or open another one.
func Block(a Answer) string {
	if a.Changedoc != "" {
		return fmt.Sprintf("<%s>\n%s\n<changedoc>\n%s\n</changedoc>\n<end of %s>", a.Label, Escape(a.Content), Escape(a.Changedoc), a.Label)
	}
	return fmt.Sprintf("<%s>\n%s\n<end of %s>", a.Label, Escape(a.Content), a.Label)
}

// delimiterLike matches the start of anything a reader could take for one of the prompt's
// markers: <agent2>, <end of agent1>, </agent1>, </changedoc>, <END OF ORIGINAL MESSAGE>, <PARAPHRASED MESSAGE>, < current answers>,
// in any case and spacing. It is deliberately wider than the markers themselves, because the
// reader that matters is a model, not a parser.
var delimiterLike = lazy.Regexp(`(?i)<(\s*/?\s*(?:end\s+of\b|agent\s*\d|changedoc\b|original\s+message|paraphrased\s+message|current\s+answers|` +
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
	return delimiterLike().ReplaceAllString(text, "‹$1")
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

// Coordination is what an agent's coordination system prompt says besides the rules.
type Coordination struct {
	AgentSystem string // the agent's own system message
	// Persona is persona_generator's persona for the agent ("" for none).
	Persona           string
	VotingSensitivity string
	AnswerNovelty     string
	// SkipVoting: the session has no vote; DeferVoting: votes wait for every agent's answer.
	SkipVoting, DeferVoting bool
	// Checklist is the checklist voting section (ChecklistSection); it replaces the voting
	// sensitivity's line.
	Checklist string
	// Decomposition: the agent owns Subtask ("" when none was assigned) and ends its turns
	// with new_answer or stop; PartCriteria, when set, are what its part must meet first.
	Decomposition bool
	Subtask       string
	PartCriteria  []string
	// Changedoc: the agent keeps a decision journal in its workspace (enable_changedoc).
	Changedoc bool
	// TaskPlanning: the agent has the planning tools (enable_agent_task_planning);
	// TaskPlanFile: its plan is also in tasks/plan.json in its workspace.
	TaskPlanning, TaskPlanFile bool
}

// System returns the coordination system prompt: the agent's own system message, then the
// rules of coordination.
func System(agentSystem, votingSensitivity, answerNovelty string) string {
	return SystemFor(Coordination{AgentSystem: agentSystem, VotingSensitivity: votingSensitivity, AnswerNovelty: answerNovelty})
}

// SystemFor returns the coordination system prompt for c: the agent's own system message, its
// persona, then the rules of coordination. It is the same for every turn of a session (P10).
func SystemFor(c Coordination) string {
	s := systemRules(c)
	if c.Changedoc {
		s += "\n" + ChangedocSection
	}
	if c.TaskPlanning {
		s += "\n" + TaskPlanningSection(c.TaskPlanFile)
	}
	return s
}

func systemRules(c Coordination) string {
	var b strings.Builder
	if s := strings.TrimSpace(c.AgentSystem); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	if p := strings.TrimSpace(c.Persona); p != "" {
		b.WriteString(personaSection(p))
	}
	if c.Decomposition {
		decompositionRules(&b, c)
		return b.String()
	}
	if c.SkipVoting {
		b.WriteString(`You are one of several agents working on the same request. Each agent writes a complete answer ` +
			`of its own; there is no vote, and the final answer is made from the agents' answers.

How to take your turn:
- Read the ORIGINAL MESSAGE and any CURRENT ANSWERS, shown anonymously as agent1, agent2, and so on.
- Call new_answer with your complete answer. It must stand on its own: the reader will not see the others.

Rules:
- End your turn with the new_answer tool call. Plain text alone does not count.
- Never ask the user for clarification; make reasonable assumptions and state them.
`)
		if n := novelty[c.AnswerNovelty]; n != "" {
			b.WriteString("- " + n + "\n")
		}
		return b.String()
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
	if c.DeferVoting {
		b.WriteString("- Voting opens once every agent has submitted an answer; until you have one, submit yours with new_answer.\n")
	}
	s := sensitivity[c.VotingSensitivity]
	if s == "" {
		s = sensitivity["lenient"]
	}
	if c.Checklist != "" {
		s = c.Checklist
	}
	b.WriteString("- " + s + "\n")
	if n := novelty[c.AnswerNovelty]; n != "" {
		b.WriteString("- " + n + "\n")
	}
	return b.String()
}

// User returns the first message of a coordination conversation: earlier turns of an
// interactive session, the original message and the current answers.
func User(question string, history []provider.Message, answers []Answer) string {
	return UserFor(question, "", history, answers)
}

// UserFor is User for an agent that also reads paraphrase, a checked rewording of the
// question (orchestrator.dspy), after the original, as MassGen's PARAPHRASED MESSAGE block;
// "" shows the original alone. The original stays the question answered and voted on.
func UserFor(question, paraphrase string, history []provider.Message, answers []Answer) string {
	var b strings.Builder
	writeHistory(&b, history)
	b.WriteString("<ORIGINAL MESSAGE>\n")
	b.WriteString(Escape(question))
	b.WriteString("\n<END OF ORIGINAL MESSAGE>\n\n")
	if paraphrase != "" {
		b.WriteString("<PARAPHRASED MESSAGE>\n")
		b.WriteString(Escape(paraphrase))
		b.WriteString("\n<END OF PARAPHRASED MESSAGE>\n\n")
	}
	b.WriteString("<CURRENT ANSWERS>\n")
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
	return update(lead, newAnswers, "Evaluate the current answers again and finish with exactly one call: vote or new_answer.")
}

// UpdateNoVote is Update for a session without a vote (skip_voting).
func UpdateNoVote(lead string, newAnswers []Answer) string {
	return update(lead, newAnswers, "Finish with your complete answer in a new_answer call.")
}

func update(lead string, newAnswers []Answer, closing string) string {
	var b strings.Builder
	b.WriteString(lead)
	if len(newAnswers) > 0 {
		b.WriteString("\n\nNew or revised answers since you last looked (they replace earlier answers under the same label):\n\n")
		b.WriteString(blocks(newAnswers))
	}
	b.WriteString("\n\n" + closing)
	return b.String()
}

// writeHistory writes the earlier turns of an interactive session, if any, as every prompt
// that carries the conversation shows them.
func writeHistory(b *strings.Builder, history []provider.Message) {
	if len(history) == 0 {
		return
	}
	b.WriteString("<CONVERSATION HISTORY>\n")
	for _, m := range history {
		who := "User"
		if m.Role == provider.RoleAssistant {
			who = "Assistant"
		}
		fmt.Fprintf(b, "%s: %s\n", who, Escape(m.Content))
	}
	b.WriteString("<END OF CONVERSATION HISTORY>\n\n")
}

// VotingOpen leads the update an agent gets after its vote was held back by
// defer_voting_until_all_answered, when it may vote at last.
const VotingOpen = "Your vote was not counted: voting opens only once every agent has an answer. " +
	"Now every agent has answered (or no more answers are accepted), so voting is open."

// Enforcement is sent when a response made no workflow tool call.
const Enforcement = "You did not call a tool. Finish your turn by calling exactly one of the tools: " +
	"vote (if the best current answer is good) or new_answer (with a complete, better answer)."

// EnforcementNoVote is Enforcement for a session without a vote (skip_voting).
const EnforcementNoVote = "You did not call a tool. Finish your turn by calling new_answer with your complete answer."

// AnswerTools returns the workflow tools of a session without a vote (skip_voting): new_answer
// only, so that the model is not offered a tool that can only be refused.
func AnswerTools() []provider.ToolSpec { return Tools(nil)[:1] }

// confidenceParam is the optional confidence argument of new_answer and vote.
var confidenceParam = map[string]any{
	"type": "number", "minimum": 0, "maximum": 1,
	"description": "Optional: the probability, from 0 to 1, that the answer is right (0.9 sure, 0.5 unsure). " +
		"Votes are weighed by it, so state it honestly.",
}

// WithConfidence returns tools with an optional confidence argument added to new_answer and
// vote (vote_weighting: confidence). Other sessions are not told of it, so that their
// prompts, and what providers cache of them, stay as they were.
func WithConfidence(tools []provider.ToolSpec) []provider.ToolSpec {
	out := make([]provider.ToolSpec, len(tools))
	for i, t := range tools {
		out[i] = t
		if t.Name != coord.ToolNewAnswer && t.Name != coord.ToolVote {
			continue
		}
		params := maps.Clone(t.Parameters)
		props, _ := params["properties"].(map[string]any)
		props = maps.Clone(props)
		props["confidence"] = confidenceParam
		params["properties"] = props
		out[i].Parameters = params
	}
	return out
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
			Name:        coord.ToolNewAnswer,
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
			Name:        coord.ToolVote,
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
