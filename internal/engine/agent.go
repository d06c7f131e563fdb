package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"massgen/internal/coord"
	"massgen/internal/criteria"
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
	// seen is the answer-set version the agent is fully up to date with: a vote counts only
	// when it is current. shown[k] is how many of agent k's answers the agent has been shown;
	// seen stays behind while some current answer has not been shown (disable_injection, or
	// the cap on updates delivered within one turn).
	seen   int
	shown  []int
	labels []string
	// ownShown is how many of its own answers the agent has been shown as the others see them
	// (paths rewritten by ShareText); its own answers always count as seen.
	ownShown int
	// After an accepted call the conversation continues (P6): the next turn opens with the
	// results of the last assistant message's calls, the accepted one carrying lead and the news.
	accepted string
	lead     string
	// injected counts the peer answers delivered to the agent within the current turn
	// (max_midstream_injections_per_round).
	injected int
	// round is the current turn's round timeout, when one applies.
	round roundClock
	// view[k] says whether the agent reads agent k's answers, when it reads a bounded view of
	// its peers (nil: it reads every answer).
	view []bool
	// tools are the tools its last request offered, which a presentation that continues the
	// conversation offers again so that the cached prefix holds.
	tools []provider.ToolSpec
	// resumed says how a conversation restored from the log goes on (resume.go).
	resumed resumePoint
	// criteria are the checklist criteria the agent has read (nil: its system prompt's).
	criteria []criteria.Criterion
}

// roundClock is one turn's round timeout: at soft the agent is told to submit now, at cut
// the round is cut off (initial/subsequent_round_timeout_seconds plus round_timeout_grace_seconds).
type roundClock struct {
	n            int // the agent's round, 1 for its first
	start        time.Time
	soft, cut    time.Time // zero when no round timeout applies
	limit, grace time.Duration
	warned       bool // the agent was told its time is up
}

func (c *conversation) reset() { *c = conversation{} }

func (c *conversation) fresh() bool { return c.sent == 0 }

// runAgent takes turns for agent i whenever it must act, until coordination ends.
func (s *session) runAgent(ctx context.Context, i int) {
	s.convs[i] = s.restoredConversation(i)
	c := &s.convs[i]
	waiting := "" // why the agent last waited, so that each new reason is published once
	for round := c.resumed.firstRound(); ; round++ {
		s.mu.Lock()
		for !s.m.Ended() && !s.m.NeedsTurn(i) {
			if why := s.m.Blocked(i); why != "" && why != waiting && !s.m.Dead(i) {
				waiting = why
				s.publish(event.AgentWaiting{Agent: s.agents[i].ID, Reason: why})
			}
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
		waiting = ""
		if !s.beforeRoundLocked(ctx, i, c) {
			s.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			round-- // the round has not begun: wait again
			continue
		}
		s.turnOf[i] = round
		if c.resumed.redo {
			s.redoTurnLocked(i, c, round) // the call in flight when the log stopped
		} else {
			s.beginTurnLocked(i, c, round)
		}
		s.mu.Unlock()
		if err, timeout := s.turn(ctx, i, c); err != nil {
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

// beginTurnLocked prepares the conversation for a turn; s.mu must be held. Whatever the agent
// has not been shown yet is shown now, in full: a new turn is not mid-stream delivery.
func (s *session) beginTurnLocked(i int, c *conversation, round int) {
	if s.sharedTurnsFor(i) {
		s.sharedTurnLocked(i, c, round)
	} else if c.fresh() && len(c.msgs) == 0 {
		c.system = prompt.SystemFor(s.coordinationPrompt(i)) + s.planningSection()
		c.shown = make([]int, len(s.agents))
		current := s.m.CurrentAnswers()
		s.markShown(c, current)
		c.ownShown = s.m.AnswerCount(i)
		c.msgs = []provider.Message{{Role: provider.RoleUser, Content: s.userPrompt(i, s.visible(current))}}
	} else {
		news := s.m.Unseen(i, c.shown)
		s.markShown(c, news)
		if own, ok := s.m.Current(i); ok && s.m.AnswerCount(i) > c.ownShown {
			// The agent wrote its accepted answer in this conversation: it is shown again
			// only when the others read it otherwise (its paths rewritten to where they
			// can open them), not to be read and paid for twice.
			if ws := s.agents[i].Workspace; ws != nil && ws.ShareText(own.Content) != own.Content {
				news = append(news, own)
			}
			c.ownShown = s.m.AnswerCount(i)
		}
		update := s.update(c.lead, s.visible(inAgentOrder(news)))
		open := unanswered(c.msgs)
		if len(open) == 0 {
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: update})
		}
		for _, call := range open {
			content := "not run: only the workflow call of a response is acted on"
			if call.ID == c.accepted {
				content = update
			}
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Content: content})
		}
	}
	c.injected = 0
	s.m.BeginRound(i)
	s.deliverCriteriaLocked(i, c)
	s.deliverReportLocked(i, c)
	s.deliverHumanInputLocked(i, c)
	s.deliverInboxLocked(i, c)
	s.deliverBroadcastNotesLocked(i, c)
	s.syncSeenLocked(i, c)
	c.round = s.roundClock(round)
	s.publish(event.TurnStarted{Agent: s.agents[i].ID, Version: c.seen, Available: c.labels, Fresh: c.fresh()})
}

