package readmodel

import (
	"time"

	"massgen/internal/event"
)

// StatusStopped is decomposition mode's: the agent signalled its part done (stop) on the
// current answers (MassGen's AgentStatus.STOPPED).
const StatusStopped Status = "stopped"

// PartWorking is a part's status while its agent has not stopped on the current answers.
const PartWorking = "working"

// Part is an agent's part in decomposition mode.
type Part struct {
	Subtask string
	Source  string // event.Subtask*
	// Status is PartWorking, then complete or blocked (its stop), and at the end of
	// coordination one of event.Part*.
	Status  string
	Summary string // its stop's summary
	Why     string // unfinished or failed: why
}

// decomposition folds decomposition mode's events, and what an answer does to the parts.
func (s *State) decomposition(t time.Time, p event.Payload) {
	switch p := p.(type) {
	case event.SubtasksAssigned:
		for _, st := range p.Subtasks {
			if a := s.byID[st.Agent]; a != nil {
				a.Part = &Part{Subtask: st.Text, Source: st.Source, Status: PartWorking}
			}
		}
	case event.AgentStopped:
		s.touch(p.Agent, t, func(a *Agent) {
			if a.Part == nil {
				a.Part = &Part{}
			}
			if p.Stale {
				a.Restarts++
				a.setStatus(StatusRestarting)
				return
			}
			a.Part.Status, a.Part.Summary = p.Status, p.Summary
			a.setStatus(StatusStopped)
		})
	case event.AnswerSubmitted:
		// A new answer wakes every agent that stopped.
		for _, a := range s.Agents {
			if a.Part != nil && a.ID != p.Agent && (a.Part.Status == event.PartComplete || a.Part.Status == event.PartBlocked) {
				a.Part.Status, a.Part.Summary = PartWorking, ""
				a.Restarts++
				a.setStatus(StatusRestarting)
			}
		}
	case event.PartsIntegrated:
		s.Integrated = &p
		for _, ps := range p.Parts {
			if a := s.byID[ps.Agent]; a != nil {
				if a.Part == nil {
					a.Part = &Part{Subtask: ps.Subtask}
				}
				a.Part.Status, a.Part.Summary, a.Part.Why = ps.Status, ps.Summary, ps.Why
			}
		}
	}
}
