package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// maxCallsPerTurn bounds the model calls of one coordination turn: the first call plus two
// enforcement retries, as in MassGen.
const maxCallsPerTurn = 3

// maxToolRounds bounds the responses in one turn (or presentation) that only call tools.
const maxToolRounds = 25

// conversation is one agent's dialogue with its model. It is owned by the agent's goroutine.
type conversation struct {
	system string
	msgs   []provider.Message
	sent   int // messages already sent to the model (and logged)
	seen   int // answer-set version the agent has been shown
	labels []string
	// After an accepted call the conversation continues (P6): the next turn opens with the
	// results of the last assistant message's calls, the accepted one carrying lead and the news.
	accepted string
	lead     string
}

func (c *conversation) reset() { *c = conversation{} }

func (c *conversation) fresh() bool { return c.sent == 0 }

// runAgent takes turns for agent i whenever it must act, until coordination ends.
func (s *session) runAgent(ctx context.Context, i int) {
	var c conversation
	for {
		s.mu.Lock()
		for !s.m.Ended() && !s.m.NeedsTurn(i) {
			ch := s.changed
			s.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
			s.mu.Lock()
		}
		if s.m.Ended() || ctx.Err() != nil {
			s.mu.Unlock()
			return
		}
		s.beginTurnLocked(i, &c)
		s.mu.Unlock()
		if err, timeout := s.turn(ctx, i, &c); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.reset()
			s.fail(i, err, timeout)
			if !s.pause(ctx, i) {
				return
			}
		}
	}
}

// pause waits out the retry delay after a failed turn; false when the session is over.
func (s *session) pause(ctx context.Context, i int) bool {
	s.mu.Lock()
	dead := s.m.Dead(i)
	n := s.m.Failures(i)
	s.mu.Unlock()
	if dead {
		return false
	}
	return sleep(ctx, s.o.RetryDelay(n))
}

// beginTurnLocked prepares the conversation for a turn; s.mu must be held.
func (s *session) beginTurnLocked(i int, c *conversation) {
	if c.fresh() && len(c.msgs) == 0 {
		a := s.agents[i]
		c.system = prompt.System(a.System, s.o.Orchestrator.VotingSensitivity, s.o.Orchestrator.AnswerNovelty) + s.planningSection()
		c.msgs = []provider.Message{{Role: provider.RoleUser, Content: prompt.User(s.o.Question, s.o.History, s.visible(s.m.CurrentAnswers()))}}
	} else {
		news := prompt.Update(c.lead, s.visible(s.m.AnswersSince(c.seen)))
		open := unanswered(c.msgs)
		if len(open) == 0 {
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: news})
		}
		for _, call := range open {
			content := "not run: only the workflow call of a response is acted on"
			if call.ID == c.accepted {
				content = news
			}
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Content: content})
		}
	}
	c.seen = s.m.Version()
	c.labels = s.m.VoteLabels()
	s.publish(event.TurnStarted{Agent: s.agents[i].ID, Version: c.seen, Available: c.labels, Fresh: c.fresh()})
}

func (s *session) visible(answers []coord.Answer) []prompt.Answer {
	out := make([]prompt.Answer, len(answers))
	for k, a := range answers {
		content := a.Content
		if ws := s.agents[a.Agent].Workspace; ws != nil {
			content = ws.ShareText(content)
		}
		out[k] = prompt.Answer{Label: coord.Label(a.Agent), Content: content}
	}
	return out
}

// turn runs one coordination turn of agent i: model calls until one workflow call is accepted.
// Responses that only use other tools (MCP, files, commands) run them and go on without using
// up one of the maxCallsPerTurn attempts; maxToolRounds bounds those. It returns the error
// that failed the turn, if any.
func (s *session) turn(ctx context.Context, i int, c *conversation) (err error, timeout bool) {
	a := s.agents[i]
	attempt, rounds := 1, 0
	for {
		stage := provider.StageInitial
		if attempt > 1 || rounds > 0 || !c.fresh() {
			stage = provider.StageEnforcement
		}
		tools := append(a.Tools.Specs(), prompt.Tools(c.labels)...)
		req := provider.Request{Model: a.Model, System: c.system, Messages: c.msgs, Tools: tools, Stage: stage, Params: a.Params}
		mc := event.ModelCalled{Agent: a.ID, Stage: stage, Attempt: attempt, Fresh: c.fresh(), Messages: c.msgs[c.sent:]}
		if mc.Fresh {
			mc.System = c.system
		}
		s.publish(mc)
		c.sent = len(c.msgs)
		res, err := s.call(ctx, i, req, false)
		if err != nil {
			return err, errors.Is(err, errCallTimeout)
		}
		c.msgs = append(c.msgs, res.message())
		if res.incomplete() {
			// A cut-off response may hold a half-written answer or arguments cut mid-value:
			// nothing in it counts, and the model is told why, within the turn's attempts.
			note := s.cutNote(res)
			for _, tc := range res.message().ToolCalls {
				c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: prompt.CutNotRun, IsError: true})
			}
			s.publish(event.EnforcementSent{Agent: a.ID, Message: note})
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: note})
			s.mu.Lock()
			ended := s.m.Ended()
			if !ended {
				s.catchUpLocked(i, c)
			}
			s.mu.Unlock()
			if ended {
				return nil, false
			}
			if attempt++; attempt > maxCallsPerTurn {
				return fmt.Errorf("every one of %d model calls was cut off (%s)", maxCallsPerTurn, cutReason(res)), false
			}
			continue
		}
		if d := res.dropped; d != nil {
			s.publish(event.ToolRejected{Agent: a.ID, CallID: d.ID, Tool: d.Name, Error: prompt.TooManyCalls(s.o.Orchestrator.MaxToolCallsPerResponse)})
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: d.ID,
				Content: "Error: " + prompt.TooManyCalls(s.o.Orchestrator.MaxToolCallsPerResponse), IsError: true})
		}
		var workflow []coord.Call
		var other []provider.ToolCall
		for _, tc := range res.calls {
			if tc.Name == coord.ToolVote || tc.Name == coord.ToolNewAnswer {
				workflow = append(workflow, coord.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			} else {
				other = append(other, tc)
			}
		}
		if len(other) > 0 {
			if rounds++; rounds > maxToolRounds {
				return fmt.Errorf("more than %d rounds of tool calls without a new_answer or vote", maxToolRounds), false
			}
			s.runTools(ctx, i, c, other)
			if ctx.Err() != nil {
				return ctx.Err(), false
			}
		}

		s.mu.Lock()
		if s.m.Ended() {
			s.mu.Unlock()
			return nil, false
		}
		if len(workflow) == 0 && len(other) > 0 {
			s.catchUpLocked(i, c)
			s.mu.Unlock()
			continue
		}
		out := s.m.Resolve(i, workflow, res.text, c.seen)
		done := s.applyLocked(i, c, out)
		s.mu.Unlock()
		if done {
			return nil, false
		}
		if attempt++; attempt > maxCallsPerTurn {
			return fmt.Errorf("no accepted new_answer or vote after %d model calls", maxCallsPerTurn), false
		}
	}
}

