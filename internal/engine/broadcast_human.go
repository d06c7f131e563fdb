package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"massgen/internal/coord"
	"massgen/internal/event"
)

// broadcast: human (the person answers the agents' questions) and what a resumed session
// takes up of the questions its log holds.

// askPerson puts agent i's question to the person (broadcast: human), one question at a time.
func (s *session) askPerson(ctx context.Context, i int, text string) (any, error) {
	bc := s.bc
	select {
	case bc.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("not answered: the session is ending")
	}
	defer func() { <-bc.turn }()
	s.mu.Lock()
	if told := bc.qaTold[i]; len(bc.qa) > told {
		// Answers the person gave others may cover this question: shown first, not asked.
		bc.qaTold[i] = len(bc.qa)
		history := slices.Clone(bc.qa)
		s.mu.Unlock()
		return map[string]any{"status": "deferred", "responses": []response{}, "human_qa_history": history,
			"human_qa_note": "The person has already answered these questions in this session; the person was not asked again. " +
				"If they do not cover what you need, call ask_others again with a more specific question."}, nil
	}
	s.mu.Unlock()
	q, asked, err := s.openQuestion(i, text, nil, true)
	if err != nil {
		return nil, err
	}
	status, note := event.BroadcastTimeout, ""
	if bc.broker == nil {
		s.publish(asked)
		note = "nobody can answer: no live view, terminal, dashboard or --inbox-dir is attached"
	} else {
		answer, by := bc.broker.Question(ctx, q.id, bc.cfg.Timeout, func() { s.publish(asked) })
		switch by {
		case "person":
			status = event.BroadcastComplete
			if answer = strings.TrimSpace(answer); answer == "" {
				note = "the person skipped the question"
				break
			}
			s.mu.Lock()
			q.responses = append(q.responses, response{Responder: event.ResponderHuman, Content: answer, Human: true})
			bc.qa = append(bc.qa, qaPair{Question: text, Answer: answer})
			bc.qaTold[i] = len(bc.qa)
			s.publish(event.BroadcastAnswered{Agent: s.agents[i].ID, ID: q.id, Responder: event.ResponderHuman, Content: answer})
			s.mu.Unlock()
		case "timeout":
			note = fmt.Sprintf("nobody answered within broadcast_timeout (%s)", bc.cfg.Timeout)
		default:
			status, note = event.BroadcastCancelled, "the session ended while the question waited"
		}
	}
	s.closeQuestion(q, status, note)
	out := s.result(q)
	if note != "" {
		out["note"] = note + ": go on with your own judgement"
	}
	s.mu.Lock()
	if len(bc.qa) > 0 {
		out["human_qa_history"] = slices.Clone(bc.qa)
	}
	s.mu.Unlock()
	return out, nil
}

// restoreBroadcasts takes up the questions a resumed session's log holds: their answers stay
// readable (get_broadcast_responses), the person's answers are still shown to agents that
// ask, the numbering and max_broadcasts_per_agent go on, and a question the process stopped
// waiting on is closed as cancelled: the asker's call in flight is made again, and may ask
// again.
func (s *session) restoreBroadcasts(evs []event.Event) {
	if s.bc == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bc := s.bc
	var open []*question
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.BroadcastAsked:
			i := s.index(p.Agent)
			if i < 0 {
				continue
			}
			var n int
			if _, err := fmt.Sscanf(p.ID, "bc_%d", &n); err == nil && n > bc.seq {
				bc.seq = n
			}
			bc.asked[i]++
			q := &question{id: p.ID, text: p.Question, asker: i, status: "collecting", done: make(chan struct{})}
			for _, t := range p.Targets {
				if k := s.index(t); k >= 0 {
					q.targets = append(q.targets, k)
				}
			}
			bc.reqs[p.ID] = q
			open = append(open, q)
		case event.BroadcastAnswered:
			q := bc.reqs[p.ID]
			if q == nil {
				continue
			}
			r := response{Responder: event.ResponderHuman, Content: p.Content, Human: p.Responder == event.ResponderHuman}
			if k := s.index(p.Responder); k >= 0 {
				r.Responder = coord.Label(k)
			}
			q.responses = append(q.responses, r)
			if r.Human {
				bc.qa = append(bc.qa, qaPair{Question: q.text, Answer: p.Content})
				bc.qaTold[q.asker] = len(bc.qa)
			}
		case event.BroadcastDone:
			if q := bc.reqs[p.ID]; q != nil && q.status == "collecting" {
				q.status = p.Status
				close(q.done)
			}
		}
	}
	for _, q := range open {
		if q.status == "collecting" {
			q.status = event.BroadcastCancelled
			s.publish(event.BroadcastDone{Agent: s.agents[q.asker].ID, ID: q.id, Status: q.status, Answers: len(q.responses),
				Note: "the session stopped while the question waited; it was not asked again"})
			close(q.done)
		}
	}
}
