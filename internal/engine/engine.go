// Package engine drives one coordination session: a goroutine per agent, the tool loop with
// its enforcement retries, failure budgets, timeouts, cancellation and the final presentation.
// It asks coord what is allowed and publishes everything that happens as events; it is the only
// place in massgen with goroutines and clocks.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/criteria"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

type session struct {
	o      Options
	agents []Agent
	// replaying: a replica (RunTurn) is rebuilding the state from ops; what an answer does
	// to the workspaces was done when it was made.
	replaying bool

	mu      sync.Mutex // guards everything below
	m       *coord.Machine
	changed chan struct{} // closed and replaced when an agent may have to act
	done    chan struct{} // closed when coordination ends
	reason  string
	cost    float64
	usage   provider.Usage
	// stragglers are the tool runs the engine gave up on; Run waits for them at its end.
	stragglers []straggler

	hostedSeq atomic.Int64 // numbers hosted tool calls that came without an id
	// prefixes holds a turn's request back while another agent writes its prefix to the
	// provider's cache (cachegate.go).
	prefixes prefixGate

	plan       planning    // planning mode's decision, set before coordination
	personas   []string    // persona_generator's persona per agent, set before coordination
	variants   []string    // orchestrator.dspy's paraphrase per agent ("": none), set before coordination
	presenting atomic.Bool // the final presentation has begun: nothing is held back

	// skipVoting is skip_voting, or MassGen's quick synthesize run that implies it.
	skipVoting bool
	// criteria are the checklist voting criteria (checklist.go).
	criteria []criteria.Criterion
	// overBudget is set by the call that spends max_cost_usd; coordination ends as soon as
	// that call's response has been acted on (guarded by mu).
	overBudget bool
	// tokens[i] is what agent i's coordination calls used, input plus output, against
	// max_tokens_per_agent.
	tokens []int64
	// unpricedUsed: an agent whose model has no price used tokens, so cost is not all of it.
	unpricedUsed bool
	// deadWhy is why each agent left the session, in the order they left, for the error of a
	// session every agent left (guarded by mu).
	deadWhy []string

	// convs[i] is agent i's conversation: its goroutine's during coordination, the
	// presentation's after (layout.go).
	convs []conversation
	// bounded: agents read a bounded view of their peers (peer_view).
	bounded bool
	// turnOf[i] is agent i's current coordination round, for the usage it reports; written
	// and read by the agent's goroutine only.
	turnOf []int
	// remote makes, when set, the calls a driver runs somewhere else (a Temporal worker);
	// a restarted attempt keeps them.
	remote remoteCalls
	// restored are the agents' conversations a resumed session starts from, taken by each
	// agent's goroutine at its start (nil for a new session).
	restored []conversation
	// subtasks are the agents' parts in decomposition mode, set before coordination.
	subtasks []string
	// bc is coordination.broadcast's state, nil when it is off (broadcast.go).
	bc *broadcasts
	// changedocs are the answers' decision journals (changedoc.go).
	changedocs changedocs
	// critiqued and evaluated are the answer-set versions the criteria critic and the round
	// evaluator read; criticRuns and evaluatorRuns count their runs; reports[i] is the
	// evaluator's report agent i has not read yet (bootstrap.go; guarded by mu).
	critiqued, evaluated      map[int]bool
	criticRuns, evaluatorRuns int
	criticBusy                chan struct{} // closed when the critic running now ends
	reports                   []string
	// rb is what a remote driver's coordinator and replicas exchange about checklists and
	// the orchestrator's subagents (remote_bootstrap.go); nil in Run.
	rb *remoteBootstrap
	// tp is coordination.enable_agent_task_planning's state, nil when it is off (taskplan.go).
	tp *taskPlans
	// attempt is the turn's attempt this session state runs, from 1; restart is why it began,
	// nil in the first (restart.go).
	attempt int
	restart *restartInfo
	// verdicts are the verifiers' checks made in this attempt (verify.go; guarded by mu).
	verdicts map[verdictKey]event.AnswerVerified
}