// cutNote is what an agent whose response was cut off is told.
func (s *session) cutNote(res callResult) string {
	stop := ""
	if !res.overflow {
		stop = res.stopRaw
	}
	return prompt.Cut(stop, s.o.Orchestrator.MaxResponseChars, s.o.Orchestrator.MaxAnswerChars)
}

// cutReason names what cut a response off, for errors and events.
func cutReason(res callResult) string {
	if res.overflow {
		return "over orchestrator.max_response_chars"
	}
	return fmt.Sprintf("at the output token limit, stop reason %q", res.stopRaw)
}

// applyLocked publishes an outcome and updates the conversation; it reports whether the turn is
// over. s.mu must be held.
func (s *session) applyLocked(i int, c *conversation, out coord.Outcome) bool {
	id := s.agents[i].ID
	switch out.Kind {
	case coord.Answered:
		s.m.TurnSucceeded(i)
		// Snapshot before anyone can see the answer, so the files peers open match it.
		if ws := s.agents[i].Workspace; ws != nil {
			if err := ws.Snapshot(); err != nil {
				s.publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "snapshot failed", Detail: fmt.Sprintf("%s: %v", id, err)})
			}
		}
		inv := make([]string, len(out.Invalidated))
		for k, v := range out.Invalidated {
			inv[k] = s.agents[v].ID
		}
		s.publish(event.AnswerSubmitted{Agent: id, Label: out.Answer.Label, Content: out.Answer.Content, Version: out.Answer.Version, Invalidated: inv})
		c.accepted = out.Accepted
		c.lead = fmt.Sprintf("Your answer was accepted; the other agents see it as %s.", coord.Label(i))
		s.broadcastLocked()
		return true
	case coord.Voted:
		s.m.TurnSucceeded(i)
		v := out.Vote
		s.publish(event.VoteCast{Agent: id, Target: s.agents[v.Target].ID, TargetLabel: v.TargetLabel, AnswerLabel: v.AnswerLabel, Reason: v.Reason, Version: v.Version})
		c.accepted = out.Accepted
		c.lead = fmt.Sprintf("New answers arrived, so your vote for %s no longer counts.", v.TargetLabel)
		s.checkEndLocked()
		return true
	case coord.StaleVote:
		s.m.TurnSucceeded(i)
		v := out.Vote
		s.publish(event.VoteIgnored{Agent: id, TargetLabel: v.TargetLabel, Reason: v.Reason, SeenVersion: v.Version, CurrentVersion: s.m.Version()})
		c.accepted = out.Accepted
		c.lead = "Your vote was not counted: new answers arrived while you were working."
		return true
	case coord.Retry:
		for _, f := range out.Feedback {
			s.publish(event.ToolRejected{Agent: id, CallID: f.CallID, Tool: f.Tool, Error: f.Error})
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: f.CallID, Content: "Error: " + f.Error, IsError: true})
		}
	case coord.NoWorkflow:
		s.publish(event.EnforcementSent{Agent: id, Message: prompt.Enforcement})
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: prompt.Enforcement})
	}
	s.catchUpLocked(i, c)
	return false
}

// catchUpLocked brings an agent whose turn goes on up to date if answers arrived since it
// looked. s.mu must be held.
func (s *session) catchUpLocked(i int, c *conversation) {
	if news := s.m.AnswersSince(c.seen); len(news) > 0 {
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser,
			Content: strings.TrimSpace(prompt.Update("While you were working, the current answers changed.", s.visible(news)))})
	}
	c.seen = s.m.Version()
	c.labels = s.m.VoteLabels()
}

// unanswered returns the calls of the last assistant message that have no tool result yet.
func unanswered(msgs []provider.Message) []provider.ToolCall {
	answered := map[string]bool{}
	for k := len(msgs) - 1; k >= 0; k-- {
		m := msgs[k]
		switch m.Role {
		case provider.RoleTool:
			answered[m.ToolCallID] = true
		case provider.RoleAssistant:
			var open []provider.ToolCall
			for _, tc := range m.ToolCalls {
				if !answered[tc.ID] {
					open = append(open, tc)
				}
			}
			return open
		}
	}
	return nil
}
