// Package readmodel folds a session's event stream into the one read model every view builds
// on: the plain output, the TUI, status.json and the log summaries. It is pure: no file or
// network I/O, no clock (times come from the events), no goroutines, so a live run and a
// replayed log give the same State.
package readmodel

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"massgen/internal/event"
)

// Phase is the coordination phase as status.json reports it.
type Phase string

// Phases, in the order a session goes through them.
const (
	PhaseInitialAnswer Phase = "initial_answer" // no vote recorded yet
	PhaseEnforcement   Phase = "enforcement"    // at least one vote was recorded
	PhasePresentation  Phase = "presentation"   // the winner presents the final answer
	PhaseDone          Phase = "done"           // the session ended
)

// Status is an agent's status as status.json reports it.
type Status string

// Agent statuses. All but StatusDead are MassGen's.
const (
	StatusWaiting    Status = "waiting"    // nothing started yet
	StatusStreaming  Status = "streaming"  // a turn or model call started and has no result yet
	StatusAnswered   Status = "answered"   // its last turn ended in an accepted answer
	StatusVoted      Status = "voted"      // it holds a current vote
	StatusRestarting Status = "restarting" // its vote was invalidated or ignored; it will work again
	StatusError      Status = "error"      // its last turn failed
	StatusTimeout    Status = "timeout"    // its last call timed out, or the session timeout cut it off
	StatusCompleted  Status = "completed"  // coordination ended (the winner: after its final answer)
	// StatusDead is our addition: the agent exhausted its failure budget and is left out of the
	// rest of the session. MassGen has no such state (its agents are never killed, B4).
	StatusDead Status = "dead"
)

// streamKeep is how much streamed text State keeps per agent and buffer.
const streamKeep = 64 << 10

// State is the session as the event stream describes it so far: a pure reducer with no clock
// and no I/O, so replaying a log gives the same State as the live run. Its exported fields are
// read-only for callers: only Apply changes them. A State is not safe for concurrent use.
type State struct {
	// lat records the calls, for CriticalPath.
	lat Calls

	Question  string
	Turn      int
	SessionID string // the log_<timestamp> folder name
	LogDir    string
	Settings  event.Settings
	StartTime time.Time // time of SessionStarted
	EndTime   time.Time // time of SessionEnded; zero while running
	LastTime  time.Time // time of the last event applied
	LastSeq   int64     // Seq of the last event applied

	// Agents are in config order; Agents[i].Label is agent<i+1>.
	Agents []*Agent

	Phase Phase
	// Version is the current answer-set version: 0 before any answer, then the Version of the
	// latest accepted answer.
	Version int
	// FinalPresentation is true from FinalStarted on.
	FinalPresentation bool
	FinalMode         string // regenerate | verbatim, from FinalStarted

	// CoordinationEnded is true once no more answers or votes can come.
	CoordinationEnded bool
	EndReason         string // event.End*; "" until coordination ends
	Winner            string // real id; "" until chosen (or when no agent has an answer)
	WinnerLabel       string // agent<i>
	WinnerAnswer      string // agent<i>.<k>, the answer that won
	Tie               bool
	Final             *FinalAnswer // nil until the final answer exists
	// Integrated is decomposition mode's PartsIntegrated: the parts at the end of
	// coordination, the files gathered and the conflicts (nil otherwise).
	Integrated *event.PartsIntegrated

	Ended         bool   // SessionEnded was applied
	SessionStatus string // event.Status*; "" while running
	ExitCode      int
	SessionError  string

	Totals Totals

	// Resumes are the times massgen resume took the session up, oldest first.
	Resumes []Resume

	// ToolServers are the MCP servers the session reported on, in the order they first
	// appeared, with their latest status; a server that died stays "died".
	ToolServers []ToolServer
	// Writes are write_mode's reports, one per writable context path: how it was isolated,
	// then what was applied to it (status applied, unchanged, conflict or failed).
	Writes []ToolServer

	// Questions are the agents' ask_others questions (coordination.broadcast), in the order
	// they were asked.
	Questions []*Question

	// Attempt is the attempt running (or the last one), from 1, and MaxAttempts how many the
	// turn may run; both 0 without orchestration restarts. Restarts are the restarts so far,
	// and Evaluation the latest attempt's post-evaluation, nil before one starts (restart.go).
	Attempt, MaxAttempts int
	Restarts             []event.OrchestrationRestarted
	// Verdicts are the verifiers' checks of the current attempt (verify.go).
	Verdicts   []event.AnswerVerified
	Evaluation *Evaluation

	byID map[string]*Agent
}

