package prompt

import (
	"fmt"
	"strings"
)

// Turn is what follows the shared prefix (the task and the current answers, the same for
// every agent that sees the same answers) in a turn laid out for the providers' prompt caches:
// everything that is the agent's own. own is the agent's label when one of the answers shown
// is its own ("" otherwise); lead says what happened since its last turn ("" for none); shown
// and total, when shown < total, say that it reads a bounded view of its peers. It returns ""
// when there is nothing to say, as on an agent's first turn, so that this first request is
// the same for every agent.
func Turn(own, lead string, shown, total int, voting bool) string {
	var parts []string
	if lead = strings.TrimSpace(lead); lead != "" {
		parts = append(parts, lead)
	}
	if own != "" {
		parts = append(parts, fmt.Sprintf(ownLine, own))
	}
	if shown < total {
		parts = append(parts, fmt.Sprintf("You are shown %d of the %d current answers: those with the most votes first, then a sample "+
			"that changes from turn to turn. Vote only for one of the answers shown.", shown, total))
	}
	if len(parts) == 0 {
		return ""
	}
	closing := "Evaluate the current answers and finish with exactly one call: vote or new_answer."
	if !voting {
		closing = "Finish with your complete answer in a new_answer call."
	}
	return strings.Join(append(parts, closing), "\n\n")
}

// TurnParts is Turn in decomposition mode, where every agent reads every part.
func TurnParts(own, lead string) string {
	var parts []string
	if lead = strings.TrimSpace(lead); lead != "" {
		parts = append(parts, lead)
	}
	if own != "" {
		parts = append(parts, fmt.Sprintf(ownLine, own))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(append(parts, "Work on your subtask and finish with exactly one call: new_answer (you improved your part) or stop (your part is done)."), "\n\n")
}

// ownLine tells an agent which of the answers in the shared prefix is its own. The scripted
// backend reads it back, as a model would, when it takes up a resumed session.
const ownLine = "Your own current answer is the one labelled %s above."

// CoordinationOver is the result of a workflow call still open when the presenter's
// conversation goes on into the final presentation.
const CoordinationOver = "Coordination is over: no more answers or votes are taken."

// PresentNoWorkflow is the result of a vote or new_answer call made during the final
// presentation, which continues a conversation that offered them.
const PresentNoWorkflow = "Error: coordination is over; do not call vote or new_answer: write the final answer as plain text."

// Continued is the message that turns the presenter's coordination conversation into the
// final presentation (orchestrator.presentation_context: continue): what to do, the vote, and
// the answers it has not been shown yet (p.Answers holds only those). Its conversation so far,
// whose prefix the provider has cached, holds the task and the other answers.
func (p Presentation) Continued() string {
	var b strings.Builder
	b.WriteString("Coordination is over. ")
	b.WriteString(p.System(""))
	b.WriteString(" Do not call vote or new_answer: write the final answer as plain text (you may still use your other tools).\n\n")
	b.WriteString(p.votes())
	if len(p.Answers) > 0 {
		b.WriteString("\n<ANSWERS YOU HAVE NOT SEEN YET>\n")
		b.WriteString(p.answerBlocks())
		b.WriteString("\n<END OF ANSWERS YOU HAVE NOT SEEN YET>\n")
	}
	b.WriteString("\n")
	if p.synthesize() {
		b.WriteString("Synthesize the final answer now.")
	} else {
		b.WriteString("Present the final answer now.")
	}
	return b.String()
}
