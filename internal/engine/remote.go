package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"massgen/internal/coord"
	"massgen/internal/criteria"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/taskplan"
)

// This file lets a driver other than Run (a Temporal workflow) run a session: the
// coordination (the state machine, turn scheduling, failures, the winner and the events they
// make) in one place, deterministically, and each agent turn and the final presentation
// somewhere else, on a replica rebuilt from the operations applied so far. Everything here is
// the engine's own code path; only the goroutines and channels of Run are left out.

// Conversation is an agent's conversation between turns, as it travels between processes.
type Conversation struct {
	System   string             `json:"system,omitempty"`
	Msgs     []provider.Message `json:"msgs,omitempty"`
	Sent     int                `json:"sent,omitempty"`
	Seen     int                `json:"seen,omitempty"`
	Shown    []int              `json:"shown,omitempty"`
	Labels   []string           `json:"labels,omitempty"`
	OwnShown int                `json:"own_shown,omitempty"`
	Accepted string             `json:"accepted,omitempty"`
	Lead     string             `json:"lead,omitempty"`
	Injected int                `json:"injected,omitempty"`
	Round    RoundState         `json:"round"`
	// Criteria are the checklist criteria the agent has read (nil: its system prompt's).
	Criteria []criteria.Criterion `json:"criteria,omitempty"`
	// Plan is the agent's task plan (enable_agent_task_planning; remote_taskplan.go); nil
	// when planning is off or before the agent's first turn.
	Plan *taskplan.Plan `json:"plan,omitempty"`
}

// RoundState is a turn's round timeout (see roundClock).
type RoundState struct {
	N      int           `json:"n,omitempty"`
	Start  time.Time     `json:"start,omitzero"`
	Soft   time.Time     `json:"soft,omitzero"`
	Cut    time.Time     `json:"cut,omitzero"`
	Limit  time.Duration `json:"limit,omitempty"`
	Grace  time.Duration `json:"grace,omitempty"`
	Warned bool          `json:"warned,omitempty"`
}

func (c *conversation) export() Conversation {
	r := c.round
	return Conversation{System: c.system, Msgs: c.msgs, Sent: c.sent, Seen: c.seen, Shown: c.shown, Labels: c.labels,
		OwnShown: c.ownShown, Accepted: c.accepted, Lead: c.lead, Injected: c.injected, Criteria: c.criteria,
		Round: RoundState{N: r.n, Start: r.start, Soft: r.soft, Cut: r.cut, Limit: r.limit, Grace: r.grace, Warned: r.warned}}
}

func (x Conversation) internal() conversation {
	r := x.Round
	return conversation{system: x.System, msgs: x.Msgs, sent: x.Sent, seen: x.Seen, shown: x.Shown, labels: x.Labels,
		ownShown: x.OwnShown, accepted: x.Accepted, lead: x.Lead, injected: x.Injected, criteria: x.Criteria,
		round: roundClock{n: r.N, start: r.Start, soft: r.Soft, cut: r.Cut, limit: r.Limit, grace: r.Grace, warned: r.Warned}}
}

// Op is one change applied to a session's coordination state, in the order applied. Replaying
// the ops on a new session rebuilds the same state: the state machine is deterministic.
type Op struct {
	Kind  string       `json:"kind"` // OpResolve, OpFail, OpEnd, OpUsage, OpStop, OpPrepare or OpRestart
	Agent int          `json:"agent"`
	Calls []coord.Call `json:"calls,omitempty"`
	Text  string       `json:"text,omitempty"`
	Seen  int          `json:"seen,omitempty"`
	// OpFail
	Message string `json:"message,omitempty"`
	Timeout bool   `json:"timeout,omitempty"`
	Fatal   bool   `json:"fatal,omitempty"`
	// OpEnd; OpRestart: what cut the previous answer off
	Reason string `json:"reason,omitempty"`
	// OpUsage (Agent is the one that spent it)
	Usage provider.Usage `json:"usage,omitzero"`
	Cost  float64        `json:"cost,omitempty"`
	// OpPrepare
	Prepared *Prepared `json:"prepared,omitempty"`
	// OpChecklist
	Checklist *Checklisted `json:"checklist,omitempty"`
	// OpCritique (Seen is the answer set read)
	Proposals []criteria.Proposal `json:"proposals,omitempty"`
	// OpRestart (remote_restart.go)
	Restart *event.OrchestrationRestarted `json:"restart,omitempty"`
}