// NewState returns the State before any event.
func NewState() *State {
	return &State{Phase: PhaseInitialAnswer, byID: map[string]*Agent{}}
}

// Agent returns the agent with real id id, or nil.
func (s *State) Agent(id string) *Agent { return s.byID[id] }

// LatestAnswer returns the agent's latest answer, or nil.
func (a *Agent) LatestAnswer() *Answer {
	if len(a.Answers) == 0 {
		return nil
	}
	return &a.Answers[len(a.Answers)-1]
}

// LatestAnswerLabel returns the label of the agent's latest answer, or "".
func (a *Agent) LatestAnswerLabel() string {
	if l := a.LatestAnswer(); l != nil {
		return l.Label
	}
	return ""
}

// Tally counts the current votes (cast on the current answer-set version) per answer, ordered
// by author in config order, then by answer. Answers without a current vote are left out.
func (s *State) Tally() []Count {
	var counts []Count
	index := map[string]int{}
	for _, voter := range s.Agents {
		v := voter.Vote
		if !s.Counts(v) {
			continue
		}
		i, ok := index[v.AnswerLabel]
		if !ok {
			i = len(counts)
			index[v.AnswerLabel] = i
			counts = append(counts, Count{Agent: v.Target, AnswerLabel: v.AnswerLabel})
		}
		counts[i].Votes++
		counts[i].Voters = append(counts[i].Voters, voter.ID)
	}
	slices.SortStableFunc(counts, func(a, b Count) int {
		if d := s.answerOrder(a) - s.answerOrder(b); d != 0 {
			return d
		}
		return strings.Compare(a.AnswerLabel, b.AnswerLabel)
	})
	return counts
}

// answerOrder ranks an answer by its author's config position, then by its position among
// the author's answers; unknown answers go last.
func (s *State) answerOrder(c Count) int {
	for i, a := range s.Agents {
		if a.ID != c.Agent {
			continue
		}
		for k, ans := range a.Answers {
			if ans.Label == c.AnswerLabel {
				return i<<20 + k
			}
		}
		return i<<20 + 1<<19
	}
	return 1 << 40
}

// Live returns the number of agents that are not dead.
func (s *State) Live() int {
	n := 0
	for _, a := range s.Agents {
		if !a.Dead {
			n++
		}
	}
	return n
}

// CompletionPercentage is 100 once coordination ended; before that, the share of live agents
// that hold a current vote, floored, 0 to 99 (coordination ends when every live agent holds
// one, P4).
func (s *State) CompletionPercentage() int {
	if s.CoordinationEnded || s.Ended {
		return 100
	}
	live, voted := 0, 0
	for _, a := range s.Agents {
		if a.Dead {
			continue
		}
		live++
		if s.Counts(a.Vote) {
			voted++
		}
	}
	if live == 0 {
		return 0
	}
	return min(99, voted*100/live)
}

// ActiveAgent returns the first agent in config order that is streaming, or nil.
func (s *State) ActiveAgent() *Agent {
	for _, a := range s.Agents {
		if a.Status == StatusStreaming {
			return a
		}
	}
	return nil
}

