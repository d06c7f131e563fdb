package engine

import (
	"slices"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// continuation returns the final presentation of presenter i as the continuation of its last
// coordination conversation (presentation_context: continue): the same system prompt and
// tools, every message so far, whose prefix the provider has cached, then the results of the
// calls left open and one message with what to do, the vote and the answers it has not been
// shown. It returns nil when the presentation gets a prompt of its own: presentation_context:
// fresh, coordination skipped, or no conversation to continue (the agent's last turn failed,
// or it never made a call). Called after coordination, when no agent goroutine runs.
func (s *session) continuation(i int, reason string, p prompt.Presentation) *presentCall {
	if s.o.Orchestrator.PresentationContext == config.PresentFresh || reason == event.EndSkipped {
		return nil
	}
	c := &s.convs[i]
	if len(c.msgs) == 0 || c.sent == 0 || c.system == "" {
		return nil
	}
	msgs := slices.Clone(c.msgs)
	for _, call := range unanswered(msgs) {
		msgs = append(msgs, provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Content: prompt.CoordinationOver})
	}
	s.mu.Lock()
	var unseen []coord.Answer
	for _, a := range s.m.CurrentAnswers() {
		if a.Agent == i || c.shown != nil && c.shown[a.Agent] >= s.m.AnswerCount(a.Agent) {
			continue
		}
		if c.view != nil && !c.view[a.Agent] && coord.Label(a.Agent) != p.Winner {
			continue // a bounded view: the winner's answer and the peers it read
		}
		unseen = append(unseen, a)
	}
	p.Answers = s.visible(unseen)
	s.mu.Unlock()
	p.Presenter = coord.Label(i)
	user := p.Continued()
	if s.plan.on {
		user += "\n\n" + prompt.PlanningRelease
	}
	sent := len(c.msgs)
	msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: user})
	return &presentCall{system: c.system, msgs: msgs, sent: sent, tools: c.tools}
}