// The kinds of Op.
const (
	OpResolve = "resolve"
	OpFail    = "fail"
	OpEnd     = "end"
	OpUsage   = "usage"
	OpStop    = "stop" // a person stopped the agent (Coordinator.StopAgent)
)

// Coordinator is the coordination of one session without Run's goroutines: a driver calls it
// from one goroutine (a workflow's), runs each turn elsewhere with RunTurn, and hands the
// outcome back. Its clock is Options.Now, so a deterministic driver passes its own.
type Coordinator struct {
	s       *session
	ops     []Op
	waiting []string // why each agent last waited, so that each new reason is published once
	start   time.Time
	steer   *Steering // the coordinator's own: messages wait in it for each agent's next turn
	// restarting: the last Present started a new attempt (remote_restart.go).
	restarting bool
}

// NewCoordinator returns the coordination of a session of o; o.Agents need no providers.
func NewCoordinator(o Options) *Coordinator {
	if o.Steering == nil {
		o.Steering = NewSteering() // the messages the driver's Send takes (remote_steer.go)
	}
	s := newSession(o)
	o.Steering.attach(s)
	x := &Coordinator{s: s, waiting: make([]string, len(s.agents)), steer: o.Steering}
	x.attachBootstrap()
	return x
}

// Start publishes SessionStarted and the preamble.
func (x *Coordinator) Start() {
	x.start = x.s.o.Now()
	x.s.publish(x.s.started())
	for _, p := range x.s.o.Preamble {
		x.s.publish(p)
	}
	if x.s.o.Orchestrator.SkipCoordinationRounds {
		x.End(event.EndSkipped)
		return
	}
	if !x.NeedsPrepare() {
		x.s.seedPlans(nil) // after the steps before coordination, as Run; BeginTurn hands them out
	}
}

// Ops are the changes applied so far, for RunTurn's replica.
func (x *Coordinator) Ops() []Op { return x.ops }

// Ended reports whether coordination is over.
func (x *Coordinator) Ended() bool { return x.s.m.Ended() }

// Index is the index of the agent whose id is id, -1 when none is.
func (x *Coordinator) Index(id string) int { return x.s.index(id) }

// Dead reports whether agent i is out of the session.
func (x *Coordinator) Dead(i int) bool { return x.s.m.Dead(i) }

// RetryDelay is the pause before agent i's next turn after a failed one.
func (x *Coordinator) RetryDelay(i int) time.Duration { return x.s.o.RetryDelay(x.s.m.Failures(i)) }

// Ready reports whether agent i must take a turn now; when it must wait, it publishes why
// (once per reason), as Run's agents do.
func (x *Coordinator) Ready(i int) bool {
	s := x.s
	if s.m.Ended() || s.m.Dead(i) {
		return false
	}
	if s.m.NeedsTurn(i) {
		x.waiting[i] = ""
		return true
	}
	if why := s.m.Blocked(i); why != "" && why != x.waiting[i] {
		x.waiting[i] = why
		s.publish(event.AgentWaiting{Agent: s.agents[i].ID, Reason: why})
	}
	return false
}

// BeginTurn prepares agent i's conversation for its round-th turn and publishes TurnStarted.
func (x *Coordinator) BeginTurn(i int, conv Conversation, round int) Conversation {
	c := conv.internal()
	report := x.reportWaiting(i)
	x.s.beginTurnLocked(i, &c, round)
	x.reportRead(i, report)
	// What the agent accepts in this turn is set anew; RunTurn reads it back.
	c.accepted = ""
	out := c.export()
	out.Plan = x.planForTurn(i, conv.Plan)
	return out
}