// AgentsWithAnswers returns the agents that have at least one answer, in config order.
func (s *State) AgentsWithAnswers() []*Agent {
	var out []*Agent
	for _, a := range s.Agents {
		if len(a.Answers) > 0 {
			out = append(out, a)
		}
	}
	return out
}

// Apply folds one event into the state. Events about unknown agents change only the
// session-wide fields. Payloads are the value types package event defines.
func (s *State) Apply(e event.Event) {
	s.LastSeq, s.LastTime = e.Seq, e.Time
	s.lat.Apply(e)
	s.toolCalls(e.Payload)
	s.decomposition(e.Time, e.Payload) // decompose.go
	s.broadcast(e.Payload)
	s.taskPlan(e.Payload) // taskplan.go
	s.restarts(e.Time, e.Payload)
	s.verify(e.Payload) // verify.go
	switch p := e.Payload.(type) {
	case event.SessionStarted:
		s.start(e.Time, p)
	case event.TurnStarted:
		s.touch(p.Agent, e.Time, func(a *Agent) {
			a.Turns++
			a.Waiting = ""
			a.stream, a.reasoning = nil, nil
			a.setStatus(StatusStreaming)
		})
	case event.ModelCalled:
		s.touch(p.Agent, e.Time, func(a *Agent) {
			a.Calls++
			a.setStatus(StatusStreaming)
		})
	case event.TextDelta:
		s.touch(p.Agent, e.Time, func(a *Agent) {
			if ev := s.Evaluation; p.Presentation && ev.Running() && ev.Agent == p.Agent {
				ev.text.add(p.Text)
			} else if p.Presentation {
				a.Presentation += p.Text
			} else {
				a.stream.add(p.Text)
			}
			a.setStatus(StatusStreaming)
		})
	case event.ReasoningDelta:
		s.touch(p.Agent, e.Time, func(a *Agent) {
			a.reasoning.add(p.Text)
			a.setStatus(StatusStreaming)
		})
	case event.ToolCallStreaming:
		s.touch(p.Agent, e.Time, func(a *Agent) { a.setStatus(StatusStreaming) })
	case event.ToolCalled:
		s.touch(p.Agent, e.Time, nil)
	case event.ToolRejected:
		s.touch(p.Agent, e.Time, nil)
	case event.EnforcementSent:
		s.touch(p.Agent, e.Time, func(a *Agent) { a.Reminded, a.TimeUp = !a.TimeUp, false })
	case event.RoundTimeout:
		// Not activity of the agent's own (status.json's last_activity): the engine's clock.
		if a := s.byID[p.Agent]; a != nil && p.Phase == event.RoundSoft {
			a.TimeUp = true
		}
	case event.AgentWaiting:
		if a := s.byID[p.Agent]; a != nil {
			a.Waiting = p.Reason
		}
	case event.AnswerSubmitted:
		s.answer(e.Time, p)
	case event.VoteCast:
		s.vote(e.Time, p)
	case event.VoteIgnored:
		s.Totals.IgnoredVotes++
		s.touch(p.Agent, e.Time, func(a *Agent) {
			a.VotesIgnored++
			a.Restarts++
			a.setStatus(StatusRestarting)
		})
	case event.AgentError:
		s.Totals.Errors++
		s.touch(p.Agent, e.Time, func(a *Agent) {
			a.Errors++
			typ, st := "error", StatusError
			if p.Timeout {
				typ, st = "timeout", StatusTimeout
			}
			a.LastError = &AgentError{Type: typ, Message: p.Message, Time: e.Time}
			a.setStatus(st)
		})
	case event.AgentDead:
		s.touch(p.Agent, e.Time, func(a *Agent) {
			a.LastError = &AgentError{Type: "dead", Message: p.Reason, Time: e.Time}
			a.Status, a.Dead = StatusDead, true
		})
	case event.AgentSession:
		s.touch(p.Agent, e.Time, func(a *Agent) { a.Session = p.SessionID })
	case event.UsageReported:
		s.Totals.Usage = s.Totals.Usage.Add(p.Usage)
		s.Totals.CostUSD += p.CostUSD
		s.Totals.Rounds = addRound(s.Totals.Rounds, p)
		if p.Retried > 0 {
			s.Totals.RetriedCalls++
			s.Totals.RetriedCostUSD += p.CostUSD
		}
		s.touch(p.Agent, e.Time, func(a *Agent) {
			a.Usage = a.Usage.Add(p.Usage)
			a.CostUSD += p.CostUSD
			a.Rounds = addRound(a.Rounds, p)
		})
	case event.ToolServerStatus:
		s.toolServer(e.Time, p)
	case event.SubagentStarted:
		s.subagentStarted(e.Time, p)
	case event.SubagentFinished:
		s.subagentFinished(e.Time, p)
	case event.CoordinationEnded:
		s.endCoordination(e.Time, p)
	case event.FinalStarted:
		s.Phase, s.FinalPresentation, s.FinalMode = PhasePresentation, true, p.Mode
		if s.Winner == "" {
			s.Winner = p.Agent
		}
		s.touch(p.Agent, e.Time, func(a *Agent) {
			a.Presentation = ""
			a.setStatus(StatusStreaming)
		})
	case event.FinalAnswer:
		s.Final = &FinalAnswer{Agent: p.Agent, Label: p.Label, Content: p.Content, Mode: p.Mode, Fallback: p.Fallback,
			Truncated: p.TruncationNote(), Time: e.Time}
		if s.Winner == "" {
			s.Winner = p.Agent
		}
		s.touch(p.Agent, e.Time, func(a *Agent) {
			if s.WinnerLabel == "" {
				s.WinnerLabel = a.Label
			}
			a.setStatus(StatusCompleted)
		})
	case event.SessionResumed:
		s.resume(e.Time, p)
	case event.SessionEnded:
		s.Phase, s.Ended, s.EndTime = PhaseDone, true, e.Time
		for _, a := range s.Agents {
			a.Waiting = "" // nobody waits for a turn any more
		}
		s.SessionStatus, s.ExitCode, s.SessionError = p.Status, p.ExitCode, p.Error
	}
}

