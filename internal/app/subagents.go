package app

import (
	"context"
	"iter"
	"path/filepath"
	"slices"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/runlog"
	"massgen/internal/subagent"
	"massgen/internal/workspace"
)

// Subagents (coordination.enable_subagents): each agent gets spawn_subagents, whose
// subagents are sessions run by Run itself, one level down: the parent's agents with the
// subagent's profile, its task as the question, the parent's remaining budget, their log
// folders under the parent's turn (subagents/<id>/turn_1) and their workspaces under the
// parent's workspace root. The subagent package holds the tool and the bookkeeping; this file
// is how a subagent's session is built.

// startSubagents makes the session's subagent manager, or nil when subagents are off. It
// watches bus for the parent's spending and is closed (every subagent ended) before the log.
func startSubagents(cfg *config.Config, o Options, bus *event.Bus, logDir, runID string) *subagent.Manager {
	if !LaunchesSubagents(cfg) || o.Remote != nil || o.depth >= subagent.MaxDepth {
		return nil
	}
	logRoot := ""
	if logDir != "" {
		logRoot = filepath.Join(logDir, "subagents")
	}
	set := subagentSettings(cfg, cfg.Orchestrator.MaxCostUSD, o.depth, logRoot)
	var reserved []string
	if o.Resume != nil {
		reserved = startedSubagents(o.Resume.Events)
	}
	m := subagent.NewManager(set, subagentRunner(cfg, o, runID), func(p event.Payload) { bus.Publish(p) }, reserved...)
	bus.Subscribe(m)
	return m
}

// subagentSettings are the session's subagent rules, its budget maxCostUSD (0: none).
func subagentSettings(cfg *config.Config, maxCostUSD float64, depth int, logRoot string) subagent.Settings {
	set := subagent.FromConfig(cfg.Orchestrator.Subagents, maxCostUSD, depth, logRoot)
	if cfg.Orchestrator.RoundEvaluator.Managed {
		// MassGen reserves it for the orchestrator's launches once it manages them.
		set.Types = slices.DeleteFunc(set.Types, func(t string) bool { return t == subagent.KindRoundEvaluator })
	}
	return set
}

// LaunchesSubagents reports whether a session runs subagents: agents may spawn them, or the
// orchestrator launches its own (the round evaluator, criteria_mode: bootstrap_subagent's
// critic, verifiers with subagent: true).
func LaunchesSubagents(cfg *config.Config) bool {
	o := cfg.Orchestrator
	return o.Subagents.Enabled || o.RoundEvaluator.Enabled || o.Checklist.CriteriaMode == config.CriteriaBootstrapSubagent ||
		slices.ContainsFunc(o.Verifiers, func(v config.Verifier) bool { return v.Subagent })
}

// orchestratorSubagents is engine.Options.Subagent over m (nil when the session has none).
func orchestratorSubagents(m *subagent.Manager) func(context.Context, engine.SubagentCall) engine.SubagentReply {
	if m == nil {
		return nil
	}
	return func(ctx context.Context, c engine.SubagentCall) engine.SubagentReply {
		r := m.Launch(ctx, subagent.Call{Agent: c.Agent, Kind: c.Kind, ID: c.ID, Question: c.Question, Refine: c.Refine})
		return engine.SubagentReply{ID: r.ID, Answer: r.Answer, Error: r.Error, Spent: r.Spent}
	}
}

// subagentRunner runs one subagent as a session of its own.
func subagentRunner(parent *config.Config, o Options, runID string) subagent.Runner {
	return func(ctx context.Context, r subagent.Request) subagent.Outcome {
		co := Options{Question: r.Question, Logging: r.LogRoot != "", LogRoot: r.LogRoot, Session: r.ID, Turn: 1, Debug: o.Debug,
			Getenv: o.Getenv, Version: o.Version, WorkspaceRoot: o.WorkspaceRoot, NewProvider: o.NewProvider, Secrets: o.Secrets,
			depth: o.depth + 1, runID: runID + "_sub_" + r.ID,
			Sinks: []event.Sink{event.SinkFunc(func(e event.Event) {
				if u, ok := e.Payload.(event.UsageReported); ok {
					r.OnCost(u.CostUSD, u.Usage.Unknown)
				}
			})}}
		res, err := Run(ctx, childConfig(parent, r), co)
		if err != nil {
			return subagent.Outcome{Err: err}
		}
		out := subagent.Outcome{Answer: res.FinalAnswer, Err: res.Err, TimedOut: res.Status == event.StatusTimeout, LogDir: res.Dir,
			Usage: res.Usage, CostUSD: res.CostUSD, CostUnknown: res.CostUnknown}
		if res.Dir != "" && res.Winner != "" {
			if ws := filepath.Join(res.Dir, "final", res.Winner, "workspace"); isDir(ws) {
				out.Workspace = ws
			}
		}
		return out
	}
}