// Run runs one session to its end and returns how it ended. It publishes SessionStarted first
// and SessionEnded last; cancelling ctx interrupts it (exit 4) after the best answer so far has
// been published as the final answer.
func Run(ctx context.Context, o Options) Result {
	if o.Restore != nil {
		return resume(ctx, withDefaults(o))
	}
	s := newSession(o)
	o = s.o
	if o.Steering != nil {
		o.Steering.attach(s)
	}
	start := o.Now()
	s.publish(s.started())
	for _, p := range o.Preamble {
		s.publish(p)
	}
	if len(o.Agents) == 0 {
		return s.finish(start, Result{Status: event.StatusFailed, ExitCode: 2, Err: errors.New("no agents configured")})
	}
	s.recall(ctx)
	if o.Orchestrator.SkipCoordinationRounds {
		s.mu.Lock()
		s.endLocked(event.EndSkipped)
		s.mu.Unlock()
	} else {
		s.prepare(ctx)
		s.seedPlans(nil)
		s.mu.Lock()
		s.endIfOverBudgetLocked()
		s.mu.Unlock()
		s.coordinate(ctx)
	}
	return s.presentAndFinish(ctx, start)
}

// newSession sets up a session's state before anything is published.
func newSession(o Options) *session {
	o = withDefaults(o)
	orch := o.Orchestrator
	skip := skipsVoting(orch, len(o.Agents))
	leadCap := 0
	if orch.Fairness.Enabled {
		leadCap = orch.Fairness.LeadCapAnswers
	}
	items, critErr := Criteria(orch.Checklist)
	if critErr != nil {
		items = criteria.Default() // config validation refuses such lists; this is a library caller's
	}
	gate := checklistSettings(orch, items)
	decompose := orch.Decomposing()
	if decompose {
		// Config refuses these with decomposition; a library caller gets them off.
		skip = false
	}
	if skip || decompose {
		gate = nil
	}
	lazy := lazySettings(orch, len(o.Agents), skip)
	if decompose {
		lazy = nil
	}
	s := &session{
		o:          o,
		agents:     o.Agents,
		changed:    make(chan struct{}),
		done:       make(chan struct{}),
		skipVoting: skip,
		convs:      make([]conversation, len(o.Agents)),
		turnOf:     make([]int, len(o.Agents)),
		tokens:     make([]int64, len(o.Agents)),
		bounded:    boundedView(orch, len(o.Agents)) && !decompose,
		criteria:   items,
		bc:         newBroadcasts(o),
		critiqued:  map[int]bool{},
		evaluated:  map[int]bool{},
		verdicts:   map[verdictKey]event.AnswerVerified{},
		reports:    make([]string, len(o.Agents)),
		tp:         newTaskPlans(o),
		attempt:    1,
		m: coord.New(coord.Settings{
			Agents:                len(o.Agents),
			MaxNewAnswersPerAgent: orch.MaxNewAnswersPerAgent,
			Novelty:               orch.AnswerNovelty,
			FailureBudget:         orch.FailureBudget,
			MaxAnswerChars:        orch.MaxAnswerChars,
			CheckAnswer:           o.CheckAnswer,
			MaxNewAnswersGlobal:   orch.MaxNewAnswersGlobal,
			DeferVoting:           orch.DeferVotingUntilAllAnswered && !decompose,
			SkipVoting:            skip,
			LeadCap:               leadCap,
			// MassGen pauses an agent at the lead cap only while peers' answers reach it
			// (FairnessGate.should_pause_agent_for_fairness returns early on disable_injection).
			FairnessPause: leadCap > 0 && !orch.DisableInjection,
			Checklist:     gate,
			Lazy:          lazy,
			Decomposition: decompose,
			Voting:        voteWeighting(o),
		}),
	}
	return s
}

