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
	tokens   []int64 // per agent, as session.tokens
	unpriced bool    // an agent whose model has no price used tokens, as session.unpricedUsed
	plan     *planning
	personas []string
	subtasks []string // decomposition mode's parts, nil when none were assigned
	variants []string
	ended    *event.CoordinationEnded
	final    *event.FinalAnswer
	deadWhy  []string // why agents left, as session.deadWhy
	// restart is why the logged attempt began (nil in the first); everything above but the
	// spending and the decisions before coordination is that attempt's. submitted: its final
	// answer's post-evaluation ended (AnswerSubmittedFinal).
	restart   *event.OrchestrationRestarted
	submitted bool
}

// folder is the state fold keeps while it reads a log, one slot per agent.
type folder struct {
	s        *session
	index    map[string]int // agent ID -> index
	r        *restored
	logs     []logged
	votes    []*coord.Vote
	stops    []*coord.Stop
	failures []int
	dead     []bool
	deferred []bool
	answered []int // accepted answers per agent so far
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
	n := len(s.agents)
	f := &folder{s: s, index: map[string]int{}, r: &restored{after: events[len(events)-1], tokens: make([]int64, len(s.agents))},
		logs: make([]logged, n), votes: make([]*coord.Vote, n), stops: make([]*coord.Stop, n), failures: make([]int, n),
		dead: make([]bool, n), deferred: make([]bool, n), answered: make([]int, n)}
	for i, a := range s.agents {
		f.index[a.ID] = i
	}
	for _, e := range events[1:] {
		if err := f.apply(e); err != nil {
			return nil, err
		}
	}
	f.settleVotes()
	f.conversations()
	return f.r, nil
}

// apply folds one event in.
func (f *folder) apply(e event.Event) error {
	switch p := e.Payload.(type) {
	case event.TurnStarted:
		if i, ok := f.index[p.Agent]; ok {
			f.s.m.Release(i) // lazy start had let it join
			f.logs[i].rounds++
			f.logs[i].available = p.Available
		}
	case event.ModelCalled:
		f.modelCalled(p)
	case event.TextDelta:
		if i, ok := f.index[p.Agent]; ok && !p.Presentation {
			f.logs[i].text.WriteString(p.Text)
		}
	case event.ToolCalled:
		if i, ok := f.index[p.Agent]; ok {
			f.logs[i].calls = append(f.logs[i].calls, p.Call)
		}
	case event.ToolResult:
		f.toolResult(p.Agent, provider.Message{Role: provider.RoleTool, ToolCallID: p.CallID, Content: p.Content, IsError: p.IsError})
	case event.ToolRejected:
		if p.CallID != "" {
			f.toolResult(p.Agent, provider.Message{Role: provider.RoleTool, ToolCallID: p.CallID, Content: "Error: " + p.Error, IsError: true})
		}
	case event.AnswerSubmitted:
		return f.answer(e.Seq, p)
	case event.VoteCast:
		return f.vote(e.Seq, p)
	case event.ChecklistSubmitted:
		f.checklist(p)
	case event.VoteIgnored:
		if i, ok := f.index[p.Agent]; ok {
			f.succeeded(i, coord.StaleVote)
		}
	case event.VoteDeferred:
		if i, ok := f.index[p.Agent]; ok {
			f.deferred[i] = true
			f.succeeded(i, coord.Deferred)
		}
	case event.AgentError:
		if i, ok := f.index[p.Agent]; ok && f.r.ended == nil {
			// The turn failed: the conversation starts anew (runAgent resets it).
			f.failures[i], f.logs[i].state = p.Consecutive, callFailed
		}
	case event.AgentDead:
		if i, ok := f.index[p.Agent]; ok {
			f.dead[i] = true
			f.r.deadWhy = append(f.r.deadWhy, p.Agent+": "+clipText(p.Reason))
		}
	case event.UsageReported:
		f.usage(p)
	case event.PlanningDecided:
		plan := planFrom(p)
		f.r.plan = &plan
	case event.PersonasGenerated:
		f.r.personas = f.s.personasFrom(p)
	case event.SubtasksAssigned:
		f.r.subtasks = f.s.subtasksFrom(p)
	case event.AgentStopped:
		if i, ok := f.index[p.Agent]; ok {
			if p.Stale {
				f.succeeded(i, coord.StaleStop)
			} else {
				f.stops[i] = &coord.Stop{Agent: i, Summary: p.Summary, Status: p.Status, Version: p.Version}
				f.succeeded(i, coord.Stopped)
			}
		}
	case event.QuestionParaphrased:
		f.r.variants = f.s.variantsFrom(p)
	case event.CoordinationEnded:
		f.r.ended = &p
	case event.FinalAnswer:
		f.r.final = &p
	case event.AnswerSubmittedFinal:
		f.r.submitted = true
	case event.OrchestrationRestarted:
		f.newAttempt(p)
	case event.SessionEnded:
		// Only a Ctrl-C's end is resumed: what it cut short is done again, coordination
		// too when that is what it stopped.
		if f.r.ended != nil && f.r.ended.Reason == event.EndInterrupted {
			f.r.ended = nil
		}
		f.r.final = nil
	case event.SessionResumed:
		// The resume before started from this point: fold on from where it did.
		for i := range f.logs {
			f.logs[i].settle()
		}
	}
	return nil
}

