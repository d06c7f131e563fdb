package app

import (
	"context"
	"fmt"
	"math"
	"os"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/subagent"
)

// Subagents of a team built on a worker (BuildTeam, coordination.enable_subagents): the
// worker that holds the session runs them, each a local session there with the worker's keys,
// as Run runs a local session's. Its turns come and go, so the team's manager watches the
// spending of each attached turn (Attach), and the session's driver ends the background
// subagents when coordination ends (FinishSubagents), as the engine's Finish does locally.

// TeamSubagents is where a team's subagents run and what the session spent before the team.
type TeamSubagents struct {
	// LogRoot holds their log folders (<LogRoot>/<id>/turn_1; "" for none). The ids of the
	// folders already there are taken: a session that moved here brings its subagents' logs.
	LogRoot string
	// ShownLogRoot is where the log folders are named in events and results, when the caller
	// moves them there after the session ("" names them under LogRoot).
	ShownLogRoot string
	// WorkspaceRoot holds their workspaces; "" means the team's.
	WorkspaceRoot string
	// Spent is what the session spent before this team was built (on a worker it moved from):
	// with what the team spends, it counts against max_cost_usd.
	Spent float64
	// Ended, when set, is called (on the subagent's goroutine) when a subagent has ended, its
	// log folder complete; its error is reported as a warning.
	Ended func(id string) error
}

// teamSubagents makes the manager of a team's subagents, or nil when the session has none;
// its events go to publish.
func teamSubagents(cfg *config.Config, o Options, ts TeamSubagents, runID string, publish func(event.Payload)) *subagent.Manager {
	if !LaunchesSubagents(cfg) {
		return nil
	}
	budget := cfg.Orchestrator.MaxCostUSD
	if budget > 0 {
		// What is left of it; never 0, which would be no budget at all.
		budget = max(budget-ts.Spent, math.SmallestNonzeroFloat64)
	}
	set := subagentSettings(cfg, budget, o.depth, ts.LogRoot)
	set.ShownLogRoot = ts.ShownLogRoot
	co := o
	if ts.WorkspaceRoot != "" {
		co.WorkspaceRoot = ts.WorkspaceRoot
	}
	pub := publish
	if ts.Ended != nil {
		pub = func(p event.Payload) {
			publish(p)
			if f, ok := p.(event.SubagentFinished); ok {
				if err := ts.Ended(f.ID); err != nil {
					publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "warning",
						Detail: fmt.Sprintf("subagent %s's log folder is not kept for the log: %v", f.ID, err)})
				}
			}
		}
	}
	return subagent.NewManager(set, subagentRunner(cfg, co, runID), pub, logFolders(ts.LogRoot)...)
}

// logFolders are the names of the folders in root (none when it is "" or missing).
func logFolders(root string) []string {
	if root == "" {
		return nil
	}
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// FinishSubagents ends the agents' background subagents (coordination is over: nothing could
// read their results) and returns, by agent as in Agents, what they spent that no turn
// billed yet; nil when the team has no subagents. It waits until they have ended or ctx ends.
func (t *Team) FinishSubagents(ctx context.Context) []provider.Usage {
	if t.subagents == nil {
		return nil
	}
	out := make([]provider.Usage, len(t.Agents))
	for i, a := range t.Agents {
		out[i] = t.subagents.Finish(ctx, a.ID)
	}
	return out
}

// LaunchSubagent runs one of the orchestrator's own subagents (the criteria critic, the round
// evaluator, a verifier) on this team's manager, as Run's engine launches them, and waits for
// it; a team without a manager answers with why it cannot.
func (t *Team) LaunchSubagent(ctx context.Context, c engine.SubagentCall) engine.SubagentReply {
	if f := orchestratorSubagents(t.subagents); f != nil {
		return f(ctx, c)
	}
	return engine.SubagentReply{Error: "the team on this worker runs no subagents"}
}

func closeSubagents(m *subagent.Manager) error {
	if m == nil {
		return nil
	}
	return m.Close()
}
