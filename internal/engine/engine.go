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
	"sync"
	"sync/atomic"
	"time"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/criteria"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
	"massgen/internal/tool"
	"massgen/internal/usage"
)

// Agent is one participant as the engine runs it.
type Agent struct {
	ID      string
	Backend string
	Model   string
	System  string // the agent's own system message
	// VotingSensitivity overrides Orchestrator.VotingSensitivity in this agent's prompts
	// ("" inherits it).
	VotingSensitivity string
	Params            map[string]any
	Provider          provider.Provider
	// Tools are offered besides the workflow tools (MCP, workspace files, commands); the engine
	// runs them in its tool loop.
	Tools tool.Set
	// Workspace, when set, is snapshotted on every accepted answer and given write access to
	// the context paths for the final presentation only.
	Workspace Workspace
	// Permit, when set, is asked before each of the agent's tool calls runs (the permission
	// engine); a refusal ("" lets the call run) goes back to the model as the call's result.
	// It may wait for a person, and must return when ctx ends.
	Permit func(ctx context.Context, tool, args string) (refusal string)
	// HoldsSession marks a provider that keeps its own session across calls (a coding-agent
	// CLI): its conversation continues turn after turn, whatever turn_context says, so that
	// each turn resumes that session with the update (P6) instead of starting a new one.
	HoldsSession bool

	// BaseURL is where the agent's requests go (credentials removed), CustomEndpoint that it
	// is not the backend type's default, and Unpriced marks a model without a price; the
	// engine only reports them in SessionStarted.
	BaseURL        string
	CustomEndpoint bool
	Unpriced       bool
}

// Workspace is what the engine needs of an agent's working directory.
type Workspace interface {
	// Snapshot publishes the workspace to the other agents (read-only, under the agent's label).
	Snapshot() error
	// GrantFinal and RevokeFinal open and close write access to writable context paths.
	GrantFinal()
	RevokeFinal()
	// ShareText rewrites the agent's own paths in its answer to where the others can read them.
	ShareText(answer string) string
}

// Options configure a session.
type Options struct {
	Question string
	// History holds earlier turns of an interactive session (user and assistant messages).
	History   []provider.Message
	Turn      int
	SessionID string
	LogDir    string
	Agents    []Agent
	// Orchestrator and Timeouts come from the config; zero values get MassGen's defaults. The
	// one exception is Fairness.Enabled, a bool: false is off here (config makes it true by
	// default); with it on, zero caps get MassGen's 2 and 2.
	Orchestrator config.Orchestrator
	Timeouts     config.Timeouts
	Bus          *event.Bus
	// Preamble is published right after SessionStarted (tool servers that started before).
	Preamble []event.Payload
	// Price returns the USD cost of usage on model; nil prices everything at 0.
	Price func(backend, model string, u provider.Usage) float64
	// RetryDelay is the pause after the n-th consecutive failed turn; nil means n×200 ms.
	RetryDelay func(n int) time.Duration
	// Now reads the clock; nil means time.Now.
	Now func() time.Time
	// Restore, when set, resumes the session its log recorded instead of starting one
	// (massgen resume): see resume.go.
	Restore *Restore
	// ToolGrace is how long a tool may go on after its call timed out or was cancelled before
	// the engine gives up on it and carries on; 0 means 2 s.
	ToolGrace time.Duration
	// Steering, when set, lets the caller stop agents, end coordination and message the
	// agents while the session runs (steer.go).
	Steering *Steering
	// Paraphraser is the model and cache of orchestrator.dspy (paraphrase.go); nil with
	// DSPy enabled means the first agent's model and no cache.
	Paraphraser *Paraphraser
}

// Result is how a session ended.
type Result struct {
	Status    string // event.StatusCompleted, StatusTimeout, StatusInterrupted or StatusFailed
	ExitCode  int    // 0 ok, 2 execution error, 3 timeout, 4 interrupted
	EndReason string // event.EndConsensus, ...
	// Winner is the presenting agent's id, "" when no agent produced an answer.
	Winner      string
	FinalAnswer string
	// TruncatedBy says what cut the final presentation off (event.TruncatedTokenLimit or
	// event.TruncatedResponseChars) when FinalAnswer is what it wrote until then; "" otherwise.
	TruncatedBy string
	Err         error
	Duration    time.Duration
	// Usage and CostUSD add up every model call of the session. CostUnknown is set when
	// part of the cost is unknown: a model without a price used tokens, or a run was stopped
	// before it told its usage.
	Usage       provider.Usage
	CostUSD     float64
	CostUnknown bool
}

// Cost is the session's cost as views show it.
func (r Result) Cost() usage.Amount { return usage.AmountOf(r.CostUSD, r.Usage, !r.CostUnknown) }

type session struct {
	o      Options
	agents []Agent

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
	// presentFn, when set, makes the final presentation's model calls somewhere else (a
	// Temporal activity); nil means s.presentation.
	presentFn func(ctx context.Context, i int, system, user string) (text, truncated string, err error)
	// restored are the agents' conversations a resumed session starts from, taken by each
	// agent's goroutine at its start (nil for a new session).
	restored []conversation
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
	if o.Orchestrator.SkipCoordinationRounds {
		s.mu.Lock()
		s.endLocked(event.EndSkipped)
		s.mu.Unlock()
	} else {
		if o.Orchestrator.PlanningMode {
			s.decidePlanning(ctx)
		}
		if o.Orchestrator.DSPy.Enabled {
			s.paraphraseQuestion(ctx)
		}
		if o.Orchestrator.PersonaGenerator.Enabled {
			s.generatePersonas(ctx)
		}
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
	if skip {
		gate = nil
	}
	s := &session{
		o:          o,
		agents:     o.Agents,
		changed:    make(chan struct{}),
		done:       make(chan struct{}),
		skipVoting: skip,
		convs:      make([]conversation, len(o.Agents)),
		turnOf:     make([]int, len(o.Agents)),
		bounded:    boundedView(orch, len(o.Agents)),
		criteria:   items,
		m: coord.New(coord.Settings{
			Agents:                len(o.Agents),
			MaxNewAnswersPerAgent: orch.MaxNewAnswersPerAgent,
			Novelty:               orch.AnswerNovelty,
			FailureBudget:         orch.FailureBudget,
			MaxAnswerChars:        orch.MaxAnswerChars,
			MaxNewAnswersGlobal:   orch.MaxNewAnswersGlobal,
			DeferVoting:           orch.DeferVotingUntilAllAnswered,
			SkipVoting:            skip,
			LeadCap:               leadCap,
			// MassGen pauses an agent at the lead cap only while peers' answers reach it
			// (FairnessGate.should_pause_agent_for_fairness returns early on disable_injection).
			FairnessPause: leadCap > 0 && !orch.DisableInjection,
			Checklist:     gate,
			Lazy:          lazySettings(orch, len(o.Agents), skip),
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
		},
	}
}

func (s *session) publish(p event.Payload) { s.o.Bus.Publish(p) }

// presentAndFinish makes the final presentation once coordination has ended, waits for the
// tool runs given up on, and returns how the session ended.
func (s *session) presentAndFinish(ctx context.Context, start time.Time) Result {
	s.presenting.Store(true)
	res := s.present(ctx)
	s.awaitStragglers()
	return s.finish(start, res)
}

// coordinate runs the agents until coordination ends: consensus, all agents dead, the cost
// budget spent, the session timeout, or ctx cancelled.
func (s *session) coordinate(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeouts.Orchestrator)
	defer cancel()
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
