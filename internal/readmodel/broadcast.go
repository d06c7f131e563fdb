package readmodel

import "massgen/internal/event"

// Question is one ask_others question and what came of it.
type Question struct {
	ID    string
	Agent string // who asked (real id)
	Text  string
	Human bool // put to the person
	// Targets are the agents asked (real ids); empty when the person is asked.
	Targets []string
	Answers []QuestionAnswer
	// Status is "" while it waits, then event.BroadcastComplete, Timeout or Cancelled; Note
	// says why no answer came, when none did.
	Status, Note string
}

// QuestionAnswer is one answer: Responder is an agent's real id or event.ResponderHuman.
type QuestionAnswer struct {
	Responder, Content string
	Error              bool
}

// Waiting reports whether the question still waits for answers.
func (q *Question) Waiting() bool { return q.Status == "" }

// QuestionByID returns question id, or nil.
func (s *State) QuestionByID(id string) *Question {
	for _, q := range s.Questions {
		if q.ID == id {
			return q
		}
	}
	return nil
}

// WaitingForPerson returns the questions put to the person that wait for an answer, oldest
// first.
func (s *State) WaitingForPerson() []*Question {
	var out []*Question
	for _, q := range s.Questions {
		if q.Human && q.Waiting() {
			out = append(out, q)
		}
	}
	return out
}

func (s *State) broadcast(p event.Payload) {
	switch p := p.(type) {
	case event.BroadcastAsked:
		if s.QuestionByID(p.ID) == nil {
			s.Questions = append(s.Questions, &Question{ID: p.ID, Agent: p.Agent, Text: p.Question, Human: p.Human, Targets: p.Targets})
		}
	case event.BroadcastAnswered:
		if q := s.QuestionByID(p.ID); q != nil {
			q.Answers = append(q.Answers, QuestionAnswer{Responder: p.Responder, Content: p.Content, Error: p.Error})
		}
	case event.BroadcastDone:
		if q := s.QuestionByID(p.ID); q != nil {
			q.Status, q.Note = p.Status, p.Note
		}
	}
}