// newAttempt starts the fold of a restarted attempt: its coordination starts from nothing, on
// a new machine; what was spent and decided before coordination stays.
func (f *folder) newAttempt(p event.OrchestrationRestarted) {
	n := len(f.s.agents)
	f.s.m = newSession(f.s.o).m
	f.s.changedocs = changedocs{}
	f.logs, f.votes, f.stops = make([]logged, n), make([]*coord.Vote, n), make([]*coord.Stop, n)
	f.failures, f.dead, f.deferred, f.answered = make([]int, n), make([]bool, n), make([]bool, n), make([]int, n)
	r := f.r
	r.coord, r.ended, r.final, r.deadWhy, r.submitted = coord.Restored{}, nil, nil, nil, false
	r.restart = &p
}

// succeeded notes agent i's turn as accepted, of kind k.
func (f *folder) succeeded(i int, k coord.Kind) {
	f.failures[i] = 0
	f.logs[i].state, f.logs[i].kind = callAccepted, k
}

// modelCalled starts a coordination request; the presentation's are not folded.
func (f *folder) modelCalled(p event.ModelCalled) {
	i, ok := f.index[p.Agent]
	if !ok || (p.Stage != provider.StageInitial && p.Stage != provider.StageEnforcement) {
		return
	}
	l := &f.logs[i]
	if p.Fresh {
		l.system, l.msgs = p.System, nil
	}
	l.sent = len(l.msgs)
	l.msgs = append(l.msgs, p.Messages...)
	l.attempt, l.called, l.state = p.Attempt, true, callInFlight
	l.ownAtCall = f.answered[i]
	l.text.Reset()
	l.calls, l.results = nil, map[string]provider.Message{}
}

// toolResult keeps what a tool call of the last response gave back.
func (f *folder) toolResult(agent string, m provider.Message) {
	if i, ok := f.index[agent]; ok && f.logs[i].results != nil {
		f.logs[i].results[m.ToolCallID] = m
	}
}