// resume undoes what a Ctrl-C's end said (the session goes on) and what the resumed phase
// does again: coordination reopens, or the final presentation starts over.
func (s *State) resume(t time.Time, p event.SessionResumed) {
	s.Resumes = append(s.Resumes, Resume{SessionResumed: p, Time: t})
	s.Ended, s.EndTime, s.SessionStatus, s.ExitCode, s.SessionError = false, time.Time{}, "", 0, ""
	if p.Phase == event.ResumeFinishing {
		return
	}
	s.Final, s.FinalPresentation, s.FinalMode = nil, false, ""
	s.Phase = PhasePresentation
	if p.Phase == event.ResumeCoordination {
		s.CoordinationEnded, s.EndReason = false, ""
		s.Winner, s.WinnerLabel, s.WinnerAnswer, s.Tie = "", "", "", false
		s.Phase = PhaseInitialAnswer
		if s.Totals.Votes > 0 {
			s.Phase = PhaseEnforcement
		}
	}
	for _, a := range s.Agents {
		a.Presentation = ""
		if !a.Dead && (a.Status == StatusCompleted || a.Status == StatusStreaming) {
			a.Status = StatusWaiting
			if a.Vote != nil && a.Vote.Version == s.Version {
				a.Status = StatusVoted
			}
		}
	}
}

func (s *State) start(t time.Time, p event.SessionStarted) {
	s.Question, s.Turn, s.SessionID, s.LogDir = p.Question, p.Turn, p.SessionID, p.LogDir
	s.Settings, s.StartTime = p.Settings, t
	for _, info := range p.Agents {
		if s.byID[info.ID] != nil {
			continue
		}
		a := &Agent{ID: info.ID, Label: info.Label, Backend: info.Backend, Model: info.Model, BaseURL: info.BaseURL,
			Unpriced: info.Unpriced, VoteWeight: info.VoteWeight, Status: StatusWaiting}
		s.Agents = append(s.Agents, a)
		s.byID[a.ID] = a
	}
}

