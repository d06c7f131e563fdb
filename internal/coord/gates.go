package coord

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The gates of MassGen v0.1.9x's coordination settings (max_new_answers_global,
// defer_voting_until_all_answered, skip_voting and the fairness caps), as pure functions of the
// machine's state. MassGen's AnswerLimitGate and FairnessGate are the reference; where we differ
// the comment says why.

// TotalAnswers is how many answers have been accepted over all agents, dead ones included.
func (m *Machine) TotalAnswers() int {
	n := 0
	for _, a := range m.agents {
		n += len(a.answers)
	}
	return n
}

// GlobalCapReached reports whether MaxNewAnswersGlobal allows no more answers.
func (m *Machine) GlobalCapReached() bool {
	return m.s.MaxNewAnswersGlobal > 0 && m.TotalAnswers() >= m.s.MaxNewAnswersGlobal
}

// AllAnswered reports whether every live agent has at least one answer (and one is live).
func (m *Machine) AllAnswered() bool {
	return m.Live() > 0 && len(m.Unanswered()) == 0
}

// Unanswered lists the live agents in play (not held back by lazy start) without an answer,
// in agent order.
func (m *Machine) Unanswered() []int {
	var out []int
	for i, a := range m.agents {
		if !a.dead && !a.held && len(a.answers) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// Blocked says why agent i, live and holding no vote, must not start a turn now, or "" when
// nothing holds it back:
//   - DeferVoting: it cannot usefully act until every live agent has answered, because it
//     voted already or has used up its own answers (MassGen's is_waiting_for_all_answers).
//     Reaching MaxNewAnswersGlobal opens voting at once, as in MassGen.
//   - FairnessPause: another answer would put it over the lead cap (MassGen's pre-start
//     fairness pause); it waits for the slower agents to answer or vote.
//
// The agent that blocks nobody always exists: the one with the fewest answers is never paused,
// and an agent without an answer never waits, so coordination cannot deadlock on these gates.
func (m *Machine) Blocked(i int) string {
	a := m.agents[i]
	if a.held {
		return lazyHeldReason
	}
	if m.awaitingSecondOpinion(i) {
		return lazyAloneReason
	}
	if m.waitingForAnswers(i) {
		return "voting opens once every agent has answered; waiting for " + labelList(m.Unanswered())
	}
	if m.s.FairnessPause && len(a.answers) > 0 {
		if lead, over := m.overLeadCap(i); over {
			return fmt.Sprintf("fairness: another answer would put it %d answers ahead of the slowest active agent "+
				"(orchestrator.fairness_lead_cap_answers is %d); waiting for the others to answer or %s", lead, m.s.LeadCap, m.terminal())
		}
	}
	return ""
}

func (m *Machine) waitingForAnswers(i int) bool {
	a := m.agents[i]
	if !m.s.DeferVoting || m.s.SkipVoting || len(a.answers) == 0 || m.GlobalCapReached() || m.AllAnswered() {
		return false
	}
	capped := m.s.MaxNewAnswersPerAgent > 0 && len(a.answers) >= m.s.MaxNewAnswersPerAgent
	return a.deferred || capped
}

// overLeadCap reports the lead agent i would have over the slowest other active agent after
// one more answer, and whether that is over LeadCap. Active agents are the live ones without a
// current vote, as in MassGen: an agent that voted is done, not slow. With no other active
// agent there is nobody to wait for.
func (m *Machine) overLeadCap(i int) (lead int, over bool) {
	if m.s.LeadCap <= 0 || !m.active(i) {
		return 0, false
	}
	slowest := -1
	for k := range m.agents {
		if k != i && m.active(k) && (slowest < 0 || len(m.agents[k].answers) < slowest) {
			slowest = len(m.agents[k].answers)
		}
	}
	if slowest < 0 {
		return 0, false
	}
	lead = len(m.agents[i].answers) + 1 - slowest
	return lead, lead > m.s.LeadCap
}

func (m *Machine) active(i int) bool {
	if m.agents[i].dead || m.agents[i].held {
		return false
	}
	_, voted := m.CurrentVote(i)
	return !voted && !(m.s.Decomposition && m.Done(i))
}

// Unseen returns the current answers of the agents other than i that are newer than what i has
// been shown (shown[k] is how many of agent k's answers it has seen), newest first: the order in
// which MassGen picks the updates it injects into a busy agent's turn when
// max_midstream_injections_per_round allows only some of them.
func (m *Machine) Unseen(i int, shown []int) []Answer {
	var out []Answer
	for k := range m.agents {
		if k == i || len(m.agents[k].answers) <= shown[k] {
			continue
		}
		a, _ := m.Current(k)
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Answer) int { return cmp.Compare(b.Version, a.Version) })
	return out
}

func labelList(agents []int) string {
	labels := make([]string, len(agents))
	for k, i := range agents {
		labels[k] = Label(i)
	}
	return strings.Join(labels, ", ")
}