func withDefaults(o Options) Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetryDelay == nil {
		o.RetryDelay = func(n int) time.Duration { return time.Duration(n) * 200 * time.Millisecond }
	}
	if o.Price == nil {
		o.Price = func(string, string, provider.Usage) float64 { return 0 }
	}
	if o.Bus == nil {
		o.Bus = event.NewBus(o.Now)
	}
	if o.Turn == 0 {
		o.Turn = 1
	}
	if o.Orchestrator.FailureBudget < 1 {
		o.Orchestrator.FailureBudget = 3
	}
	if o.Orchestrator.FinalAnswerStrategy == "" {
		o.Orchestrator.FinalAnswerStrategy = config.StrategyWinnerPresent
	}
	if o.Orchestrator.VotingSensitivity == "" {
		o.Orchestrator.VotingSensitivity = "lenient"
	}
	if o.Orchestrator.AnswerNovelty == "" {
		o.Orchestrator.AnswerNovelty = "lenient"
	}
	if o.Orchestrator.MaxResponseChars <= 0 {
		o.Orchestrator.MaxResponseChars = config.DefaultMaxResponseChars
	}
	if o.Orchestrator.MaxToolCallsPerResponse <= 0 {
		o.Orchestrator.MaxToolCallsPerResponse = config.DefaultMaxToolCallsPerResponse
	}
	if o.Orchestrator.MaxAnswerChars <= 0 {
		o.Orchestrator.MaxAnswerChars = config.DefaultMaxAnswerChars
	}
	if o.Orchestrator.PeerViewSize <= 0 {
		o.Orchestrator.PeerViewSize = config.DefaultPeerViewSize
	}
	if o.ToolGrace <= 0 {
		o.ToolGrace = 2 * time.Second
	}
	if o.Timeouts.Orchestrator <= 0 {
		o.Timeouts.Orchestrator = 1800 * time.Second
	}
	if o.Timeouts.Agent <= 0 {
		o.Timeouts.Agent = 300 * time.Second
	}
	if o.Timeouts.Presentation <= 0 {
		o.Timeouts.Presentation = 600 * time.Second
	}
	if o.Timeouts.RoundGrace <= 0 {
		o.Timeouts.RoundGrace = 120 * time.Second // MassGen's round_timeout_grace_seconds default
	}
	if f := &o.Orchestrator.Fairness; f.Enabled {
		if f.LeadCapAnswers <= 0 {
			f.LeadCapAnswers = 2
		}
		if f.MaxMidstreamInjectionsPerRound <= 0 {
			f.MaxMidstreamInjectionsPerRound = 2
		}
	}
	return o
}

// skipsVoting reports whether a session has no vote round: skip_voting, or what MassGen's
// RunModeStrategyResolver.should_skip_vote_rounds_for_synthesize infers from a quick
// multi-agent synthesize run (one answer per agent, no deferred vote): every agent answers
// once and the presenter merges them, so a vote would only pick whose turn it is to merge.
func skipsVoting(o config.Orchestrator, agents int) bool {
	if o.SkipVoting {
		return true
	}
	return agents > 1 && o.FinalAnswerStrategy == config.StrategySynthesize &&
		o.MaxNewAnswersPerAgent == 1 && !o.DeferVotingUntilAllAnswered
}

func (s *session) started() event.SessionStarted {
	infos := make([]event.AgentInfo, len(s.agents))
	for i, a := range s.agents {
		infos[i] = event.AgentInfo{ID: a.ID, Label: coord.Label(i), Backend: a.Backend, Model: a.Model, BaseURL: a.BaseURL, CustomEndpoint: a.CustomEndpoint, Unpriced: a.Unpriced,
			VotingSensitivity: a.VotingSensitivity}
		if s.weighing() {
			infos[i].VoteWeight = s.m.Weight(i)
		}
	}
	o := s.o
	f := o.Orchestrator.Fairness
	fairness := &event.Fairness{Enabled: f.Enabled}
	if f.Enabled {
		fairness.LeadCapAnswers, fairness.MaxMidstreamInjectionsPerRound = f.LeadCapAnswers, f.MaxMidstreamInjectionsPerRound
	}
	var personas string
	if pg := o.Orchestrator.PersonaGenerator; pg.Enabled {
		personas = cmp.Or(pg.DiversityMode, prompt.DiversityPerspective)
	}
	var rounds *event.RoundTimeouts
	if t := o.Timeouts; t.InitialRound > 0 || t.SubsequentRound > 0 {
		rounds = &event.RoundTimeouts{InitialSeconds: t.InitialRound.Seconds(), SubsequentSeconds: t.SubsequentRound.Seconds(), GraceSeconds: t.RoundGrace.Seconds()}
	}
	return event.SessionStarted{
		Question: o.Question, Turn: o.Turn, SessionID: o.SessionID, LogDir: o.LogDir,
		Agents: infos, History: o.History,
		Settings: event.Settings{
			VotingSensitivity:     o.Orchestrator.VotingSensitivity,
			AnswerNovelty:         o.Orchestrator.AnswerNovelty,
			MaxNewAnswersPerAgent: o.Orchestrator.MaxNewAnswersPerAgent,
			FinalPresentation:     config.PresentationMode(o.Orchestrator.FinalAnswerStrategy),
			FailureBudget:         o.Orchestrator.FailureBudget,
			MaxCostUSD:            o.Orchestrator.MaxCostUSD,
			TimeoutSeconds:        o.Timeouts.Orchestrator.Seconds(),
			AgentTimeoutSeconds:   o.Timeouts.Agent.Seconds(),

			MaxResponseChars:        o.Orchestrator.MaxResponseChars,
			MaxToolCallsPerResponse: o.Orchestrator.MaxToolCallsPerResponse,
			MaxAnswerChars:          o.Orchestrator.MaxAnswerChars,

			FinalAnswerStrategy:         o.Orchestrator.FinalAnswerStrategy,
			PresenterAgent:              o.Orchestrator.PresenterAgent,
			MaxNewAnswersGlobal:         o.Orchestrator.MaxNewAnswersGlobal,
			DeferVotingUntilAllAnswered: o.Orchestrator.DeferVotingUntilAllAnswered,
			DisableInjection:            o.Orchestrator.DisableInjection,
			SkipVoting:                  s.skipVoting,
			Fairness:                    fairness,
			PersonaGenerator:            personas,
			Rounds:                      rounds,
			CoordinationMode:            decompositionWord(s.decomposing()),
			VoteWeighting:               s.weighting(),

			MaxOrchestrationRestarts:     o.Orchestrator.MaxOrchestrationRestarts,
			DeferPeerUpdatesUntilRestart: o.Orchestrator.DeferPeerUpdatesUntilRestart,
		},
	}
}

