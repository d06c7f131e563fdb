package engine

import (
	"fmt"
	"strings"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// Restore is a session's log as massgen resume takes it up: every whole event the process
// before wrote, SessionStarted first.
type Restore struct {
	Events []event.Event
	// Previous and Dropped are told in SessionResumed: how the log ended ("killed", or the
	// status a Ctrl-C left) and what of it was cut off.
	Previous, Dropped string
}

// resumePoint is how a restored conversation goes on.
type resumePoint struct {
	// redo: the log stopped while the conversation's last request was in flight, or before
	// the turn acted on its response: the request is made again, as attempt number attempt.
	redo    bool
	attempt int
	// rounds is how many turns the agent had started.
	rounds int
	// ownAtCall is how many of its own answers had been accepted when it made its last
	// request: that request's vote labels counted its own by this.
	ownAtCall int
}

func (r resumePoint) firstRound() int {
	if r.redo {
		return max(r.rounds, 1)
	}
	return r.rounds + 1
}

// takeAttempt is the attempt a turn starts with: the one being redone, once, else 1.
func (r *resumePoint) takeAttempt() int {
	a := max(r.attempt, 1)
	r.attempt = 0
	return a
}

// logged is one agent's coordination as the log shows it, folded event by event.
type logged struct {
	system  string
	msgs    []provider.Message // the messages of its last request
	sent    int                // of msgs, those sent before the last request
	attempt int
	text    strings.Builder // the last response, as far as it streamed
	calls   []provider.ToolCall
	results map[string]provider.Message // tool results after the last response, by call
	state   int                         // after the last request: callInFlight, callAccepted or callFailed
	kind    coord.Kind                  // what was accepted (callAccepted)
	label   string                      // the label voted for (Voted)
	rounds  int
	called  bool
	// available are the labels its last turn started with (TurnStarted): with a bounded
	// view, the peers it reads. ownAtCall is how many answers of its own had been accepted
	// when it made its last request, for the vote labels that request offered.
	available []string
	ownAtCall int
}

const (
	callInFlight = iota
	callAccepted
	callFailed
)

// restored is what a log says about a session.
type restored struct {
	after    event.Event
	coord    coord.Restored
	convs    []conversation
	redo     []string
	cost     float64
	usage    provider.Usage
	unpriced bool // an agent whose model has no price used tokens, as session.unpricedUsed
	plan     *planning
	personas []string
	ended    *event.CoordinationEnded
	final    *event.FinalAnswer
	deadWhy  []string // why agents left, as session.deadWhy
}

// fold reads the log of a session of s's agents.
func (s *session) fold(events []event.Event) (*restored, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("engine: resume: the log holds no event")
	}
	st, ok := events[0].Payload.(event.SessionStarted)
	if !ok {
		return nil, fmt.Errorf("engine: resume: the log opens with %s, not session_started", events[0].Payload.Type())
	}
	if err := s.sameAgents(st.Agents); err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, a := range s.agents {
		index[a.ID] = i
	}
	r := &restored{after: events[len(events)-1]}
	logs := make([]logged, len(s.agents))
	votes := make([]*coord.Vote, len(s.agents))
	failures := make([]int, len(s.agents))
	dead := make([]bool, len(s.agents))
	deferred := make([]bool, len(s.agents))
	answered := make([]int, len(s.agents)) // accepted answers per agent so far
	succeeded := func(i int, k coord.Kind) {
		failures[i] = 0
		logs[i].state, logs[i].kind = callAccepted, k
	}
	for _, e := range events[1:] {
		switch p := e.Payload.(type) {
		case event.TurnStarted:
			if i, ok := index[p.Agent]; ok {
				logs[i].rounds++
				logs[i].available = p.Available
			}
		case event.ModelCalled:
			i, ok := index[p.Agent]
			if !ok || (p.Stage != provider.StageInitial && p.Stage != provider.StageEnforcement) {
				continue
			}
			l := &logs[i]
			if p.Fresh {
				l.system, l.msgs = p.System, nil
			}
			l.sent = len(l.msgs)
			l.msgs = append(l.msgs, p.Messages...)
			l.attempt, l.called, l.state = p.Attempt, true, callInFlight
			l.ownAtCall = answered[i]
			l.text.Reset()
			l.calls, l.results = nil, map[string]provider.Message{}
		case event.TextDelta:
			if i, ok := index[p.Agent]; ok && !p.Presentation {
				logs[i].text.WriteString(p.Text)
			}
		case event.ToolCalled:
			if i, ok := index[p.Agent]; ok {
				logs[i].calls = append(logs[i].calls, p.Call)
			}
		case event.ToolResult:
			if i, ok := index[p.Agent]; ok && logs[i].results != nil {
				logs[i].results[p.CallID] = provider.Message{Role: provider.RoleTool, ToolCallID: p.CallID, Content: p.Content, IsError: p.IsError}
			}
		case event.ToolRejected:
			if i, ok := index[p.Agent]; ok && logs[i].results != nil && p.CallID != "" {
				logs[i].results[p.CallID] = provider.Message{Role: provider.RoleTool, ToolCallID: p.CallID, Content: "Error: " + p.Error, IsError: true}
			}
		case event.AnswerSubmitted:
			i, ok := index[p.Agent]
			if !ok {
				return nil, fmt.Errorf("engine: resume: event %d: an answer by %q, who is not one of the agents", e.Seq, p.Agent)
			}
			r.coord.Answers = append(r.coord.Answers, coord.Answer{Agent: i, Label: p.Label, Content: p.Content, Version: p.Version})
			answered[i]++
			succeeded(i, coord.Answered)
			// A vote cast on a bounded view counts until an answer it was shown is replaced,
			// which the answer names; the others count only on the version they were cast on.
			for _, id := range p.Invalidated {
				if k, ok := index[id]; ok && votes[k] != nil && votes[k].View != nil {
					votes[k] = nil
				}
			}
		case event.VoteCast:
			i, ok := index[p.Agent]
			t := coord.ParseLabel(p.TargetLabel, len(s.agents))
			if !ok || t < 0 {
				return nil, fmt.Errorf("engine: resume: event %d: a vote by %q for %q, which are not the session's agents", e.Seq, p.Agent, p.TargetLabel)
			}
			votes[i] = &coord.Vote{Voter: i, Target: t, TargetLabel: p.TargetLabel, AnswerLabel: p.AnswerLabel, Reason: p.Reason, Version: p.Version}
			if p.Scoped {
				// What it was shown: the current answers of the peers its turn read, and its own.
				votes[i].View = make([]int, len(s.agents))
				for _, l := range logs[i].available {
					if k := coord.ParseLabel(l, len(s.agents)); k >= 0 {
						votes[i].View[k] = answered[k]
					}
				}
			}
			succeeded(i, coord.Voted)
			logs[i].label = p.TargetLabel
		case event.ChecklistSubmitted:
			if i, ok := index[p.Agent]; ok {
				if r.coord.Checklists == nil {
					r.coord.Checklists = map[int]coord.Checklist{}
				}
				r.coord.Checklists[i] = checklistOf(p)
			}
		case event.VoteIgnored:
			if i, ok := index[p.Agent]; ok {
				succeeded(i, coord.StaleVote)
			}
		case event.VoteDeferred:
			if i, ok := index[p.Agent]; ok {
				deferred[i] = true
				succeeded(i, coord.Deferred)
			}
		case event.AgentError:
			if i, ok := index[p.Agent]; ok && r.ended == nil {
				// The turn failed: the conversation starts anew (runAgent resets it).
				failures[i], logs[i].state = p.Consecutive, callFailed
			}
		case event.AgentDead:
			if i, ok := index[p.Agent]; ok {
				dead[i] = true
				r.deadWhy = append(r.deadWhy, p.Agent+": "+clipText(p.Reason))
			}
		case event.UsageReported:
			r.cost += p.CostUSD
			r.usage = r.usage.Add(p.Usage)
			if i, ok := index[p.Agent]; ok && s.agents[i].Unpriced && !p.Usage.Unknown {
				r.unpriced = true
			}
		case event.PlanningDecided:
			r.plan = &planning{on: p.HoldBack, held: p.Held}
		case event.PersonasGenerated:
			r.personas = make([]string, len(s.agents))
			for _, pe := range p.Personas {
				if i, ok := index[pe.Agent]; ok {
					r.personas[i] = pe.Text
				}
			}
		case event.CoordinationEnded:
			ended := p
			r.ended = &ended
		case event.FinalAnswer:
			final := p
			r.final = &final
		case event.SessionEnded:
			// Only a Ctrl-C's end is resumed: what it cut short is done again, coordination
			// too when that is what it stopped.
			if r.ended != nil && r.ended.Reason == event.EndInterrupted {
				r.ended = nil
			}
			r.final = nil
		case event.SessionResumed:
			// The resume before started from this point: fold on from where it did.
			for i := range logs {
				logs[i].settle()
			}
		}
	}
	for i, v := range votes {
		if v != nil && len(r.coord.Answers) > 0 && (v.View != nil || v.Version == len(r.coord.Answers)) && !dead[i] {
			r.coord.Votes = append(r.coord.Votes, *v)
		}
		if dead[i] {
			r.coord.Dead = append(r.coord.Dead, i)
		}
		if deferred[i] {
			r.coord.Deferred = append(r.coord.Deferred, i)
		}
	}
	r.coord.Failures = failures
	r.convs = make([]conversation, len(s.agents))
	for i := range logs {
		if dead[i] {
			continue
		}
		c := logs[i].conversation(i)
		if s.bounded && logs[i].called {
			c.view = make([]bool, len(s.agents))
			for _, l := range logs[i].available {
				if k := coord.ParseLabel(l, len(s.agents)); k >= 0 {
					c.view[k] = true
				}
			}
		}
		switch {
		case r.ended != nil && c.resumed.redo:
			// Coordination ended while the call was in flight: it was cancelled, and the
			// conversation goes on into the presentation without its response.
			c.sent, c.resumed.redo = len(c.msgs), false
		case c.resumed.redo:
			r.redo = append(r.redo, s.agents[i].ID)
		}
		r.convs[i] = c
	}
	return r, nil
}

