package subagent

import (
	"fmt"
	"strings"
)

// The kinds the orchestrator launches itself (Manager.Launch): the round evaluator, a
// MassGen subagent type agents may also spawn unless the orchestrator manages it, and the
// critic of criteria_mode: bootstrap_subagent, which no agent is offered.
const (
	KindRoundEvaluator = "round_evaluator"
	KindCriteriaCritic = "criteria_critic"
)

// profiles are the specialised subagent types: what each one is for, added to its agents'
// system messages. The names are MassGen's; the words are this build's.
var profiles = map[string]string{
	"evaluator": "You are an evaluator subagent. Verify procedurally: run the checks, tests or commands the brief names, " +
		"exactly, and report what passed, what failed and the evidence (output, files). Describe; do not fix.",
	"explorer": "You are an explorer subagent. Map the files, code and call paths that answer the brief's questions; " +
		"report the relevant paths with short findings, most relevant first.",
	"researcher": "You are a researcher subagent. Gather evidence on the brief's question from the sources you can reach, " +
		"say where each fact comes from, and separate what is established from what is not.",
	"novelty": "You are a novelty subagent. The team is stuck making small changes: propose two or three fundamentally " +
		"different approaches to the brief, each with why it could be better. Do not evaluate the current work.",
	"critic": "You are a critic subagent. Find the weaknesses of the work the brief describes: errors, gaps, unsupported " +
		"claims, and what a demanding reviewer would reject, most serious first.",
	KindRoundEvaluator: RoundEvaluatorProfile,
	KindCriteriaCritic: CriteriaCriticProfile,
	"builder": "You are a builder subagent. Produce the artefact the brief asks for, complete and working, in your workspace, " +
		"and say in your answer which files hold it.",
}

const generic = "You are a subagent: one agent of a larger team handed you a subtask. Your answer goes back to that " +
	"agent, so make it complete and self-contained: it does not see your workspace or your reasoning."

// system is what a subagent of kind adds to its agents' system messages.
func system(kind string) string {
	if p, ok := profiles[kind]; ok {
		return generic + "\n\n" + p
	}
	return generic
}

// question is what a subagent's team is asked.
func question(context, task string) string {
	var b strings.Builder
	if c := strings.TrimSpace(context); c != "" {
		fmt.Fprintf(&b, "Context (from the agent that asked):\n%s\n\n", c)
	}
	fmt.Fprintf(&b, "Your task:\n%s", strings.TrimSpace(task))
	return b.String()
}

// The profiles of the two subagents the orchestrator launches itself. Each starts with a
// sentence of its own, which scripted agents recognise their role by.
const (
	CriteriaCriticProfile = "You are a criteria critic subagent. Read the task and the current answers, and write the evaluation criteria " +
		"a clearly stronger answer would meet that none of the current answers does: specific to this task, each checkable by reading an answer. " +
		"Do not restate criteria already listed. Reply with JSON only, in this shape: " +
		`{"proposed_criteria": [{"text": "...", "category": "standard"}]}` +
		" (category standard for what must hold, stretch for what distinguishes excellent work)."
	RoundEvaluatorProfile = "You are a round evaluator subagent. Inspect the candidate answers together and return a demanding critique " +
		"and one committed improvement brief for the agent that writes the next revision. Be critical: assume meaningful weaknesses remain " +
		"unless the evidence rules them out; mention strengths only when they must be preserved."
)