func (s *session) publish(p event.Payload) { s.o.Bus.Publish(p) }

// presentAndFinish makes the final presentation once coordination has ended, waits for the
// tool runs given up on, and returns how the session ended.
func (s *session) presentAndFinish(ctx context.Context, start time.Time) Result {
	s.presenting.Store(true)
	return s.afterPresent(ctx, start, s.present(ctx))
}

// deliver applies the presenter's isolated writes to a final answer that stands.
func (s *session) deliver(ctx context.Context, res Result) Result {
	if s.o.Deliver == nil || res.Winner == "" || (res.ExitCode != 0 && res.ExitCode != 3) {
		return res
	}
	if err := ctx.Err(); err != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("interrupted before the final presenter's changes were applied: %w", err))
		res.Status, res.ExitCode = event.StatusInterrupted, 4
		return res
	}
	if err := s.o.Deliver(ctx, res.Winner); err != nil {
		res.Err = errors.Join(res.Err, err)
		if res.ExitCode == 0 {
			res.Status, res.ExitCode = event.StatusFailed, 2
		}
	}
	return res
}

// recall adds what Options.Recall found to each agent's system message.
func (s *session) recall(ctx context.Context) { s.applyRecalled(s.recalled(ctx)) }

// recalled is what Options.Recall found for each agent ("" for none), paid for.
func (s *session) recalled(ctx context.Context) []string {
	if s.o.Recall == nil {
		return nil
	}
	return s.o.Recall(ctx, func(i int, u provider.Usage) {
		if i >= 0 && i < len(s.agents) {
			s.account(i, u, false)
		}
	})
}

// applyRecalled adds each agent's recalled memories to its system message.
func (s *session) applyRecalled(extra []string) {
	if len(extra) == 0 {
		return
	}
	s.agents = slices.Clone(s.agents) // the caller's agents stay as they were
	for i, x := range extra {
		if i < len(s.agents) && x != "" {
			s.agents[i].System = strings.TrimSpace(s.agents[i].System + "\n\n" + x)
		}
	}
}

// remember hands a session that reached a final answer to Options.Remember.
func (s *session) remember(ctx context.Context, res Result) {
	if s.o.Remember == nil || res.Winner == "" || ctx.Err() != nil {
		return
	}
	s.o.Remember(ctx, res, func(i int, u provider.Usage) {
		if i >= 0 && i < len(s.agents) {
			s.account(i, u, true)
		}
	})
}

// coordinate runs the agents until coordination ends: consensus, all agents dead, the cost
// budget spent, the session timeout, or ctx cancelled.
func (s *session) coordinate(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeouts.Orchestrator)
	defer cancel()
	s.startBroadcasts(cctx)
	var wg sync.WaitGroup
	for i := range s.agents {
		actx, stop := s.agentContext(cctx, i)
		wg.Go(func() { defer stop(); s.runAgent(actx, i) })
	}

	select {
	case <-s.done:
	case <-cctx.Done():
	}
	s.mu.Lock()
	if !s.m.Ended() {
		reason := event.EndTimeout
		if ctx.Err() != nil {
			reason = event.EndInterrupted
		}
		s.endLocked(reason)
	}
	s.mu.Unlock()
	cancel()
	wg.Wait()
	s.waitBroadcasts()
	// Interrupted too: a CLI waiting on a tool call has not reported its usage yet, and is
	// stopped at once rather than killed with the agents (its usage estimated, not lost).
	s.finishProviders(ctx)
}