// coordinationPrompt gathers what agent i's coordination system prompt says.
func (s *session) coordinationPrompt(i int) prompt.Coordination {
	a := s.agents[i]
	o := s.o.Orchestrator
	c := prompt.Coordination{
		AgentSystem:       a.System,
		VotingSensitivity: cmp.Or(a.VotingSensitivity, o.VotingSensitivity),
		AnswerNovelty:     o.AnswerNovelty,
		SkipVoting:        s.skipVoting,
		DeferVoting:       o.DeferVotingUntilAllAnswered,
	}
	c.Checklist = s.checklistSection(c.VotingSensitivity)
	c.Changedoc = s.changedocOn(i)
	c.TaskPlanning = s.tp != nil
	c.TaskPlanFile = c.TaskPlanning && a.SavePlan != nil
	if i < len(s.personas) {
		c.Persona = s.personas[i]
	}
	if s.decomposing() {
		c.Decomposition, c.Subtask, c.PartCriteria, c.Checklist = true, s.subtaskOf(i), s.splitCriteria(), ""
	}
	return c
}

// markShown records that the agent of c has been shown answers.
func (s *session) markShown(c *conversation, answers []coord.Answer) {
	for _, a := range answers {
		c.shown[a.Agent] = s.m.AnswerCount(a.Agent)
	}
}

// syncSeenLocked brings c.seen and the vote labels in line with what the agent has been shown;
// s.mu must be held.
func (s *session) syncSeenLocked(i int, c *conversation) {
	if own := s.m.AnswerCount(i); own > c.shown[i] {
		c.shown[i] = own
	}
	if len(s.unseenLocked(i, c)) == 0 {
		c.seen = s.m.Version()
	}
	if c.view != nil {
		s.m.SetView(i, c.shown)
	}
	c.labels = c.labels[:0:0]
	for k, n := range c.shown {
		if n > 0 {
			c.labels = append(c.labels, coord.Label(k))
		}
	}
}

// update is the message that brings an agent up to date, worded for the session's tools.
func (s *session) update(lead string, news []prompt.Answer) string {
	if s.decomposing() {
		return prompt.UpdateParts(lead, news)
	}
	if s.skipVoting {
		return prompt.UpdateNoVote(lead, news)
	}
	return prompt.Update(lead, news)
}

func (s *session) visible(answers []coord.Answer) []prompt.Answer {
	out := make([]prompt.Answer, len(answers))
	for k, a := range answers {
		content := a.Content
		if ws := s.agents[a.Agent].Workspace; ws != nil {
			content = ws.ShareText(content)
		}
		out[k] = prompt.Answer{Label: coord.Label(a.Agent), Content: content, Changedoc: s.changedocs.get(a.Label)}
	}
	return out
}

// inAgentOrder sorts answers by agent, the order every prompt shows them in (P10).
func inAgentOrder(answers []coord.Answer) []coord.Answer {
	out := slices.Clone(answers)
	slices.SortFunc(out, func(a, b coord.Answer) int { return cmp.Compare(a.Agent, b.Agent) })
	return out
}