// TurnOutcome is how a turn run by RunTurn ended.
type TurnOutcome struct {
	Conversation Conversation `json:"conversation"`
	// Calls, Text and Seen are the response whose workflow call the replica accepted, for the
	// coordinator to resolve against the current state; empty when none was.
	Calls []coord.Call `json:"calls,omitempty"`
	Text  string       `json:"text,omitempty"`
	Seen  int          `json:"seen,omitempty"`
	// Err, when set, failed the turn.
	Err     string `json:"err,omitempty"`
	Timeout bool   `json:"timeout,omitempty"`
	Fatal   bool   `json:"fatal,omitempty"`
	// Checklists are the checklists the turn accepted, in order (checklist_gated).
	Checklists []Checklisted `json:"checklists,omitempty"`
	// Usage and Cost add up the turn's model calls of the agent; Side what other agents'
	// side calls (broadcast answers) spent in it.
	Usage provider.Usage `json:"usage,omitzero"`
	Cost  float64        `json:"cost,omitempty"`
	Side  []Spend        `json:"side,omitempty"`
	// Notes are what side calls answered in other agents' names (by id), for their next turn.
	Notes map[string][]string `json:"notes,omitempty"`
}

// Finish applies a turn's outcome: the accepted call is resolved against the current state
// (answers may have landed while the turn ran: a vote then is stale, as in Run), a failure
// counts against the agent's budget. It returns the agent's conversation.
func (x *Coordinator) Finish(i int, out TurnOutcome) Conversation {
	s := x.s
	x.account(i, out.Usage, out.Cost)
	for _, sp := range out.Side {
		if sp.Agent >= 0 && sp.Agent < len(s.agents) {
			x.account(sp.Agent, sp.Usage, sp.Cost)
		}
	}
	x.keepNotes(out.Notes)
	c := out.Conversation.internal()
	x.adoptChecklists(i, out.Checklists) // made before the turn's call, or its failure
	if out.Err != "" {
		c.reset()
		x.fail(i, out.Err, out.Timeout, out.Fatal)
		return withPlan(c.export(), out.Conversation.Plan) // a failed turn keeps the plan, as locally
	}
	if len(out.Calls) > 0 && !s.m.Ended() {
		x.ops = append(x.ops, Op{Kind: OpResolve, Agent: i, Calls: out.Calls, Text: out.Text, Seen: out.Seen})
		res := s.m.Resolve(i, out.Calls, out.Text, out.Seen)
		s.applyLocked(i, &c, res)
	}
	// The turn's calls count against the agent's max_tokens_per_agent here, where the
	// session's state is; the replica that ran the turn stopped it, as Run stops its turn.
	s.tokenCapLocked(i)
	if s.overBudget {
		x.End(event.EndBudget)
	}
	return withPlan(c.export(), out.Conversation.Plan)
}

func (x *Coordinator) account(i int, u provider.Usage, cost float64) {
	if u == (provider.Usage{}) && cost == 0 {
		return
	}
	x.ops = append(x.ops, Op{Kind: OpUsage, Agent: i, Usage: u, Cost: cost})
	x.s.addCost(i, u, cost)
}

// addCost adds agent i's usage and its cost to the session's totals, notes a model without a
// price that used tokens (the cost is then not all of it), and when the cost budget is spent.
func (s *session) addCost(i int, u provider.Usage, cost float64) {
	s.cost += cost
	s.usage = s.usage.Add(u)
	if !s.presenting.Load() {
		s.tokens[i] += u.InputTokens + u.OutputTokens
	}
	s.unpricedUsed = s.unpricedUsed || s.agents[i].Unpriced && !u.Unknown
	s.overBudget = s.overBudget || budgetSpent(s.o.Orchestrator.MaxCostUSD, s.cost)
}

// budgetSpent reports whether cost has reached max_cost_usd, maxUSD; 0 (or less) is no
// budget. The call that reaches it is the last one paid for.
func budgetSpent(maxUSD, cost float64) bool { return maxUSD > 0 && cost >= maxUSD }