// finishWait bounds how long a provider may take to end work that outlasted coordination;
// a CLI agent stops a run that does not end sooner itself.
const finishWait = 10 * time.Second

// finishProviders lets the providers that implement provider.Finisher end their runs, so
// that the usage of work still going on when coordination ended is counted. A run that had to
// be stopped is reported, with what is known of its usage.
func (s *session) finishProviders(ctx context.Context) {
	fctx, cancel := context.WithTimeout(ctx, finishWait)
	defer cancel()
	var wg sync.WaitGroup
	for i, a := range s.agents {
		f, ok := a.Provider.(provider.Finisher)
		if !ok {
			continue
		}
		wg.Go(func() {
			u, err := f.Finish(fctx)
			s.account(i, u, false)
			if err != nil {
				s.publish(event.AgentError{Agent: a.ID, Budget: s.m.FailureBudget(),
					Message: fmt.Sprintf("%s's wrap-up after coordination: %v; its usage is %s", a.ID, err, usageWord(u))})
			}
		})
	}
	wg.Wait()
}

// usageWord says how much of a usage is known.
func usageWord(u provider.Usage) string {
	switch {
	case u.Unknown:
		return "unknown"
	case u.Estimated:
		return "estimated"
	}
	return "as the provider reported it"
}

// endLocked ends coordination once; s.mu must be held.
func (s *session) endLocked(reason string) {
	if s.m.Ended() {
		return
	}
	s.m.End()
	s.reason = reason
	close(s.done)
	s.broadcastLocked()
}

// broadcastLocked wakes every agent waiting for a change; s.mu must be held.
func (s *session) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *session) finish(start time.Time, r Result) Result {
	r.Duration = s.o.Now().Sub(start)
	s.mu.Lock()
	r.Usage, r.CostUSD, r.CostUnknown = s.usage, s.cost, s.unpricedUsed
	s.mu.Unlock()
	msg := ""
	if r.Err != nil {
		msg = r.Err.Error()
	}
	s.publish(event.SessionEnded{Status: r.Status, ExitCode: r.ExitCode, Error: msg, DurationSeconds: r.Duration.Seconds()})
	return r
}

func (s *session) fail(i int, err error, timeout bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m.Ended() {
		return
	}
	var consecutive int
	var dead bool
	fatal := provider.IsFatal(err)
	if fatal {
		s.m.Kill(i)
		consecutive, dead = s.m.FailureBudget(), true
	} else {
		consecutive, dead = s.m.TurnFailed(i)
	}
	id := s.agents[i].ID
	s.publish(event.AgentError{Agent: id, Message: err.Error(), Consecutive: consecutive, Budget: s.m.FailureBudget(), Timeout: timeout, Fatal: fatal})
	if !dead {
		return
	}
	reason := fmt.Sprintf("%d failed turns in a row: %v", consecutive, err)
	switch {
	case fatal:
		// A rejected key or an unknown model: no count of turns, just what to fix.
		reason = fmt.Sprintf("retrying cannot help: %v", err)
	case consecutive == 1:
		reason = fmt.Sprintf("1 failed turn: %v", err)
	}
	s.agentDeadLocked(id, reason)
	// An agent waiting for everyone to answer, or for a slower agent to catch up, may wait
	// for this one no more.
	s.broadcastLocked()
	s.checkEndLocked()
}

// agentDeadLocked reports that agent id left the session, and why; s.mu must be held.
func (s *session) agentDeadLocked(id, reason string) {
	s.publish(event.AgentDead{Agent: id, Reason: reason})
	s.noteDeadLocked(id, reason)
}

// noteDeadLocked keeps why id left, clipped, for the session's error; s.mu must be held.
func (s *session) noteDeadLocked(id, reason string) {
	s.deadWhy = append(s.deadWhy, id+": "+clipText(reason))
}

// checkEndLocked ends coordination when every live agent holds a current vote or none is left.
func (s *session) checkEndLocked() {
	switch {
	case s.m.Live() == 0:
		s.endLocked(event.EndAllDead)
	case s.m.Converged() && s.decomposing():
		s.endLocked(event.EndAllStopped)
	case s.decomposing():
	case s.m.Converged() && s.skipVoting:
		s.endLocked(event.EndAllAnswered)
	case s.m.Converged():
		s.endLocked(event.EndConsensus)
	case (s.o.Orchestrator.EndWhenDecided || s.lazy()) && !s.skipVoting && s.decidedLocked():
		s.endLocked(event.EndDecided)
	default:
		s.releaseLocked()
	}
}