// childConfig is the config of subagent r's session: the parent's agents and settings, with
// the subagent's profile, time and budget; every context path read-only; no subagents of
// its own.
func childConfig(p *config.Config, r subagent.Request) *config.Config {
	c := *p
	c.SessionID = ""
	o := c.Orchestrator
	o.Subagents = config.Subagents{}
	// The orchestrator's own subagents are the parent's: a subagent's team runs neither.
	o.RoundEvaluator = config.RoundEvaluator{}
	o.Checklist.CriteriaMode = ""
	o.Verifiers = nil
	o.MaxCostUSD = r.MaxCostUSD
	o.ContextPaths = readOnly(p.Orchestrator.ContextPaths)
	for _, path := range r.ContextPaths {
		o.ContextPaths = append(o.ContextPaths, config.ContextPath{Path: path})
	}
	if !r.Refine {
		o.SkipVoting, o.FinalAnswerStrategy, o.PresenterAgent = true, config.StrategyWinnerReuse, ""
	}
	c.Orchestrator = o
	c.Timeouts.Orchestrator = r.Timeout
	c.Timeouts.Presentation = r.Presentation
	if p.Timeouts.Presentation > 0 {
		c.Timeouts.Presentation = min(p.Timeouts.Presentation, r.Presentation)
	}
	c.Agents = make([]config.Agent, len(p.Agents))
	for i, a := range p.Agents {
		a.SystemMessage = joinNonEmpty(a.SystemMessage, r.System)
		a.Backend.Tools.ContextPaths = readOnly(a.Backend.Tools.ContextPaths)
		c.Agents[i] = a
	}
	return &c
}

func readOnly(cps []config.ContextPath) []config.ContextPath {
	out := slices.Clone(cps)
	for i := range out {
		out[i].Write = false
	}
	return out
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// subagentTools gives spawn_subagents to every agent of a session that enables subagents;
// the agent's context_paths are what it may read itself.
func (b *toolBuild) subagentTools(_ context.Context, at *agentTools) error {
	m := b.o.subagents
	if m == nil || b.o.depth >= subagent.MaxDepth || !b.cfg.Orchestrator.Subagents.Enabled {
		return nil
	}
	var resolve subagent.Resolver
	if ws := at.ws; ws != nil {
		resolve = func(path string) (string, error) {
			t, err := ws.Resolve(path, workspace.Read)
			if err != nil {
				return "", err
			}
			return t.Abs(), nil
		}
	}
	at.set = append(at.set, m.Tool(at.agent.ID, resolve))
	return nil
}

// withSubagents lets each agent read its background subagents' results and be billed for
// them: at its steps (Inbox) and, for what is left when coordination ends, through its
// provider's Finish, which ends the background subagents still running.
func withSubagents(agents []engine.Agent, m *subagent.Manager) {
	if m == nil {
		return
	}
	for i := range agents {
		a := &agents[i]
		a.Inbox = m.Inbox(a.ID)
		a.Provider = subagentFinisher{p: a.Provider, m: m, agent: a.ID}
	}
}

type subagentFinisher struct {
	p     provider.Provider
	m     *subagent.Manager
	agent string
}

func (f subagentFinisher) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return f.p.Stream(ctx, req)
}

func (f subagentFinisher) Finish(ctx context.Context) (provider.Usage, error) {
	spent := f.m.Finish(ctx, f.agent)
	if inner, ok := f.p.(provider.Finisher); ok {
		u, err := inner.Finish(ctx)
		return u.Add(spent), err
	}
	return spent, nil
}

// startedSubagents are the ids of the subagents a log started.
func startedSubagents(evs []event.Event) []string {
	var ids []string
	for _, e := range evs {
		if s, ok := e.Payload.(event.SubagentStarted); ok {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// lostSubagents reports the subagents a killed session left running: they died with it, and
// their calls are made again (the model call that asked for them is), so none waits forever.
func lostSubagents(it *runlog.Interrupted) []event.Payload {
	if it == nil {
		return nil
	}
	running := map[string]event.SubagentStarted{}
	var order []string
	for _, e := range it.Events {
		switch p := e.Payload.(type) {
		case event.SubagentStarted:
			running[p.ID] = p
			order = append(order, p.ID)
		case event.SubagentFinished:
			delete(running, p.ID)
		}
	}
	var out []event.Payload
	for _, id := range order {
		if s, ok := running[id]; ok {
			out = append(out, event.SubagentFinished{Agent: s.Agent, ID: s.ID, Status: event.SubagentLost, LogDir: s.LogDir, Background: s.Background,
				Error: "the process running the session ended while this subagent ran; its log folder keeps what it did"})
		}
	}
	return out
}