func (x *Coordinator) fail(i int, msg string, timeout, fatal bool) {
	x.ops = append(x.ops, Op{Kind: OpFail, Agent: i, Message: msg, Timeout: timeout, Fatal: fatal})
	x.s.fail(i, remoteError(msg, fatal), timeout)
}

func remoteError(msg string, fatal bool) error {
	if fatal {
		return &provider.Error{Provider: "agent", Fatal: true, Err: errors.New(msg)}
	}
	return errors.New(msg)
}

// End ends coordination for reason (event.EndTimeout, ...), once.
func (x *Coordinator) End(reason string) {
	if x.s.m.Ended() {
		return
	}
	x.ops = append(x.ops, Op{Kind: OpEnd, Reason: reason})
	x.s.endLocked(reason)
}

// PresentFunc runs the final presentation's model calls for agent i elsewhere (PresentOn).
type PresentFunc func(ctx context.Context, i int, system, user string) (text, truncated string, err error)

// Present picks the winner, has run make the final presentation, publishes the final answer
// and SessionEnded, and returns how the session ended. With orchestration restarts the
// presenter first checks the answer (EvaluateOn); when it asks for a restart, Present
// returns the attempt's result with Restarting set and the coordinator in the next attempt,
// as Run's afterPresent goes on.
func (x *Coordinator) Present(ctx context.Context, run PresentFunc) Result {
	s := x.s
	x.restarting = false
	s.presenting.Store(true)
	s.remote.present = run
	res := s.present(ctx)
	if prev, ok := x.previous(); ok {
		res = s.keepPrevious(res, prev)
	}
	if next := s.evaluate(ctx, res); next != nil {
		x.restart(next, res)
		return res
	}
	// Before Deliver, unlike Run: a remote driver's Deliver releases the worker that holds
	// the session, whose agents' models extract the facts to remember.
	s.remember(ctx, res)
	return s.finish(x.start, s.deliver(ctx, res))
}

// remoteCalls are the calls a driver makes elsewhere (a Temporal worker), each nil when the
// session makes it itself.
type remoteCalls struct {
	// present makes the final presentation's model calls; nil means s.presentation.
	present PresentFunc
	// gather gathers the parts into the presenter's workspace, for decomposition mode.
	gather GatherFunc
	// verify makes a verifier's check with agent i's model.
	verify VerifyFunc
	// evaluate makes the post-evaluation (remote_restart.go).
	evaluate EvaluateFunc
}

// GatherFunc gathers decomposition mode's parts into presenter's workspace elsewhere
// (RunGather) and reports what it did; false when the presenter has no workspace.
type GatherFunc func(ctx context.Context, presenter int) (event.PartsIntegrated, bool)

// GatherOn has Present gather the parts with g, for a session whose workspaces are elsewhere.
func (x *Coordinator) GatherOn(g GatherFunc) { x.s.remote.gather = g }

// RunGather gathers decomposition mode's parts into presenter's workspace, for the session
// ops rebuild with o.Agents' workspaces, and reports what it copied and which files conflict
// (Files, Conflicts, Error); false when the presenter has no workspace.
func RunGather(o Options, ops []Op, presenter int) (event.PartsIntegrated, bool) {
	s := replica(o, ops)
	var ev event.PartsIntegrated
	if presenter < 0 || presenter >= len(s.agents) {
		return ev, false
	}
	ok := s.gatherParts(presenter, &ev)
	return ev, ok
}

// VerifyFunc makes a verifier's check (the user message given) with agent i's model
// elsewhere (RunVerify) and returns its reply.
type VerifyFunc func(ctx context.Context, i int, user string) (string, error)

// VerifyOn has Present make the verifiers' checks with v, for a session whose providers are
// elsewhere.
func (x *Coordinator) VerifyOn(v VerifyFunc) { x.s.remote.verify = v }

