package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/subagent"
	"massgen/internal/usage"
)

// equip gives the agents their tools and what guards them, as every session has them: the
// tool sources (newToolbox), redaction of their output, subagents, memory files, the
// permission gate, compression, and the gate for calls from code. The returned close releases
// all of it, and is never nil.
func equip(ctx context.Context, cfg *config.Config, agents []engine.Agent, runID string, o Options, clis map[string]cliBinder,
	bus *event.Bus, red *redact.Redactor) (*toolbox, func() error, error) {
	tb, err := newToolbox(ctx, cfg, agents, runID, o, clis)
	if err != nil {
		return tb, tb.close, err
	}
	for i := range agents {
		agents[i].Tools = redactTools(agents[i].Tools, red)
	}
	withSubagents(agents, o.subagents)
	tb.withMemoryFiles(agents)
	if err := guard(cfg, agents, tb, o, bus, red); err != nil {
		return tb, tb.close, err
	}
	for i, a := range cfg.Agents {
		if c := compression(cfg, a); c.Trigger > 0 {
			wsDir := ""
			if ws := tb.ws[a.ID]; ws != nil {
				wsDir = ws.Dir()
			}
			agents[i].Compact = compactor(agents[i], c, wsDir)
		}
	}
	tb.permitCode(agents)
	savePlans(cfg, agents, tb)
	return tb, tb.close, nil
}

// TeamOptions configure BuildTeam.
type TeamOptions struct {
	// Getenv reads API keys and the variables tools need; nil means os.Getenv.
	Getenv func(string) string
	// NewProvider overrides the backend factory; nil means NewProvider.
	NewProvider func(b config.Backend, key, keyEnv string) (provider.Provider, error)
	// Check, when set, is asked about each agent before its provider exists, with the
	// variable its key comes from; its error stops the build (and is wrapped, not replaced).
	Check func(a config.Agent, keyFrom string) error
	// WorkspaceRoot holds the team's workspaces, in the folder RunID (a fresh one).
	WorkspaceRoot string
	RunID         string
	Version       string
	// Previous is the previous turn's winner workspace, which the workspaces start from
	// ("" for none), as a conversation's next turn does locally.
	Previous string
	// Asks, when set, takes a person's answers to the permission gate's asks; nil follows
	// automation_default at once. AskTimeout bounds each (0: permission.AskTimeout).
	Asks       *permission.Broker
	AskTimeout time.Duration
	// Subagents is where the agents' subagents run (coordination.enable_subagents).
	Subagents TeamSubagents
}

// Team is a session's agents built on this machine with everything they hold: providers,
// tools, workspaces, the processes the tools run. It serves whoever drives the engine one
// turn at a time (a Temporal worker, engine.RunTurn): what the tools report while no turn is
// attached is kept for the next one.
type Team struct {
	// Agents are the engine's agents, providers and tools set.
	Agents []engine.Agent
	// Preamble is what the tools reported while they started (MCP servers, notes).
	Preamble []event.Payload

	tb        *toolbox
	relay     *relay
	subagents *subagent.Manager // nil without coordination.enable_subagents
	close     func() error
	once      sync.Once
	err       error
}

