package readmodel

import (
	"cmp"
	"math"
	"slices"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// Totals count the whole session.
type Totals struct {
	Answers       int // accepted answers ever
	Votes         int // accepted votes ever, later invalidated ones included
	IgnoredVotes  int // stale votes that never counted
	Invalidations int // votes that stopped counting because a new answer arrived
	Errors        int // failed turns
	Usage         provider.Usage
	CostUSD       float64
	// Rounds split Usage and CostUSD by round, over all agents: round n adds up every
	// agent's n-th coordination round.
	Rounds []RoundUsage
	// Retried counts the calls (and their cost, within CostUSD) of turn attempts lost with
	// their worker on Temporal: paid for, thrown away, and made again by the turn's next
	// attempt.
	RetriedCalls   int
	RetriedCostUSD float64
}

// Stages of a RoundUsage.
const (
	StageSetup        = "setup"        // before coordination: planning, personas
	StageCoordination = "coordination" // an agent's coordination round
	StagePresentation = "presentation" // the final presentation
)

// RoundUsage is what the calls of one round (or stage) used.
type RoundUsage struct {
	Stage   string // StageSetup, StageCoordination or StagePresentation
	Round   int    // the coordination round, 1 for an agent's first; 0 for the other stages
	Usage   provider.Usage
	CostUSD float64
}

// addRound adds the usage of one call to the round it belongs to, rounds kept in order:
// setup, coordination rounds, presentation.
func addRound(rounds []RoundUsage, p event.UsageReported) []RoundUsage {
	r := RoundUsage{Stage: StageCoordination, Round: p.Round}
	switch {
	case p.Presentation:
		r = RoundUsage{Stage: StagePresentation}
	case p.Round == 0:
		r = RoundUsage{Stage: StageSetup}
	}
	rank := func(x RoundUsage) int {
		switch x.Stage {
		case StageSetup:
			return -1
		case StagePresentation:
			return math.MaxInt
		}
		return x.Round
	}
	k, found := slices.BinarySearchFunc(rounds, rank(r), func(x RoundUsage, t int) int { return cmp.Compare(rank(x), t) })
	if !found {
		rounds = slices.Insert(rounds, k, r)
	}
	rounds[k].Usage = rounds[k].Usage.Add(p.Usage)
	rounds[k].CostUSD += p.CostUSD
	return rounds
}

// Agent is one agent's projection. Fields are read-only for callers.
type Agent struct {
	ID      string
	Label   string // agent<i>
	Backend string
	Model   string
	BaseURL string // where its requests go; "" for offline backends
	// VoteWeight is what its vote weighs when the session weighs votes (0: 1).
	VoteWeight float64
	// Unpriced: the price table does not know the model, so CostUSD (0, or hosted-tool fees
	// only) is not its cost; see CostKnown.
	Unpriced bool

	Status Status
	Dead   bool

	Answers []Answer // accepted answers, oldest first
	// Vote is the agent's current vote, nil when it has none or it was invalidated.
	Vote         *Vote
	VotesCast    int // accepted votes ever
	VotesIgnored int // stale votes
	// Restarts counts the times the agent was sent back to work: its vote was invalidated by a
	// new answer, or its stale vote was ignored and it was told to continue.
	Restarts int
	// CausedRestarts counts the answers of this agent that invalidated at least one vote (what
	// MassGen's status.json mislabels times_restarted, B11).
	CausedRestarts int

	// Waiting is the reason of the agent's last AgentWaiting (a deferred vote waits for the
	// others), "" once its next turn starts or coordination ends.
	Waiting string
	// TimeUp: a soft RoundTimeout told the agent its round's time is up, and the message that
	// carries the note (an EnforcementSent) has not gone yet.
	TimeUp bool
	// Reminded: the agent's last EnforcementSent was the usual reminder to vote or answer.
	// It is false when that message carried the time-up note instead: every view tells it as
	// the round timeout, never as a second "reminded" line.
	Reminded bool

	// Session is the backend's own session id (a coding-agent CLI's), "" for the others.
	Session string

	// Subagents are the subagents it started, in order.
	Subagents []Subagent
	// Part is the agent's part in decomposition mode (nil otherwise).
	Part *Part
	// Plan is the agent's task plan as its last TaskPlanChanged left it (task planning).
	Plan []event.PlanTask

	Turns        int // turns started
	Calls        int // model calls started
	LastActivity time.Time
	LastError    *AgentError // the last failure, kept after the agent recovers
	Errors       int

	Usage   provider.Usage
	CostUSD float64
	// Rounds split Usage and CostUSD by the agent's rounds.
	Rounds []RoundUsage

	// Presentation is the final presentation's text.
	Presentation string

	// Writing is the tool whose call the model is writing now, "" when none.
	Writing string
	// CutOff lists the tool calls the end of coordination or of the session cut off, oldest
	// first: views show them as cut off, never as still in progress.
	CutOff  []CutCall
	pending []pendingCall // tool calls made that had no result yet

	// The answer text and reasoning streamed in the current turn, the last 64 KiB of each
	// (Stream and Reasoning return them). Appending to a buffer keeps a delta O(its length).
	stream, reasoning tail
}

// Stream returns the answer text streamed in the current turn (its last 64 KiB).
func (a *Agent) Stream() string { return a.stream.String() }

// Reasoning returns the reasoning streamed in the current turn (its last 64 KiB).
func (a *Agent) Reasoning() string { return a.reasoning.String() }

// tail keeps the end of a growing text: appends are amortised, and once it holds twice
// streamKeep bytes it drops all but the last streamKeep.
type tail []byte

func (t *tail) add(s string) {
	*t = append(*t, s...)
	if len(*t) > 2*streamKeep {
		*t = append((*t)[:0:0], keepTail(string(*t))...)
	}
}

func (t tail) String() string { return keepTail(string(t)) }

// Resume is one SessionResumed.
type Resume struct {
	event.SessionResumed
	Time time.Time
}

// Answer is one accepted answer.
type Answer struct {
	Label   string // agent<i>.<k>
	Content string
	Version int // the answer-set version it started
	// Confidence is the confidence its author stated (nil: none).
	Confidence *float64
	Time       time.Time
}

// Vote is an accepted vote.
type Vote struct {
	Target      string // real id of the agent voted for
	TargetLabel string // agent<j>
	AnswerLabel string // agent<j>.<k>
	Reason      string
	Version     int // answer-set version the voter saw
	// Scoped: cast on a bounded view; it counts until an answer names it invalidated.
	Scoped bool
	// Confidence is the confidence the voter stated (nil: none).
	Confidence *float64
	Time       time.Time
}

// Counts reports whether v, an agent's latest vote, still counts.
func (s *State) Counts(v *Vote) bool { return v != nil && (v.Scoped || v.Version == s.Version) }

// AgentError is an agent's last failure. Type is "error", "timeout" or "dead".
type AgentError struct {
	Type    string
	Message string
	Time    time.Time
}

// FinalAnswer is the session's final answer.
type FinalAnswer struct {
	Agent    string
	Label    string // agent<i>.final
	Content  string
	Mode     string
	Fallback bool
	// Truncated is "(truncated at the token limit)" (or the like) when the presentation was
	// cut off, "" when the answer is complete.
	Truncated string
	Time      time.Time
}

// Count is the number of current votes for one answer.
type Count struct {
	Agent       string // real id of the answer's author
	AnswerLabel string
	Votes       int
	Voters      []string // real ids, config order
}
