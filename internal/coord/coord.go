// Package coord is the coordination protocol as a pure state machine: answers and their
// versions, votes, invalidation, failure budgets, termination and the winner. It does no I/O,
// starts no goroutines and reads no clock; the engine drives it and is the only caller.
package coord

import (
	"strconv"
	"strings"

	"massgen/internal/criteria"
)

// Settings configure a Machine.
type Settings struct {
	// Agents is the number of agents; agent i (0-based) is labelled agent<i+1>.
	Agents int
	// MaxNewAnswersPerAgent caps accepted answers per agent; 0 means unlimited.
	MaxNewAnswersPerAgent int
	// Novelty is lenient (no check), balanced (reject above 0.70 Jaccard overlap with a current
	// answer) or strict (above 0.50).
	Novelty string
	// FailureBudget is how many consecutive failed turns make an agent dead (at least 1).
	FailureBudget int
	// MaxAnswerChars rejects a new answer longer than this many characters; 0 means no limit.
	MaxAnswerChars int
	// CheckAnswer, when set, checks a new answer's content after the length check; its error
	// rejects the answer and is the model's feedback (a planning run's answer must hold a
	// valid plan). It must be pure: Resolve stays a function of the state and the call.
	CheckAnswer func(content string) error
	// MaxNewAnswersGlobal caps accepted answers over all agents together
	// (max_new_answers_global); once reached, agents can only vote. 0 means unlimited.
	MaxNewAnswersGlobal int
	// DeferVoting (defer_voting_until_all_answered): no vote counts until every live agent has
	// an answer; an agent that voted early, or cannot answer again, waits until then.
	DeferVoting bool
	// SkipVoting: there is no vote. An agent takes turns until it has an answer, and
	// coordination is over once every live agent has one (or MaxNewAnswersGlobal is reached).
	SkipVoting bool
	// LeadCap (fairness_lead_cap_answers) rejects a new answer that would put its agent more
	// than LeadCap answers ahead of the slowest active agent (live, holding no current vote);
	// 0 means no cap. An agent's first answer is never held back.
	LeadCap int
	// FairnessPause keeps an agent at the lead cap from starting a turn until the others catch
	// up or vote (MassGen's pre-start pause), instead of letting it start a turn in which it
	// can only vote.
	FairnessPause bool
	// Checklist, when set, gates votes on checklists (voting_sensitivity: checklist_gated).
	Checklist *ChecklistSettings
	// Lazy, when set, starts only the first agents and holds the others back until the first
	// disagree (adaptive consistency; see lazy.go).
	Lazy *LazySettings
	// Decomposition runs decomposition mode (decompose.go): stop replaces vote. It excludes
	// SkipVoting, DeferVoting, Checklist and Lazy, which are about votes.
	Decomposition bool
	// Voting says what a vote is worth (weights.go); the zero value is a plain majority.
	Voting Weighting
}

// Answer is one accepted answer.
type Answer struct {
	Agent   int    // 0-based agent index
	Label   string // agent<i>.<k>
	Content string
	// Version is the answer-set version this answer started.
	Version int
	// Confidence is the confidence its author stated (0 to 1), nil when it stated none.
	Confidence *float64
}

// Vote is one accepted vote.
type Vote struct {
	Voter, Target int
	TargetLabel   string // agent<j>
	AnswerLabel   string // agent<j>.<k>, the answer voted for
	Reason        string
	// Confidence is the confidence the voter stated (0 to 1), nil when it stated none; under
	// confidence weighting it scales the vote (weights.go).
	Confidence *float64
	// Version is the answer-set version the voter saw; the vote counts while it is current.
	Version int
	// View, for a voter that reads a bounded view of its peers (SetView), is how many answers
	// of each agent it had been shown (0: none of that agent's); the vote counts while every
	// answer it was shown is still its agent's current one, whatever else was answered.
	View []int
}

type agentState struct {
	answers  []Answer
	vote     *Vote
	failures int
	dead     bool
	// deferred: the agent voted before every agent had answered (DeferVoting); it waits.
	deferred bool
	// view is what the agent is shown when it reads a bounded view of its peers (SetView).
	view []int
	// checklist is the agent's latest accepted checklist; checklistCalls counts those of
	// its current turn.
	checklist      *Checklist
	checklistCalls int
	// criteria are the criteria of its current round; proposed counts the criteria it
	// proposed this round (bootstrap_inline).
	criteria []criteria.Criterion
	proposed int
	// held: lazy start keeps the agent out of play until Release; it takes no turn, and counts
	// as a vote still to come.
	held bool
	// stop is the agent's latest stop (decomposition mode).
	stop *Stop
}

// Machine holds the protocol state of one coordination. It is not safe for concurrent use.
type Machine struct {
	s       Settings
	agents  []agentState
	labels  []string
	version int
	ended   bool
	// acc holds the checklist's criteria, emerged ones included (nil when not gated).
	acc *criteria.Accumulator
}

// New returns a Machine for s.Agents agents, none of which has answered.
func New(s Settings) *Machine {
	if s.FailureBudget < 1 {
		s.FailureBudget = 3
	}
	labels := make([]string, s.Agents)
	for i := range labels {
		labels[i] = Label(i)
	}
	m := &Machine{s: s, agents: make([]agentState, s.Agents), labels: labels}
	if cs := s.Checklist; cs != nil {
		m.acc = criteria.NewAccumulator(cs.Criteria, cs.MaxEmerged)
	}
	m.holdLazy()
	return m
}

// Label returns the stable anonymous label of agent i: agent<i+1>.
func Label(i int) string { return "agent" + strconv.Itoa(i+1) }

