package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// The agents' subagents (coordination.enable_subagents) on Temporal. A session with them is
// held (app.NeedsMachine): its subagents run on the holder, each a local session there with
// the worker's keys, their log folders and workspaces in a folder of the held session's
// (<workspaces>/<run>.subagents), which goes when the session is dropped. A subagent's
// spending reaches its agent's turn as locally (the tool's result, or the agent's inbox at
// its next step), so the workflow counts it with the turn's usage; when coordination ends,
// the holder ends the background subagents and the workflow counts what they spent that no
// turn billed (FinishSubagentsActivity), as the engine's Finish does locally.
//
// Each subagent's log folder goes to the store when it ends (StoreKey(workflow, "subagents",
// id)); a worker that takes the session over brings them back (their ids stay taken), and the
// starter copies them all into <log>/subagents at the end, where a local run leaves them. The
// events and results name them there. A subagent running on a holder that dies dies with it:
// its agent's turn runs again on the new holder, and spawns again.

// FinishSubagentsActivity ends a held session's background subagents once coordination is over.
const FinishSubagentsActivity = "massgen.FinishSubagents"

// finishSubagentsTimeout bounds FinishSubagentsActivity: the subagents are cancelled, and
// end at once.
const finishSubagentsTimeout = time.Minute

// storeWait bounds the copy of one subagent's log folder to the store.
const storeWait = 2 * time.Minute

// FinishSubagentsInput is FinishSubagentsActivity's input.
type FinishSubagentsInput struct {
	WorkflowID string `json:"workflow_id"`
}

// AgentSpent is what an agent's subagents spent that no turn of the agent billed.
type AgentSpent struct {
	Agent int            `json:"agent"`
	ID    string         `json:"id"`
	Usage provider.Usage `json:"usage"`
}

// FinishSubagentsResult is what the ended subagents spent, and what the team reported.
type FinishSubagentsResult struct {
	Spent   []AgentSpent  `json:"spent,omitempty"`
	Reports []event.Event `json:"reports,omitempty"`
}

// subagentsDir is the folder of a held session's subagents beside its workspaces.
func subagentsDir(root, runID string) string { return filepath.Join(root, runID+".subagents") }

// subagents prepares where a claimed session's subagents run on this worker ("" dir when
// the session has none): the log folders of those that ended on a worker before this one
// come back from the store, and each one that ends here goes there.
func (a *Activities) subagents(ctx context.Context, in ClaimInput, cfg *config.Config, root, runID string) (app.TeamSubagents, string, error) {
	if !app.LaunchesSubagents(cfg) {
		return app.TeamSubagents{}, "", nil
	}
	if err := setAside(root, runID+".subagents"); err != nil {
		return app.TeamSubagents{}, "", err
	}
	dir := subagentsDir(root, runID)
	ts := app.TeamSubagents{WorkspaceRoot: filepath.Join(dir, "workspaces"), Spent: in.Spent}
	if in.Session.LogDir == "" {
		return ts, dir, nil // the starter keeps no log: neither do they, as locally
	}
	ts.LogRoot, ts.ShownLogRoot = filepath.Join(dir, "logs"), filepath.Join(in.Session.LogDir, "subagents")
	store, wid := a.store(), in.WorkflowID
	if _, err := store.Get(ctx, durable.StoreKey(wid, "subagents"), ts.LogRoot); err != nil {
		return app.TeamSubagents{}, "", fmt.Errorf("the logs of the session's earlier subagents: %w", err)
	}
	ts.Ended = func(id string) error {
		ctx, cancel := context.WithTimeout(context.Background(), storeWait)
		defer cancel()
		return store.Put(ctx, durable.StoreKey(wid, "subagents", id), filepath.Join(ts.LogRoot, id))
	}
	return ts, dir, nil
}

// FinishSubagents ends the background subagents of a session this worker holds and returns
// what they spent that no turn billed.
func (a *Activities) FinishSubagents(ctx context.Context, in FinishSubagentsInput) (FinishSubagentsResult, error) {
	stop := heartbeat(ctx)
	defer stop()
	h := a.heldFor(in.WorkflowID)
	if h == nil {
		return FinishSubagentsResult{}, temporal.NewNonRetryableApplicationError("this worker no longer holds the session", movedType, nil)
	}
	var r FinishSubagentsResult
	for i, u := range h.team.FinishSubagents(ctx) {
		if u.CostUSD > 0 || u.Unknown {
			r.Spent = append(r.Spent, AgentSpent{Agent: i, ID: h.team.Agents[i].ID, Usage: u})
		}
	}
	for _, p := range h.team.Reports() {
		r.Reports = append(r.Reports, event.Event{Payload: p})
	}
	return r, nil
}

// finishSubagents has the holder end the background subagents once coordination is over, and
// counts what they spent that no turn billed. A holder that is gone took them with it.
func (w *run) finishSubagents() {
	if !w.subagents || w.queue == "" || w.released {
		return
	}
	ctx, _ := workflow.NewDisconnectedContext(w.actx)
	ctx, _ = w.onHolder(workflow.WithStartToCloseTimeout(ctx, finishSubagentsTimeout), nil)
	var r FinishSubagentsResult
	if err := workflow.ExecuteActivity(ctx, FinishSubagentsActivity, FinishSubagentsInput{WorkflowID: w.wid}).Get(w.ctx, &r); err != nil {
		w.bus.Publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "warning",
			Detail: "the background subagents could not be ended on the worker holding the session (" + activityError(err) +
				"): what they spent after their agent's last turn is not counted"})
		return
	}
	for _, e := range r.Reports {
		w.bus.Publish(e.Payload)
	}
	for _, s := range r.Spent {
		if s.Agent < 0 || s.Agent >= len(w.convs) {
			continue
		}
		u := provider.Usage{CostUSD: s.Usage.CostUSD, Unknown: s.Usage.Unknown, Estimated: s.Usage.Estimated}
		w.x.Account(s.Agent, u, u.CostUSD)
		w.bus.Publish(event.UsageReported{Agent: s.ID, Usage: u, CostUSD: u.CostUSD})
	}
}

// removeIf removes the folder dir, if one is named.
func removeIf(dir string) error {
	if dir == "" {
		return nil
	}
	return os.RemoveAll(dir)
}

// spentSoFar is what a session's ops counted: the budget a worker that takes the session over
// leaves its subagents is what remains of it.
func spentSoFar(ops []engine.Op) float64 {
	var usd float64
	for _, op := range ops {
		if op.Kind == engine.OpUsage {
			usd += op.Cost
		}
	}
	return usd
}

// fetchSubagents copies the log folders of a session's subagents from the store into
// <logDir>/subagents, where a local run leaves them, and removes them from the store; with no
// winner's workspace to fetch after them, the session's entry goes too.
func fetchSubagents(store durable.Store, wid string, cfg *config.Config, out Outcome, logDir string) error {
	if !app.LaunchesSubagents(cfg) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	key := durable.StoreKey(wid, "subagents")
	if logDir != "" {
		if _, err := store.Get(ctx, key, filepath.Join(logDir, "subagents")); err != nil {
			return fmt.Errorf("the subagents' log folders could not be copied into the log folder: %w", err)
		}
	}
	if out.Workspace == "" {
		key = durable.StoreKey(wid)
	}
	if err := store.Remove(ctx, key); err != nil {
		return errors.New("the subagents' log folders stay in the store: " + err.Error())
	}
	return nil
}