// RunVerify makes a verifier's check with agent i's model, for the session ops rebuild,
// publishing on o.Bus what Run publishes for it, and returns its reply (or why it failed)
// and what it spent.
func RunVerify(ctx context.Context, o Options, ops []Op, i int, user string) (reply string, usage provider.Usage, cost float64, err error) {
	s := replica(o, ops)
	if i < 0 || i >= len(s.agents) {
		return "", provider.Usage{}, 0, fmt.Errorf("agent %d: the session has %d agents", i, len(s.agents))
	}
	startCost, startUsage := s.cost, s.usage
	reply, err = s.verifyCall(ctx, i, user)
	s.awaitStragglers()
	return reply, subUsage(s.usage, startUsage), s.cost - startCost, err
}

// replica rebuilds a session's state from ops, publishing nothing while it does.
func replica(o Options, ops []Op) *session {
	bus := o.Bus
	o.Bus = event.NewBus(o.Now)
	s := newSession(o)
	s.replaying = true // the answers replayed were snapshotted when they were made
	for _, op := range ops {
		switch op.Kind {
		case OpResolve:
			var c conversation
			c.shown = make([]int, len(s.agents))
			s.applyLocked(op.Agent, &c, s.m.Resolve(op.Agent, op.Calls, op.Text, op.Seen))
		case OpFail:
			s.fail(op.Agent, remoteError(op.Message, op.Fatal), op.Timeout)
		case OpEnd:
			s.endLocked(op.Reason)
		case OpUsage:
			s.addCost(op.Agent, op.Usage, op.Cost)
		case OpStop:
			s.stopLocked(op.Agent)
		case OpPrepare:
			if op.Prepared != nil {
				s.adopt(*op.Prepared, false)
			}
		case OpChecklist:
			s.replayChecklist(op)
		case OpCritique, OpEvaluate, OpReportRead:
			s.replayBootstrap(op)
		case OpRestart:
			if op.Restart != nil {
				s = s.attemptAfter(op.Restart)
			}
		}
	}
	s.replaying = false
	s.o.Bus = bus
	if s.o.Bus == nil {
		s.o.Bus = event.NewBus(o.Now)
	}
	return s
}

// RunTurn runs agent i's turn, prepared by BeginTurn, against the state ops rebuild, with
// o.Agents' providers and tools, publishing on o.Bus what Run would publish, except what the
// coordinator decides when it applies the outcome (the accepted answer or vote).
func RunTurn(ctx context.Context, o Options, ops []Op, i int, conv Conversation) TurnOutcome {
	s := replica(o, ops)
	startCost, startUsage := s.cost, s.usage
	c := conv.internal()
	c.accepted = ""
	s.turnOf[i] = c.round.n // the round BeginTurn began, which the turn's usage reports
	s.takePlan(i, conv.Plan)
	s.rb = &remoteBootstrap{record: true}
	s.m.BeginRound(i) // as the coordinator's BeginTurn did: the round's checklist calls count afresh
	s.onReplica(i, &c)
	s.startBroadcasts(ctx)
	s.questionsOf(i, c.round.n)
	side := s.sideSpending(i)
	err, timeout := s.turn(ctx, i, &c)
	s.waitBroadcasts() // a question not waited for ends with the turn (broadcast_timeout bounds it)
	s.awaitStragglers()
	out := TurnOutcome{Usage: subUsage(s.usage, startUsage), Cost: s.cost - startCost, Side: side(), Notes: s.takeNotes(),
		Checklists: s.rb.checklists}
	for _, sp := range out.Side {
		out.Usage, out.Cost = subUsage(out.Usage, sp.Usage), out.Cost-sp.Cost
	}
	if err != nil {
		out.Conversation = withPlan(c.export(), s.givePlan(i))
		out.Err, out.Timeout, out.Fatal = err.Error(), timeout, provider.IsFatal(err)
		return out
	}
	if c.accepted != "" {
		out.Calls, out.Text = acceptedResponse(c.msgs, c.accepted)
		out.Seen = c.seen
	}
	out.Conversation = withPlan(c.export(), s.givePlan(i))
	return out
}