// turn runs one coordination turn of agent i: model calls until one workflow call is accepted.
// Responses that only use other tools (MCP, files, commands) run them and go on without using
// up one of the maxCallsPerTurn attempts; maxToolRounds bounds those. It returns the error
// that failed the turn, if any.
func (s *session) turn(ctx context.Context, i int, c *conversation) (err error, timeout bool) {
	a := s.agents[i]
	attempt, rounds := c.resumed.takeAttempt(), 0
	for {
		if s.stopForBudget() || s.stopForTokenCap(i) {
			return nil, false
		}
		if err := s.checkRound(i, c); err != nil {
			return err, true
		}
		stage := provider.StageInitial
		if attempt > 1 || rounds > 0 || !c.fresh() {
			stage = provider.StageEnforcement
		}
		s.compact(ctx, i, c)
		tools := append(append(append(append(a.Tools.Specs(), s.workflowTools(c.labels)...), s.checklistTools(c)...), s.broadcastTools(i)...), s.planTools()...)
		c.tools = tools
		req := provider.Request{Model: a.Model, System: c.system, Messages: c.msgs, Tools: tools, Stage: stage, Params: a.Params,
			CacheKey: s.cacheKey(a.Model)}
		release := s.prefixes.enter(ctx, turnPrefixKey(a, c, req))
		mc := event.ModelCalled{Agent: a.ID, Stage: stage, Attempt: attempt, Fresh: c.fresh(), Messages: c.msgs[c.sent:]}
		if mc.Fresh {
			mc.System = c.system
		}
		s.publish(mc)
		c.sent = len(c.msgs)
		s.keepContext(i, c)
		res, err := s.call(ctx, i, req, false, c.round.cut)
		release()
		if errors.Is(err, errRoundCut) {
			s.roundCut(i, c)
			return s.roundError(&c.round), true
		}
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
		var workflowCalls []coord.Call
		var other []provider.ToolCall
		for _, tc := range res.calls {
			if coord.IsWorkflow(tc.Name) {
				workflowCalls = append(workflowCalls, coord.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			} else {
				other = append(other, tc)
			}
		}
		if len(other) > 0 && len(workflowCalls) == 0 {
			// Tools cost more time and tokens; once the budget is spent they are not run.
			if s.stopForBudget() {
				return nil, false
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
		if len(workflowCalls) == 0 && len(other) > 0 {
			s.catchUpLocked(i, c)
			s.mu.Unlock()
			continue
		}
		out := s.m.Resolve(i, workflowCalls, res.text, c.seen)
		done := s.applyLocked(i, c, out)
		// The answer or vote this call paid for counts; then coordination stops.
		if s.endIfOverBudgetLocked() || s.tokenCapLocked(i) {
			done = true
		}
		s.mu.Unlock()
		if done {
			return nil, false
		}
		if attempt++; attempt > maxCallsPerTurn {
			return fmt.Errorf("no accepted new_answer or vote after %d model calls", maxCallsPerTurn), false
		}
	}
}

// stopForBudget ends coordination if max_cost_usd is spent and reports whether it is over.
func (s *session) stopForBudget() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endIfOverBudgetLocked()
	return s.m.Ended()
}

// endIfOverBudgetLocked ends coordination if max_cost_usd is spent and reports whether it
// was; s.mu must be held.
func (s *session) endIfOverBudgetLocked() bool {
	if s.overBudget {
		s.endLocked(event.EndBudget)
	}
	return s.overBudget
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
		if ws := s.agents[i].Workspace; ws != nil && !s.replaying {
			if err := ws.Snapshot(); err != nil {
				s.publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "snapshot failed", Detail: fmt.Sprintf("%s: %v", id, err)})
			}
		}
		inv := make([]string, len(out.Invalidated))
		for k, v := range out.Invalidated {
			inv[k] = s.agents[v].ID
		}
		doc := ""
		if s.changedocOn(i) {
			doc = s.readChangedoc(i, out.Answer.Label, true)
			s.changedocs.set(out.Answer.Label, doc)
		}
		s.publish(event.AnswerSubmitted{Agent: id, Label: out.Answer.Label, Content: out.Answer.Content, Version: out.Answer.Version, Invalidated: inv,
			Confidence: out.Answer.Confidence, Changedoc: doc})
		c.accepted = out.Accepted
		c.lead = fmt.Sprintf("Your answer was accepted; the other agents see it as %s.", coord.Label(i))
		s.broadcastLocked()
		s.checkEndLocked() // with skip_voting the last answer completes coordination
		return true
	case coord.Voted:
		s.m.TurnSucceeded(i)
		v := out.Vote
		s.publish(event.VoteCast{Agent: id, Target: s.agents[v.Target].ID, TargetLabel: v.TargetLabel, AnswerLabel: v.AnswerLabel, Reason: v.Reason, Version: v.Version,
			Confidence: v.Confidence, Scoped: v.View != nil})
		c.accepted = out.Accepted
		c.lead = fmt.Sprintf("New answers arrived, so your vote for %s no longer counts.", v.TargetLabel)
		// An agent that voted leaves the fairness cap's active set: a faster one may go on.
		s.broadcastLocked()
		s.checkEndLocked()
		return true
	case coord.StaleVote:
		s.m.TurnSucceeded(i)
		v := out.Vote
		s.publish(event.VoteIgnored{Agent: id, TargetLabel: v.TargetLabel, Reason: v.Reason, SeenVersion: v.Version, CurrentVersion: s.m.Version()})
		c.accepted = out.Accepted
		c.lead = "Your vote was not counted: new answers arrived while you were working."
		return true
	case coord.Deferred:
		s.m.TurnSucceeded(i)
		v := out.Vote
		waiting := make([]string, len(out.Waiting))
		for k, w := range out.Waiting {
			waiting[k] = coord.Label(w)
		}
		s.publish(event.VoteDeferred{Agent: id, TargetLabel: v.TargetLabel, Reason: v.Reason, Waiting: waiting})
		c.accepted = out.Accepted
		c.lead = prompt.VotingOpen
		return true
	case coord.Stopped, coord.StaleStop:
		return s.applyStopLocked(i, c, out)
	case coord.Retry:
		for _, f := range out.Feedback {
			s.publish(event.ToolRejected{Agent: id, CallID: f.CallID, Tool: f.Tool, Error: f.Error})
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: f.CallID, Content: "Error: " + f.Error, IsError: true})
		}
	case coord.NoWorkflow:
		note := s.enforcement()
		s.publish(event.EnforcementSent{Agent: id, Message: note})
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: note})
	}
	s.catchUpLocked(i, c)
	return false
}