// BuildTeam builds cfg's agents on this machine with their tools. The caller must Close it.
func BuildTeam(ctx context.Context, cfg *config.Config, to TeamOptions) (*Team, error) {
	o := Options{Getenv: to.Getenv, NewProvider: to.NewProvider, WorkspaceRoot: to.WorkspaceRoot, Version: to.Version,
		Approvals: to.Asks, AskTimeout: to.AskTimeout}
	if to.Previous != "" {
		o.Conversation = ResumeConversation(to.Previous) // its MCP servers are the team's: Close stops them
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.NewProvider == nil {
		o.NewProvider = NewProvider
	}
	cfg, err := withBaseURLs(cfg, o.Getenv)
	if err != nil {
		return nil, err
	}
	if err := checkTools(cfg, o.Getenv); err != nil {
		return nil, err
	}
	if o.codeTokens, err = codeToolTokens(cfg); err != nil {
		return nil, err
	}
	red := redact.New(sessionSecrets(cfg, o.Getenv, slices.Collect(maps.Values(o.codeTokens)))...)
	clis := map[string]cliBinder{}
	agents := make([]engine.Agent, len(cfg.Agents))
	keys, froms := make([]string, len(cfg.Agents)), make([]string, len(cfg.Agents)) // upload_files' vector stores need them
	for i, a := range cfg.Agents {
		key, from, err := APIKey(a.Backend, o.Getenv)
		keys[i], froms[i] = key, from
		if err == nil && to.Check != nil {
			err = to.Check(a, from)
		}
		if err == nil {
			var p provider.Provider
			if p, err = o.NewProvider(a.Backend, key, from); err == nil {
				if b, ok := p.(cliBinder); ok {
					clis[a.ID] = b
				}
				if !red.Empty() {
					p = redacting(p, red)
				}
				agents[i] = engine.Agent{ID: a.ID, Backend: a.Backend.Type, Model: a.Backend.Model, System: a.SystemMessage, Params: a.Backend.Params,
					Provider: p, BaseURL: redact.URL(a.Backend.BaseURL), CustomEndpoint: CustomEndpoint(a.Backend),
					Unpriced: !usage.Known(a.Backend.Type, a.Backend.Model), VotingSensitivity: a.VotingSensitivity, HoldsSession: isCLI(a), Subtask: a.Subtask}
			}
		}
		if err != nil {
			_ = closeCLIs(clis)
			return nil, fmt.Errorf("agent %s: %w", a.ID, red.Error(err))
		}
	}
	t := &Team{relay: &relay{}}
	bus := event.NewBus(nil)
	bus.Subscribe(t.relay)
	up, err := startTeamUploads(ctx, cfg, agents, keys, froms, bus, red)
	if err != nil {
		_ = closeCLIs(clis)
		return nil, err
	}
	o.subagents = teamSubagents(cfg, o, to.Subagents, to.RunID, func(p event.Payload) { bus.Publish(p) })
	t.subagents = o.subagents
	tb, closeTools, err := equip(ctx, cfg, agents, to.RunID, o, clis, bus, red)
	t.tb, t.close = tb, func() error {
		// The subagents first: they end (and say so) while the relay still takes reports.
		return errors.Join(closeSubagents(o.subagents), closeCLIs(clis), closeTools(), o.Conversation.Close(), up.close())
	}
	if err != nil {
		_ = t.Close()
		return nil, err
	}
	t.Agents, t.Preamble = agents, append(tb.start(bus), up.statuses...)
	if tb.iso != nil {
		t.Preamble = append(t.Preamble, tb.iso.statuses()...)
	}
	return t, nil
}

// Attach sends what the team's tools report to bus while agent's turn runs there, until
// detach; reports of other agents' tools, and those of none, go there too while no turn of
// theirs is attached.
func (t *Team) Attach(agent string, bus *event.Bus) (detach func()) {
	if t.subagents != nil {
		bus.Subscribe(t.subagents) // the turn's spending counts against the budget its subagents share
	}
	return t.relay.attach(agent, bus)
}

// SnapshotDir is the folder of agent's shared snapshot ("" without a workspace).
func (t *Team) SnapshotDir(agent string) string {
	if ws := t.tb.ws[agent]; ws != nil {
		return ws.SnapshotDir()
	}
	return ""
}

// Restore puts the tree at dir (an earlier snapshot of agent's, on another machine) into
// agent's workspace and publishes it as its snapshot again.
func (t *Team) Restore(agent, dir string) error {
	ws := t.tb.ws[agent]
	if ws == nil {
		return fmt.Errorf("agent %s has no workspace", agent)
	}
	if err := ws.Seed(dir); err != nil {
		return err
	}
	return ws.Snapshot()
}

// Deliver applies the presenter's isolated writes (write_mode) to the context paths, once the
// final answer stands, and returns what it reported (a turn may still be detaching, so its
// reports do not go through the relay); without write_mode it does nothing.
func (t *Team) Deliver(ctx context.Context, presenter string) ([]event.Payload, error) {
	if t.tb.iso == nil {
		return nil, nil
	}
	var reports []event.Payload
	bus := event.NewBus(nil)
	bus.Subscribe(event.SinkFunc(func(e event.Event) { reports = append(reports, e.Payload) }))
	err := t.tb.iso.deliver(ctx, presenter, bus)
	return reports, err
}

// Finish copies the winner's workspace to dst, once nothing runs in the workspaces any
// more, and reports whether it did: a winner without a workspace copies nothing.
func (t *Team) Finish(winner, dst string) (bool, error) {
	ws := t.tb.ws[winner]
	if ws == nil {
		return false, nil
	}
	t.tb.run.StopResidents()
	t.tb.gatherMemories(ws) // the next turn starts from this copy, as locally
	return true, ws.CopyOut(dst)
}

// WorkspaceDir is the folder of the team's workspaces ("" when no agent has one).
func (t *Team) WorkspaceDir() string {
	if t.tb.run == nil {
		return ""
	}
	return t.tb.run.Dir()
}

// Close stops everything the team runs and releases its workspaces; later calls return the
// first one's error.
func (t *Team) Close() error {
	t.once.Do(func() {
		// A turn still detaching takes no more reports: what closing says waits for Reports.
		t.relay.mu.Lock()
		t.relay.buses = nil
		t.relay.mu.Unlock()
		t.err = t.close()
	})
	return t.err
}

// relay passes the team's tool reports to the bus of a turn that runs now: the agent's own
// when the report names it, else the newest attached; with none attached, they wait (up to
// maxRelayQueue) for the next.
type relay struct {
	mu     sync.Mutex
	buses  []relayed
	queued []event.Payload
}

type relayed struct {
	agent string
	bus   *event.Bus
}

const maxRelayQueue = 256

func (r *relay) attach(agent string, bus *event.Bus) func() {
	r.mu.Lock()
	r.buses = append(r.buses, relayed{agent: agent, bus: bus})
	queued := r.queued
	r.queued = nil
	r.mu.Unlock()
	for _, p := range queued {
		bus.Publish(p)
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if k := slices.Index(r.buses, relayed{agent: agent, bus: bus}); k >= 0 {
			r.buses = slices.Delete(r.buses, k, k+1)
		}
	}
}

func (r *relay) Handle(e event.Event) {
	r.mu.Lock()
	to := r.target(reportedBy(e.Payload))
	if to == nil && len(r.queued) < maxRelayQueue {
		r.queued = append(r.queued, e.Payload)
	}
	r.mu.Unlock()
	if to != nil {
		to.Publish(e.Payload)
	}
}

// target is the bus for a report about agent ("" for the team's): the newest of agent's
// turns, else the newest of all; nil with none attached. r.mu must be held.
func (r *relay) target(agent string) *event.Bus {
	if agent != "" {
		for k := len(r.buses) - 1; k >= 0; k-- {
			if r.buses[k].agent == agent {
				return r.buses[k].bus
			}
		}
	}
	if n := len(r.buses); n > 0 {
		return r.buses[n-1].bus
	}
	return nil
}

// reportedBy is the agent a tool report is about, "" for the team's.
func reportedBy(p event.Payload) string {
	switch p := p.(type) {
	case event.ToolResult:
		return p.Agent
	case event.ToolCalled:
		return p.Agent
	case event.PermissionAsked:
		return p.Agent
	case event.PermissionDecided:
		return p.Agent
	case event.SubagentStarted:
		return p.Agent
	case event.SubagentFinished:
		return p.Agent
	}
	return ""
}

// NeedsMachine reports whether cfg's agents keep anything on the machine that runs them from
// one turn to the next: a workspace, tool processes, a coding-agent CLI's session, the files
// they send with every call and the vector store made for them (upload_files), subagents
// (a background one outlives its turn, and its result waits there for the agent; the
// orchestrator's own run there too, with the agents' keys).
func NeedsMachine(cfg *config.Config) bool {
	if LaunchesSubagents(cfg) {
		return true
	}
	for _, a := range cfg.Agents {
		t := a.Backend.Tools
		if needsWorkspace(a, cfg) || len(t.MCPServers) > 0 || len(t.CustomTools) > 0 || t.CommandLine || t.CodeTools || len(a.Backend.Uploads) > 0 {
			return true
		}
	}
	return false
}