// acceptedResponse finds the assistant message holding call id: its workflow calls and text.
func acceptedResponse(msgs []provider.Message, id string) ([]coord.Call, string) {
	for k := len(msgs) - 1; k >= 0; k-- {
		m := msgs[k]
		if m.Role != provider.RoleAssistant {
			continue
		}
		var calls []coord.Call
		found := false
		for _, tc := range m.ToolCalls {
			if coord.IsWorkflow(tc.Name) {
				calls = append(calls, coord.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			}
			found = found || tc.ID == id
		}
		if found {
			return calls, m.Content
		}
	}
	return nil, ""
}

func subUsage(a, b provider.Usage) provider.Usage {
	return provider.Usage{InputTokens: a.InputTokens - b.InputTokens, CachedInputTokens: a.CachedInputTokens - b.CachedInputTokens,
		CacheWriteTokens: a.CacheWriteTokens - b.CacheWriteTokens, OutputTokens: a.OutputTokens - b.OutputTokens,
		ReasoningTokens: a.ReasoningTokens - b.ReasoningTokens, WebSearches: a.WebSearches - b.WebSearches,
		FileSearches: a.FileSearches - b.FileSearches, Estimated: a.Estimated}
}

// Decided reports whether an event is one the coordinator publishes when it applies a turn's
// outcome (or RunPrepare's), so that a driver forwarding a replica's events leaves its copy
// out.
func Decided(p event.Payload) bool {
	switch p.(type) {
	case event.AnswerSubmitted, event.VoteCast, event.VoteIgnored, event.VoteDeferred,
		// A replica's turn stops an agent over max_tokens_per_agent; Finish decides.
		event.AgentDead, event.AgentStopped,
		// Coordinator.Prepare publishes what RunPrepare decided.
		event.PlanningDecided, event.QuestionParaphrased, event.PersonasGenerated, event.SubtasksAssigned,
		// Finish adopts a turn's checklists, and publishes the criteria they added.
		event.CriteriaEmerged:
		return true
	}
	return false
}

// RunPresentation makes the final presentation's model calls for agent i, publishing on o.Bus.
func RunPresentation(ctx context.Context, o Options, ops []Op, i int, system, user string) (text, truncated string, usage provider.Usage, cost float64, err error) {
	s := replica(o, ops)
	s.presenting.Store(true) // what planning mode held back is the presenter's now
	startCost, startUsage := s.cost, s.usage
	if ws := s.agents[i].Workspace; ws != nil {
		ws.GrantFinal()
		defer ws.RevokeFinal()
	}
	text, truncated, err = s.presentation(ctx, i, presentCall{system: system,
		msgs: []provider.Message{{Role: provider.RoleUser, Content: user}}, tools: s.agents[i].Tools.Specs()})
	s.awaitStragglers()
	return text, truncated, subUsage(s.usage, startUsage), s.cost - startCost, err
}

// Account adds agent i's usage spent outside Finish (the final presentation) to the session's
// totals.
func (x *Coordinator) Account(i int, u provider.Usage, cost float64) { x.account(i, u, cost) }

// stopForTokenCap stops agent i if it has used max_tokens_per_agent, and reports whether it
// did (or is out already).
func (s *session) stopForTokenCap(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenCapLocked(i)
}

// tokenCapLocked marks agent i dead once its coordination calls have used
// max_tokens_per_agent, as an agent that fails: only it stops, its vote no longer counts, and
// the others go on to a winner. It reports whether the agent is out; s.mu must be held.
func (s *session) tokenCapLocked(i int) bool {
	capTokens := int64(s.o.Orchestrator.MaxTokensPerAgent)
	if capTokens <= 0 || s.tokens[i] < capTokens || s.m.Ended() {
		return false
	}
	if s.m.Dead(i) {
		return true
	}
	s.m.Kill(i)
	s.agentDeadLocked(s.agents[i].ID, fmt.Sprintf("used %d tokens, over orchestrator.max_tokens_per_agent (%d)", s.tokens[i], capTokens))
	s.broadcastLocked()
	s.checkEndLocked()
	return true
}