// ParseLabel returns the agent index of a label agent<k>, or -1 if s is not one.
func ParseLabel(s string, agents int) int {
	rest, ok := strings.CutPrefix(s, "agent")
	if !ok || rest == "" || rest[0] == '0' {
		return -1
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' || n > agents {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > agents {
		return -1
	}
	return n - 1
}

// Version is the current answer-set version: the number of answers accepted so far.
func (m *Machine) Version() int { return m.version }

// Agents is the number of agents.
func (m *Machine) Agents() int { return len(m.agents) }

// Current returns agent i's latest answer, if it has one.
func (m *Machine) Current(i int) (Answer, bool) {
	a := m.agents[i].answers
	if len(a) == 0 {
		return Answer{}, false
	}
	return a[len(a)-1], true
}

// AnswerCount is how many answers agent i has had accepted.
func (m *Machine) AnswerCount(i int) int { return len(m.agents[i].answers) }

// CurrentAnswers returns the latest answer of every agent that has one, in agent order.
// Answers of dead agents stay: their work is still on the table.
func (m *Machine) CurrentAnswers() []Answer { return m.AnswersSince(0) }

// AnswersSince returns the current answers accepted after answer-set version v, in agent order.
func (m *Machine) AnswersSince(v int) []Answer {
	var out []Answer
	for i := range m.agents {
		if a, ok := m.Current(i); ok && a.Version > v {
			out = append(out, a)
		}
	}
	return out
}

// VoteLabels are the labels a vote may name now: agents that have an answer, in order.
func (m *Machine) VoteLabels() []string {
	var out []string
	for i := range m.agents {
		if len(m.agents[i].answers) > 0 {
			out = append(out, m.labels[i])
		}
	}
	return out
}

// CurrentVote returns agent i's vote if it still counts.
func (m *Machine) CurrentVote(i int) (Vote, bool) {
	v := m.agents[i].vote
	if v == nil || !m.votes(v) {
		return Vote{}, false
	}
	return *v, true
}

// votes reports whether v still counts: nothing was answered since its voter looked, or, for
// a voter with a bounded view, nothing it was shown was replaced.
func (m *Machine) votes(v *Vote) bool {
	if v.View != nil {
		return m.viewCurrent(v.View)
	}
	return v.Version == m.version
}

// SetView records that agent i reads a bounded view of its peers: shown[k] is how many of
// agent k's answers it has been shown (0: it reads none of agent k's). Its votes then count
// while every answer it was shown is current (P3 for a bounded view), and may name only an
// agent it was shown. Without a call, an agent reads every answer and its vote counts while
// the whole answer set is as it saw it.
func (m *Machine) SetView(i int, shown []int) {
	m.agents[i].view = append(m.agents[i].view[:0], shown...)
}

func (m *Machine) viewCurrent(shown []int) bool {
	for k, n := range shown {
		if n > 0 && len(m.agents[k].answers) != n {
			return false
		}
	}
	return true
}

// Dead reports whether agent i has been left out.
func (m *Machine) Dead(i int) bool { return m.agents[i].dead }

// Ended reports whether coordination is over.
func (m *Machine) Ended() bool { return m.ended }

// End stops coordination: no more answers or votes are accepted.
func (m *Machine) End() { m.ended = true }

// NeedsTurn reports whether agent i must act: it is live, coordination goes on, it does not
// hold a current vote, and no gate holds it back (see Blocked). With SkipVoting an agent acts
// only until it has an answer.
func (m *Machine) NeedsTurn(i int) bool {
	if m.ended || m.agents[i].dead || m.agents[i].held {
		return false
	}
	if m.s.SkipVoting {
		return len(m.agents[i].answers) == 0 && !m.GlobalCapReached()
	}
	if m.s.Decomposition && m.Done(i) {
		return false
	}
	if _, ok := m.CurrentVote(i); ok {
		return false
	}
	return m.Blocked(i) == ""
}

// Live is the number of agents not dead.
func (m *Machine) Live() int {
	n := 0
	for _, a := range m.agents {
		if !a.dead {
			n++
		}
	}
	return n
}

// Converged reports whether coordination is complete: every live agent holds a current vote
// (and one agent is live). With SkipVoting it is complete once every live agent has an answer,
// or once there is an answer and MaxNewAnswersGlobal allows no more.
func (m *Machine) Converged() bool {
	if m.Live() == 0 {
		return false
	}
	if m.s.SkipVoting {
		return m.TotalAnswers() > 0 && (m.GlobalCapReached() || m.AllAnswered())
	}
	if m.s.Decomposition {
		return m.decompositionConverged()
	}
	for i, a := range m.agents {
		if a.dead {
			continue
		}
		if _, ok := m.CurrentVote(i); !ok {
			return false
		}
	}
	return true
}

// TurnSucceeded resets agent i's consecutive failures.
func (m *Machine) TurnSucceeded(i int) { m.agents[i].failures = 0 }

// TurnFailed counts a failed turn of agent i and reports how many failed in a row and whether
// the agent is now dead.
func (m *Machine) TurnFailed(i int) (consecutive int, dead bool) {
	a := &m.agents[i]
	if a.dead {
		return a.failures, true
	}
	a.failures++
	if a.failures >= m.s.FailureBudget {
		a.dead = true
		a.vote, a.stop = nil, nil
	}
	return a.failures, a.dead
}

// Kill leaves agent i out at once (a fatal error such as a rejected API key).
func (m *Machine) Kill(i int) {
	m.agents[i].dead = true
	m.agents[i].vote, m.agents[i].stop = nil, nil
}

// Failures is how many turns agent i has failed in a row.
func (m *Machine) Failures(i int) int { return m.agents[i].failures }

// FailureBudget is the number of consecutive failed turns that kill an agent.
func (m *Machine) FailureBudget() int { return m.s.FailureBudget }