func (f *folder) answer(seq int64, p event.AnswerSubmitted) error {
	i, ok := f.index[p.Agent]
	if !ok {
		return fmt.Errorf("engine: resume: event %d: an answer by %q, who is not one of the agents", seq, p.Agent)
	}
	f.r.coord.Answers = append(f.r.coord.Answers, coord.Answer{Agent: i, Label: p.Label, Content: p.Content, Version: p.Version,
		Confidence: p.Confidence})
	f.s.changedocs.set(p.Label, p.Changedoc)
	f.answered[i]++
	f.succeeded(i, coord.Answered)
	clear(f.stops) // a new answer wakes every agent that stopped
	// A vote cast on a bounded view counts until an answer it was shown is replaced,
	// which the answer names; the others count only on the version they were cast on.
	for _, id := range p.Invalidated {
		if k, ok := f.index[id]; ok && f.votes[k] != nil && f.votes[k].View != nil {
			f.votes[k] = nil
		}
	}
	return nil
}

func (f *folder) vote(seq int64, p event.VoteCast) error {
	n := len(f.s.agents)
	i, ok := f.index[p.Agent]
	t := coord.ParseLabel(p.TargetLabel, n)
	if !ok || t < 0 {
		return fmt.Errorf("engine: resume: event %d: a vote by %q for %q, which are not the session's agents", seq, p.Agent, p.TargetLabel)
	}
	v := &coord.Vote{Voter: i, Target: t, TargetLabel: p.TargetLabel, AnswerLabel: p.AnswerLabel, Reason: p.Reason, Version: p.Version,
		Confidence: p.Confidence}
	if p.Scoped {
		// What it was shown: the current answers of the peers its turn read, and its own.
		v.View = make([]int, n)
		for _, l := range f.logs[i].available {
			if k := coord.ParseLabel(l, n); k >= 0 {
				v.View[k] = f.answered[k]
			}
		}
	}
	f.votes[i] = v
	f.succeeded(i, coord.Voted)
	f.logs[i].label = p.TargetLabel
	return nil
}

func (f *folder) checklist(p event.ChecklistSubmitted) {
	i, ok := f.index[p.Agent]
	if !ok {
		return
	}
	if f.r.coord.Checklists == nil {
		f.r.coord.Checklists = map[int]coord.Checklist{}
	}
	f.r.coord.Checklists[i] = checklistOf(p)
}

func (f *folder) usage(p event.UsageReported) {
	f.r.cost += p.CostUSD
	f.r.usage = f.r.usage.Add(p.Usage)
	if i, ok := f.index[p.Agent]; ok && !p.Presentation {
		f.r.tokens[i] += p.Usage.InputTokens + p.Usage.OutputTokens
	}
	if i, ok := f.index[p.Agent]; ok && f.s.agents[i].Unpriced && !p.Usage.Unknown {
		f.r.unpriced = true
	}
}

// settleVotes keeps the votes that still count, and lists the dead and the deferred.
func (f *folder) settleVotes() {
	r := f.r
	for i, v := range f.votes {
		if v != nil && len(r.coord.Answers) > 0 && (v.View != nil || v.Version == len(r.coord.Answers)) && !f.dead[i] {
			r.coord.Votes = append(r.coord.Votes, *v)
		}
		if st := f.stops[i]; st != nil && st.Version == len(r.coord.Answers) && !f.dead[i] {
			r.coord.Stops = append(r.coord.Stops, *st)
		}
		if f.dead[i] {
			r.coord.Dead = append(r.coord.Dead, i)
		}
		if f.deferred[i] {
			r.coord.Deferred = append(r.coord.Deferred, i)
		}
	}
	r.coord.Failures = f.failures
}

// conversations rebuilds the live agents' conversations and notes the calls to redo.
func (f *folder) conversations() {
	s, r := f.s, f.r
	r.convs = make([]conversation, len(s.agents))
	for i := range f.logs {
		if f.dead[i] {
			continue
		}
		c := f.logs[i].conversation(i)
		if s.bounded && f.logs[i].called {
			c.view = make([]bool, len(s.agents))
			for _, l := range f.logs[i].available {
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
		if coord.IsWorkflow(tc.Name) {
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
	case coord.Stopped:
		return leadStopped
	case coord.StaleStop:
		return leadStaleStop
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
