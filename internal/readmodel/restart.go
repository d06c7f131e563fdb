package readmodel

import (
	"time"

	"massgen/internal/event"
)

// Evaluation is the presenter's check of an attempt's final answer (orchestration restarts).
type Evaluation struct {
	Agent   string
	Attempt int
	Debug   bool // it read debug_final_answer, not the final answer
	// Decision is "" while it runs, then "submit" (the answer stands, Auto when the model did
	// not decide, Why saying what happened) or "restart".
	Decision string
	Auto     bool
	Why      string
	text     tail // what it wrote, the last 64 KiB
}

// Text returns what the evaluating agent wrote (its last 64 KiB).
func (e *Evaluation) Text() string { return e.text.String() }

// Running reports whether the check has not decided yet.
func (e *Evaluation) Running() bool { return e != nil && e.Decision == "" }

// Evaluation decisions.
const (
	DecisionSubmit  = "submit"
	DecisionRestart = "restart"
)

// restarts folds the orchestration restart events: an attempt's evaluation, and a restart,
// which starts the coordination over (answers, votes, the winner and the final answer are the
// new attempt's; usage, cost and the counts "ever" add up over the attempts).
func (s *State) restarts(t time.Time, p event.Payload) {
	switch p := p.(type) {
	case event.SessionStarted:
		if n := p.Settings.MaxOrchestrationRestarts; n > 0 && s.Attempt == 0 {
			s.Attempt, s.MaxAttempts = 1, 1+n
		}
	case event.PostEvaluationStarted:
		s.Evaluation = &Evaluation{Agent: p.Agent, Attempt: p.Attempt, Debug: p.Debug}
		s.Attempt, s.MaxAttempts = p.Attempt, p.MaxAttempts
		s.touch(p.Agent, t, func(a *Agent) { a.setStatus(StatusStreaming) })
	case event.AnswerSubmittedFinal:
		if s.Evaluation == nil || s.Evaluation.Attempt != p.Attempt {
			s.Evaluation = &Evaluation{Agent: p.Agent, Attempt: p.Attempt}
		}
		s.Evaluation.Decision, s.Evaluation.Auto, s.Evaluation.Why = DecisionSubmit, p.Auto, p.Why
		s.touch(p.Agent, t, func(a *Agent) { a.setStatus(StatusCompleted) })
	case event.OrchestrationRestarted:
		if s.Evaluation != nil {
			s.Evaluation.Decision = DecisionRestart
		}
		s.Restarts = append(s.Restarts, p)
		s.Attempt, s.MaxAttempts = p.Attempt, p.MaxAttempts
		s.newAttempt()
	}
}

// newAttempt clears what belongs to one attempt's coordination.
func (s *State) newAttempt() {
	s.Phase, s.Version = PhaseInitialAnswer, 0
	s.FinalPresentation, s.FinalMode = false, ""
	s.CoordinationEnded, s.EndReason = false, ""
	s.Winner, s.WinnerLabel, s.WinnerAnswer, s.Tie = "", "", "", false
	s.Final, s.Integrated = nil, nil
	for _, a := range s.Agents {
		a.Status, a.Dead = StatusWaiting, false
		a.Answers, a.Vote = nil, nil
		a.Waiting, a.TimeUp, a.Reminded = "", false, false
		a.Presentation, a.Writing = "", ""
		a.stream, a.reasoning = nil, nil
	}
}
