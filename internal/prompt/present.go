package prompt

import (
	"fmt"
	"strings"

	"massgen/internal/provider"
)

// Final answer strategies, as config names them (orchestrator.final_answer_strategy).
const (
	strategyPresent    = "winner_present"
	strategySynthesize = "synthesize"
)

// VoteResult is the outcome of the vote as the presenter is told it.
type VoteResult struct {
	Votes   int
	Reasons []string
	Tie     bool
}

// Presentation is what the agent writing the final answer is shown.
type Presentation struct {
	Question string
	// History holds the earlier turns of an interactive session: the presenter sees the
	// conversation like every coordination step did.
	History []provider.Message
	// Strategy is winner_present ("" means it) or synthesize.
	Strategy string
	// Presenter and Winner are the labels of the presenting agent and of the agent whose
	// answer won (the same unless presenter_agent names another agent).
	Presenter, Winner string
	// Voted is false when the session had no vote (skip_voting): there is no winner to favour.
	Voted   bool
	Votes   VoteResult
	Answers []Answer
	// Changedoc: the presenter has a workspace and the session keeps decision journals.
	Changedoc bool
}

func (p Presentation) synthesize() bool { return p.Strategy == strategySynthesize }

// System returns the presenter's system prompt: its own system message, then what to do.
func (p Presentation) System(agentSystem string) string {
	var b strings.Builder
	if s := strings.TrimSpace(agentSystem); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	switch {
	case p.synthesize() && p.Voted:
		fmt.Fprintf(&b, "%s Now write the final answer for the user by synthesizing the best of all the answers you are shown "+
			"into one response: use %s as the primary basis, and actively bring in the strongest parts of the other answers "+
			"wherever they make it more complete, accurate or deep.", p.votedFor(), p.winnerAnswer())
	case p.synthesize():
		b.WriteString("Now write the final answer for the user by synthesizing the strongest relevant parts of all the answers you " +
			"are shown into one response. No answer is favoured: take from each what is best.")
	case p.Presenter == p.Winner && p.Voted:
		b.WriteString("The other agents voted for your answer. Now write the final answer for the user: " +
			"the best, complete response to the original message, combining the strengths of every answer you are shown " +
			"and fixing their weaknesses.")
	case p.Voted:
		fmt.Fprintf(&b, "You have been chosen to write the final answer. %s Now write the final answer for the user: the best, "+
			"complete response to the original message, using %s as the primary basis, combining the strengths of every "+
			"answer you are shown and fixing their weaknesses.", p.votedFor(), p.winnerAnswer())
	default:
		b.WriteString("Now write the final answer for the user: the best, complete response to the original message, " +
			"using your own answer as the primary basis and adding what the other answers you are shown do better.")
	}
	if p.synthesize() {
		b.WriteString(" Keep concrete details (exact values, names, steps, code) as specific as the most detailed answer gave them; " +
			"where answers overlap, keep the most specific version and merge in what the others add, rather than restating one answer.")
	}
	if p.Changedoc {
		b.WriteString(ChangedocPresenter)
	}
	b.WriteString(" Write it for the user directly; do not mention agents, votes or this process.")
	return b.String()
}

func (p Presentation) votedFor() string {
	if p.Presenter == p.Winner {
		return fmt.Sprintf("The agents voted your answer (%s) the best.", p.Winner)
	}
	return fmt.Sprintf("The agents voted %s's answer the best.", p.Winner)
}

func (p Presentation) winnerAnswer() string {
	if p.Presenter == p.Winner {
		return "your answer"
	}
	return p.Winner + "'s answer"
}

// User returns the presenter's message: the conversation so far, the original message, the
// vote result, and every current answer, its own marked (MassGen hides the mark when
// synthesizing without a vote, so that no answer is favoured).
func (p Presentation) User() string {
	var b strings.Builder
	writeHistory(&b, p.History)
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE>\n%s\n<END OF ORIGINAL MESSAGE>\n\n", Escape(p.Question))
	b.WriteString(p.votes())
	b.WriteString("\n<ALL ANSWERS>\n")
	b.WriteString(p.answerBlocks())
	b.WriteString("\n<END OF ALL ANSWERS>\n\n")
	if p.synthesize() {
		b.WriteString("Synthesize the final answer now.")
	} else {
		b.WriteString("Present the final answer now.")
	}
	return b.String()
}

// votes is the vote result as the presenter reads it, one reason a line.
func (p Presentation) votes() string {
	var b strings.Builder
	b.WriteString("<VOTING RESULTS>\n")
	switch {
	case !p.Voted:
		b.WriteString("No vote was held in this session.\n")
	case p.Presenter == p.Winner:
		fmt.Fprintf(&b, "Your answer (%s) received %d vote(s).", p.Winner, p.Votes.Votes)
	default:
		fmt.Fprintf(&b, "The answer of %s received the most votes: %d.", p.Winner, p.Votes.Votes)
	}
	if p.Voted {
		switch {
		case p.Votes.Tie && p.Presenter == p.Winner:
			b.WriteString(" Another answer had as many votes; the tie was broken in your favour by agent order.")
		case p.Votes.Tie:
			b.WriteString(" Another answer had as many votes; the tie was broken by agent order.")
		}
		b.WriteString("\n")
		for _, r := range p.Votes.Reasons {
			if r = strings.TrimSpace(r); r != "" {
				// One line each: a reason cannot add lines that pass for other voters' reasons.
				fmt.Fprintf(&b, "- %s\n", Escape(strings.Join(strings.Fields(r), " ")))
			}
		}
	}
	b.WriteString("<END OF VOTING RESULTS>\n")
	return b.String()
}

// answerBlocks renders p.Answers, the presenter's own marked.
func (p Presentation) answerBlocks() string {
	var b strings.Builder
	mark := p.Voted || !p.synthesize()
	for i, a := range p.Answers {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if mark && a.Label == p.Presenter {
			b.WriteString(ownMarker)
		}
		b.WriteString(Block(a))
	}
	return b.String()
}

// ownMarker precedes the presenter's own answer block. The scripted backend reads it back.
const ownMarker = "(your own answer)\n"

// PresentationSystem is the winner's system prompt for the final presentation after it won
// the vote; with coordination skipped it is the only agent asked.
func PresentationSystem(agentSystem string) string {
	return Presentation{Presenter: "x", Winner: "x", Voted: true}.System(agentSystem)
}

// PresentationUser is the winner's message for the final presentation: the original message,
// the vote result for its answer, and every current answer, its own marked.
func PresentationUser(question string, own string, vr VoteResult, answers []Answer) string {
	return Presentation{Question: question, Presenter: own, Winner: own, Voted: true, Votes: vr, Answers: answers}.User()
}

// Direct is the message of a presenter asked without coordination (skip_coordination_rounds):
// the question as is, after the conversation so far when there is one.
func Direct(question string, history []provider.Message) string {
	if len(history) == 0 {
		return question
	}
	var b strings.Builder
	writeHistory(&b, history)
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE>\n%s\n<END OF ORIGINAL MESSAGE>", Escape(question))
	return b.String()
}