// catchUpLocked brings an agent whose turn goes on up to date if answers arrived since it
// looked (P6); s.mu must be held. With disable_injection nothing is delivered mid-turn: the
// agent sees the new answers on its next turn, and a vote it casts meanwhile is stale. With
// defer_peer_updates_until_restart only the peers' answers wait for its next turn; a person's
// messages, subagent results and broadcast notes still reach it. With
// fairness, at most max_midstream_injections_per_round answers reach it in one turn, the
// newest first (MassGen's select_midstream_answer_updates); the rest wait for its next turn.
func (s *session) catchUpLocked(i int, c *conversation) {
	if s.o.Orchestrator.DisableInjection {
		return
	}
	var news []coord.Answer
	if !s.o.Orchestrator.DeferPeerUpdatesUntilRestart {
		news = s.unseenLocked(i, c)
	}
	if f := s.o.Orchestrator.Fairness; f.Enabled && len(news) > 0 {
		room := max(f.MaxMidstreamInjectionsPerRound-c.injected, 0)
		news = news[:min(room, len(news))]
		c.injected += len(news)
	}
	if len(news) > 0 {
		s.markShown(c, news)
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser,
			Content: strings.TrimSpace(s.update("While you were working, the current answers changed.", s.visible(inAgentOrder(news))))})
	}
	s.deliverHumanInputLocked(i, c)
	s.deliverInboxLocked(i, c)
	s.deliverBroadcastNotesLocked(i, c)
	s.syncSeenLocked(i, c)
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