// settle is the conversation as a resume at this point took it up: the accepted response
// stays (the next request brings it), a request in flight is made again, a failed turn's
// conversation starts anew.
func (l *logged) settle() {
	switch {
	case !l.called || l.state == callFailed:
		*l = logged{rounds: l.rounds}
	case l.state == callInFlight:
		l.msgs = l.msgs[:l.sent]
	}
	l.text.Reset()
	l.calls, l.results = nil, nil
}

// conversation is the agent's conversation to resume with.
func (l *logged) conversation(i int) conversation {
	c := conversation{resumed: resumePoint{rounds: l.rounds, ownAtCall: l.ownAtCall}}
	switch {
	case !l.called || l.state == callFailed:
		return c // a new conversation, seeded with the current answers by its next turn
	case l.state == callInFlight:
		c.system, c.msgs, c.sent = l.system, l.msgs, l.sent
		c.resumed.redo, c.resumed.attempt = true, l.attempt
		return c
	}
	c.system, c.sent = l.system, len(l.msgs)
	reply := provider.Message{Role: provider.RoleAssistant, Content: l.text.String(), ToolCalls: l.calls}
	c.msgs = append(append([]provider.Message(nil), l.msgs...), reply)
	for _, tc := range l.calls {
		if tc.Name == coord.ToolNewAnswer || tc.Name == coord.ToolVote {
			c.accepted = tc.ID
		} else if res, ok := l.results[tc.ID]; ok {
			c.msgs = append(c.msgs, res)
		}
	}
	c.lead = leadFor(i, l.kind, l.label)
	return c
}

// leadFor is what agent i's next turn opens with after an accepted call of kind k, as
// applyLocked words it.
func leadFor(i int, k coord.Kind, label string) string {
	switch k {
	case coord.Answered:
		return fmt.Sprintf("Your answer was accepted; the other agents see it as %s.", coord.Label(i))
	case coord.Voted:
		return fmt.Sprintf("New answers arrived, so your vote for %s no longer counts.", label)
	case coord.StaleVote:
		return "Your vote was not counted: new answers arrived while you were working."
	case coord.Deferred:
		return prompt.VotingOpen
	}
	return ""
}

// sameAgents checks that the log's agents are the session's, in the same order.
func (s *session) sameAgents(infos []event.AgentInfo) error {
	var was, now []string
	for _, a := range infos {
		was = append(was, a.ID)
	}
	for _, a := range s.agents {
		now = append(now, a.ID)
	}
	if strings.Join(was, ",") != strings.Join(now, ",") {
		return fmt.Errorf("engine: resume: the session ran with the agents %s, and the config has %s", strings.Join(was, ", "), strings.Join(now, ", "))
	}
	return nil
}