func (s *State) answer(t time.Time, p event.AnswerSubmitted) {
	s.Totals.Answers++
	if p.Version > s.Version {
		s.Version = p.Version
	}
	// Every vote cast on an earlier version stops counting. Invalidated names the voters; the
	// version check also catches a producer that leaves the list out.
	listed := map[string]bool{}
	for _, id := range p.Invalidated {
		listed[id] = true
	}
	invalidated, others := 0, 0
	for _, a := range s.Agents {
		if a.Vote == nil || ((a.Vote.Version >= s.Version || a.Vote.Scoped) && !listed[a.ID]) {
			continue
		}
		a.Vote = nil
		a.Restarts++
		invalidated++
		if a.ID != p.Agent {
			others++
		}
		if a.Status == StatusVoted {
			a.setStatus(StatusRestarting)
		}
	}
	s.Totals.Invalidations += invalidated
	s.touch(p.Agent, t, func(a *Agent) {
		a.Answers = append(a.Answers, Answer{Label: p.Label, Content: p.Content, Version: p.Version, Confidence: p.Confidence, Time: t})
		if others > 0 {
			a.CausedRestarts++
		}
		a.setStatus(StatusAnswered)
	})
}

func (s *State) vote(t time.Time, p event.VoteCast) {
	s.Totals.Votes++
	if s.Phase == PhaseInitialAnswer {
		s.Phase = PhaseEnforcement
	}
	s.touch(p.Agent, t, func(a *Agent) {
		a.VotesCast++
		a.Vote = &Vote{Target: p.Target, TargetLabel: p.TargetLabel, AnswerLabel: p.AnswerLabel, Reason: p.Reason, Version: p.Version, Scoped: p.Scoped,
			Confidence: p.Confidence, Time: t}
		a.setStatus(StatusVoted)
	})
}

func (s *State) endCoordination(t time.Time, p event.CoordinationEnded) {
	s.CoordinationEnded, s.EndReason = true, p.Reason
	s.Winner, s.WinnerLabel, s.WinnerAnswer, s.Tie = p.Winner, p.WinnerLabel, p.AnswerLabel, p.Tie
	for _, a := range s.Agents {
		a.Waiting = "" // nobody waits for a turn any more
		if a.ID == s.Winner || a.Dead {
			continue
		}
		switch a.Status {
		case StatusError, StatusTimeout:
			// Its last turn failed; say so rather than "completed".
		case StatusStreaming, StatusRestarting, StatusWaiting:
			// Cut off while working.
			switch p.Reason {
			case event.EndTimeout:
				a.Status = StatusTimeout
				a.LastError = &AgentError{Type: "timeout", Message: "the session timed out while the agent was working", Time: t}
			case event.EndInterrupted:
			default:
				a.Status = StatusCompleted
			}
		default:
			a.Status = StatusCompleted
		}
	}
}

// touch records activity of agent id at t and applies f to it; unknown ids are ignored.
func (s *State) touch(id string, t time.Time, f func(*Agent)) {
	a := s.byID[id]
	if a == nil {
		return
	}
	a.LastActivity = t
	if f != nil {
		f(a)
	}
}

// setStatus changes the status unless the agent is dead, which is final.
func (a *Agent) setStatus(st Status) {
	if !a.Dead {
		a.Status = st
	}
}

// keepTail returns the last streamKeep bytes of s, starting at a rune boundary.
func keepTail(s string) string {
	if len(s) <= streamKeep {
		return s
	}
	s = s[len(s)-streamKeep:]
	for i := 0; i < len(s) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return s
}
