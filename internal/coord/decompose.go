package coord

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Decomposition mode (MassGen's coordination_mode: decomposition): each agent owns a part of
// the task (its subtask), shares its work with new_answer as in voting mode, reads the others'
// work, and signals that its part is done with stop{summary, status} instead of voting. A new
// answer from anyone wakes every agent that stopped on the answers before it, as MassGen's
// has_voted reset does. Coordination is over once every live agent holds a current stop (or is
// done automatically, see Done); the presenter then integrates the parts.
//
// Where this differs from MassGen: max_new_answers_per_agent counts every answer of the agent
// (MassGen resets a consecutive count whenever the agent sees another agent's new answer), so
// that the answers of a session are bounded by agents x cap; and stop with status complete
// needs an answer of the agent's own, since a part with nothing delivered cannot be complete.

// ToolStop is decomposition mode's terminal tool, in place of vote.
const ToolStop = "stop"

// Stop statuses, as MassGen's stop tool names them.
const (
	StopComplete = "complete"
	StopBlocked  = "blocked"
)

// MaxStopSummaryChars caps a stop's summary: it goes into prompts, events and logs.
const MaxStopSummaryChars = 4000

// Stop is one accepted stop.
type Stop struct {
	Agent   int
	Summary string
	Status  string // StopComplete | StopBlocked
	// Version is the answer-set version the agent saw; the stop counts while it is current.
	Version int
}

// IsWorkflow reports whether name is a workflow tool of either mode.
func IsWorkflow(name string) bool {
	return name == ToolNewAnswer || name == ToolVote || name == ToolStop
}

// Decomposition reports whether the machine runs decomposition mode.
func (m *Machine) Decomposition() bool { return m.s.Decomposition }

// CurrentStop returns agent i's stop if it still counts.
func (m *Machine) CurrentStop(i int) (Stop, bool) {
	st := m.agents[i].stop
	if st == nil || st.Version != m.version {
		return Stop{}, false
	}
	return *st, true
}

// Capped reports whether agent i can submit no more answers: it used its own
// max_new_answers_per_agent, or max_new_answers_global is reached. In decomposition mode
// such an agent is done without another model call (MassGen's auto-stop at the answer limit).
func (m *Machine) Capped(i int) bool {
	return m.GlobalCapReached() || m.s.MaxNewAnswersPerAgent > 0 && len(m.agents[i].answers) >= m.s.MaxNewAnswersPerAgent
}

// Done reports whether agent i's part needs no more turns: it holds a current stop, or it
// is capped (decomposition mode only).
func (m *Machine) Done(i int) bool {
	if _, ok := m.CurrentStop(i); ok {
		return true
	}
	return m.s.Decomposition && m.Capped(i)
}

// decompositionConverged: every live agent is done. Agents that all stopped blocked without
// an answer end it too: waiting would only run into the session timeout, and the engine
// reports that there is nothing to present.
func (m *Machine) decompositionConverged() bool {
	for i, a := range m.agents {
		if !a.dead && !m.Done(i) {
			return false
		}
	}
	return true
}

// resolveDecomposition is Resolve in decomposition mode: exactly one of new_answer or stop.
func (m *Machine) resolveDecomposition(i int, calls []Call, text string, seen int) Outcome {
	var stops, answers int
	for _, c := range calls {
		switch c.Name {
		case ToolStop:
			stops++
		case ToolNewAnswer:
			answers++
		}
	}
	if stops+answers == 0 {
		if len(calls) == 0 {
			return Outcome{Kind: NoWorkflow}
		}
		fb := make([]Feedback, len(calls))
		for k, c := range calls {
			msg := fmt.Sprintf("unknown tool %q: finish by calling exactly one of new_answer or stop", c.Name)
			if c.Name == ToolVote {
				msg = "there is no vote in decomposition mode: share your part with new_answer, or call stop when your part is done"
			}
			fb[k] = Feedback{c.ID, c.Name, msg}
		}
		return Outcome{Kind: Retry, Feedback: fb}
	}
	if stops+answers > 1 {
		return Outcome{Kind: Retry, Feedback: rejectAll(calls,
			"a response may make one workflow call: either new_answer or stop, once, alone")}
	}
	for _, c := range calls {
		switch c.Name {
		case ToolStop:
			return m.resolveStop(i, c, calls, seen)
		case ToolNewAnswer:
			return m.resolveAnswer(i, c, calls, text)
		}
	}
	return Outcome{Kind: NoWorkflow}
}

func (m *Machine) resolveStop(i int, c Call, calls []Call, seen int) Outcome {
	var args struct {
		Summary string `json:"summary"`
		Status  string `json:"status"`
	}
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return retryOne(calls, c, fmt.Sprintf(
			`arguments are not valid JSON (%v): call stop with {"summary": "what you did", "status": "complete" or "blocked"}`, err))
	}
	summary := strings.TrimSpace(args.Summary)
	status := strings.TrimSpace(args.Status)
	if status == "" {
		status = StopComplete // MassGen's default
	}
	switch {
	case status != StopComplete && status != StopBlocked:
		return retryOne(calls, c, fmt.Sprintf(`invalid status %q: use "complete" or "blocked"`, args.Status))
	case summary == "":
		return retryOne(calls, c, `stop needs a non-empty "summary": what you accomplished and how it connects to the others' parts`)
	case utf8.RuneCountInString(summary) > MaxStopSummaryChars:
		return retryOne(calls, c, fmt.Sprintf("the summary is over %d characters: summarise in fewer words; your work itself belongs in new_answer", MaxStopSummaryChars))
	case status == StopComplete && len(m.agents[i].answers) == 0:
		return retryOne(calls, c, `you have not shared any work yet: submit your part with new_answer first, or call stop with status "blocked" and say what blocks you`)
	}
	st := Stop{Agent: i, Summary: summary, Status: status, Version: seen}
	if seen != m.version {
		return Outcome{Kind: StaleStop, Stop: st, Accepted: c.ID}
	}
	m.agents[i].stop = &st
	return Outcome{Kind: Stopped, Stop: st, Accepted: c.ID}
}

// instead is what an agent that may not answer again should do, worded for the mode.
func (m *Machine) instead() string {
	if m.s.Decomposition {
		return "call stop with a summary of your part"
	}
	return "vote for the best current answer"
}

// restoreStops puts back the stops a log says are current.
func (m *Machine) restoreStops(stops []Stop) error {
	n := len(m.agents)
	for _, st := range stops {
		switch {
		case !m.s.Decomposition:
			return fmt.Errorf("coord: the log holds stops, and the session is not in decomposition mode")
		case st.Agent < 0 || st.Agent >= n:
			return fmt.Errorf("coord: stop of agent %d of %d", st.Agent+1, n)
		case st.Version != m.version:
			return fmt.Errorf("coord: %s's stop was made on version %d, not the current %d", Label(st.Agent), st.Version, m.version)
		case st.Status != StopComplete && st.Status != StopBlocked:
			return fmt.Errorf("coord: %s's stop has status %q", Label(st.Agent), st.Status)
		case m.agents[st.Agent].stop != nil:
			return fmt.Errorf("coord: %s stops twice", Label(st.Agent))
		case m.agents[st.Agent].dead:
			continue
		}
		m.agents[st.Agent].stop = &st
	}
	return nil
}
