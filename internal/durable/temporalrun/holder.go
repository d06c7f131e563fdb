package temporalrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/private"
)

// A session whose agents keep things on a machine between turns (workspaces, MCP servers,
// custom tools, background shells, a coding-agent CLI's session: app.NeedsMachine) is held by
// one worker, as Temporal's worker-specific task queues do: the worker that claims it
// (ClaimActivity, on the shared task queue) builds the team with its tools and answers with
// its own task queue, where all the session's turns go from then on. When an agent answers,
// its snapshot goes to the store that every worker and the caller reach (durable.Store).
//
// When the holder dies, its turns time out (the heartbeat while one runs, the schedule-to-
// start timeout when it was idle) and are not retried there: the workflow claims the session
// again on the shared queue, the worker that takes it restores every agent's workspace from
// its last snapshot in the store, and the lost turns run again there, counted as new attempts
// (their calls paid once and logged as retried, as live.go does). At the end the holder puts
// the winner's workspace in the store (ReleaseActivity), for the caller's log folder, and
// stops everything the team ran.

// Activity names of held sessions.
const (
	ClaimActivity   = "massgen.Claim"
	ReleaseActivity = "massgen.Release"
)

// movedType marks a turn sent to a worker that no longer holds its session.
const movedType = "moved"

// holdWait is how long a held session's turn waits for its worker to take it before the
// session is claimed again: the time a session whose worker died between turns waits.
const holdWait = 3 * time.Second

// ClaimInput is ClaimActivity's input.
type ClaimInput struct {
	Session    Session `json:"session"`
	WorkflowID string  `json:"workflow_id"`
	// Spent is what the session has spent so far (a claim after the holder was lost): what
	// is left of max_cost_usd is its subagents' budget.
	Spent float64 `json:"spent,omitempty"`
}

// ClaimResult is ClaimActivity's result: the task queue of the worker that holds the session
// now, what its tools reported while they started, and the agents whose workspaces came back
// from the store.
type ClaimResult struct {
	Queue    string        `json:"queue"`
	Preamble []event.Event `json:"preamble,omitempty"`
	Restored []string      `json:"restored,omitempty"`
}

// ReleaseInput is ReleaseActivity's input: Winner's workspace goes to the store ("" keeps
// nothing).
type ReleaseInput struct {
	WorkflowID string `json:"workflow_id"`
	Winner     string `json:"winner,omitempty"`
}

// ReleaseResult names the store key of the winner's workspace ("" when none was kept), and
// what the team reported while it stopped (the deletion of upload_files' vector stores).
type ReleaseResult struct {
	Workspace string        `json:"workspace,omitempty"`
	Reports   []event.Event `json:"reports,omitempty"`
	// Delivery says why the presenter's isolated writes (write_mode) could not be applied.
	Delivery string `json:"delivery,omitempty"`
}

// heldSession is a session this worker holds.
type heldSession struct {
	wid       string
	team      *app.Team
	asks      *permission.Broker // the gate's asks wait here for the starter's answers; nil: none are taken
	subagents string             // the folder of the agents' subagents (subagents.go), "" for none
}

// attach sends what the team's tools report to bus while agent i's turn runs; nil (a session
// this worker does not hold) attaches nothing.
func (h *heldSession) attach(i int, bus *event.Bus) func() {
	if h == nil {
		return func() {}
	}
	return h.team.Attach(h.team.Agents[i].ID, bus)
}

// keep puts agent i's snapshot in the store; a failure is reported on bus, since a worker
// that takes the session over would start the agent from an older one.
func (h *heldSession) keep(ctx context.Context, store durable.Store, i int, bus *event.Bus) {
	if h == nil {
		return
	}
	id := h.team.Agents[i].ID
	dir := h.team.SnapshotDir(id)
	if dir == "" || !isDir(dir) {
		return
	}
	if err := store.Put(ctx, durable.StoreKey(h.wid, "snapshots", id), dir); err != nil {
		bus.Publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "snapshot not stored",
			Detail: fmt.Sprintf("%s: %v (if this worker dies, the agent starts again from its previous snapshot)", id, err)})
	}
}

// answered reports whether a turn's accepted call was a new answer (its snapshot was taken).
func answered(out engine.TurnOutcome) bool {
	for _, c := range out.Calls {
		if c.Name == coord.ToolNewAnswer {
			return true
		}
	}
	return false
}

func (a *Activities) store() durable.Store {
	if a.Store != nil {
		return a.Store
	}
	return durable.FolderStore{Dir: durable.DefaultStoreDir()}
}

func (a *Activities) workspaceRoot() string {
	if a.WorkspaceRoot != "" {
		return a.WorkspaceRoot
	}
	return filepath.Join(".massgen", "workspaces")
}

func (a *Activities) heldFor(wid string) *heldSession {
	a.heldMu.Lock()
	defer a.heldMu.Unlock()
	return a.held[wid]
}

// Claim builds a session's team on this worker, its workspaces restored from the store, and
// answers with this worker's own task queue.
func (a *Activities) Claim(ctx context.Context, in ClaimInput) (ClaimResult, error) {
	stop := heartbeat(ctx)
	defer stop()
	if a.queue == "" {
		return ClaimResult{}, errors.New("this worker polls no task queue of its own")
	}
	cfg, err := a.receive(in.Session)
	if err != nil {
		return ClaimResult{}, err
	}
	a.drop(in.WorkflowID) // an earlier claim of the session here
	root := a.workspaceRoot()
	runID := durable.StoreKey(in.WorkflowID)
	if err := setAside(root, runID); err != nil {
		return ClaimResult{}, err
	}
	previous, err := a.previous(ctx, in)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("the previous turn's workspace: %w", err)
	}
	if previous != "" {
		defer os.RemoveAll(previous) // the team keeps its own copy
	}
	if in.Session.Skills {
		dir, err := a.fetch(ctx, in.WorkflowID, "skills", ".skills-")
		if err != nil {
			return ClaimResult{}, fmt.Errorf("the skills (use_skills): %w", err)
		}
		defer os.RemoveAll(dir) // the team keeps its own copy
		cfg.Orchestrator.SkillsDirectory = dir
	}
	var asks *permission.Broker
	if in.Session.Asks {
		asks = permission.NewBroker()
	}
	subs, subsDir, err := a.subagents(ctx, in, cfg, root, runID)
	if err != nil {
		return ClaimResult{}, err
	}
	team, err := app.BuildTeam(ctx, cfg, app.TeamOptions{Getenv: a.Getenv, NewProvider: a.NewProvider, WorkspaceRoot: root, RunID: runID,
		Version: a.Version, Previous: previous, Asks: asks, Subagents: subs, Check: func(ag config.Agent, from string) error {
			if err := a.Allow.Check(ag, from); err != nil {
				return &refusedError{err}
			}
			return nil
		}})
	if err != nil {
		_ = removeIf(subsDir)
		var re *refusedError
		if errors.As(err, &re) {
			return ClaimResult{}, temporal.NewNonRetryableApplicationError(err.Error(), refusedType, nil)
		}
		return ClaimResult{}, temporal.NewNonRetryableApplicationError("the session's tools on this worker: "+err.Error(), "config", nil)
	}
	restored, err := a.restore(ctx, in.WorkflowID, team)
	if err != nil {
		_ = team.Close()
		_ = removeIf(subsDir)
		return ClaimResult{}, fmt.Errorf("restore the session's workspaces: %w", err)
	}
	a.heldMu.Lock()
	if a.held == nil {
		a.held = map[string]*heldSession{}
	}
	a.held[in.WorkflowID] = &heldSession{wid: in.WorkflowID, team: team, asks: asks, subagents: subsDir}
	a.heldMu.Unlock()
	r := ClaimResult{Queue: a.queue, Restored: restored}
	for _, p := range team.Preamble {
		r.Preamble = append(r.Preamble, event.Event{Payload: p})
	}
	return r, nil
}

// previous fetches the previous turn's winner workspace from the store into a new folder ("" when
// the session has none).
func (a *Activities) previous(ctx context.Context, in ClaimInput) (string, error) {
	if !in.Session.Previous {
		return "", nil
	}
	return a.fetch(ctx, in.WorkflowID, "previous", ".previous-")
}

// fetch copies the session's store entry name into a new folder.
func (a *Activities) fetch(ctx context.Context, wid, name, pattern string) (string, error) {
	dir, err := a.tempDir(pattern)
	if err != nil {
		return "", err
	}
	ok, err := a.store().Get(ctx, durable.StoreKey(wid, name), dir)
	if err == nil && !ok {
		err = errors.New("it is not in the store (give the workers and the starter the same --temporal-store)")
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// restore seeds every agent's workspace from its last snapshot in the store.
func (a *Activities) restore(ctx context.Context, wid string, team *app.Team) ([]string, error) {
	var restored []string
	for _, ag := range team.Agents {
		if team.SnapshotDir(ag.ID) == "" {
			continue
		}
		tmp, err := a.tempDir(".restore-")
		if err != nil {
			return nil, err
		}
		ok, err := a.store().Get(ctx, durable.StoreKey(wid, "snapshots", ag.ID), tmp)
		if err == nil && ok {
			err = team.Restore(ag.ID, tmp)
			restored = append(restored, ag.ID)
		}
		_ = os.RemoveAll(tmp)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", ag.ID, err)
		}
	}
	return restored, nil
}

// Release puts the winner's workspace in the store and stops everything the session's team
// runs on this worker.
func (a *Activities) Release(ctx context.Context, in ReleaseInput) (ReleaseResult, error) {
	stop := heartbeat(ctx)
	defer stop()
	h := a.heldFor(in.WorkflowID)
	if h == nil {
		if in.Winner == "" {
			return ReleaseResult{}, nil
		}
		return ReleaseResult{}, temporal.NewNonRetryableApplicationError("this worker no longer holds the session", movedType, nil)
	}
	var r ReleaseResult
	if in.Winner != "" {
		reports, err := h.team.Deliver(ctx, in.Winner)
		if err != nil {
			r.Delivery = err.Error()
		}
		for _, p := range reports {
			r.Reports = append(r.Reports, event.Event{Payload: p})
		}
		tmp, err := a.tempDir(".final-")
		if err != nil {
			return r, err
		}
		defer os.RemoveAll(tmp)
		key := durable.StoreKey(in.WorkflowID, "final", in.Winner)
		kept, err := h.team.Finish(in.Winner, tmp)
		if err == nil && kept {
			err = a.store().Put(ctx, key, tmp)
		}
		if err != nil {
			return r, fmt.Errorf("keep the winner's workspace: %w", err)
		}
		if kept { // a winner without a workspace (MCP tools alone) leaves no empty folder in the log
			r.Workspace = key
		}
	}
	a.drop(in.WorkflowID)
	for _, p := range h.team.Reports() {
		r.Reports = append(r.Reports, event.Event{Payload: p})
	}
	return r, nil
}

// drop stops a held session's team and removes its workspaces here.
func (a *Activities) drop(wid string) {
	a.heldMu.Lock()
	h := a.held[wid]
	delete(a.held, wid)
	a.heldMu.Unlock()
	if h == nil {
		return
	}
	_ = h.team.Close()
	_ = removeIf(h.team.WorkspaceDir())
	_ = removeIf(h.subagents)
}

// dropAll stops every held session's team: the worker is stopping, and its sessions move.
func (a *Activities) dropAll() {
	a.heldMu.Lock()
	wids := make([]string, 0, len(a.held))
	for wid := range a.held {
		wids = append(wids, wid)
	}
	a.heldMu.Unlock()
	for _, wid := range wids {
		a.drop(wid)
	}
}

// sweepEvery is how often a worker looks for held sessions whose workflow has closed without
// releasing them (terminated, timed out, failed).
const sweepEvery = 30 * time.Second

// sweep drops the held sessions whose workflows have closed, until ctx is done.
func (a *Activities) sweep(ctx context.Context, c client.Client) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.heldMu.Lock()
		var wids []string
		for wid := range a.held {
			wids = append(wids, wid)
		}
		a.heldMu.Unlock()
		for _, wid := range wids {
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			d, err := c.DescribeWorkflowExecution(dctx, wid, "")
			cancel()
			if err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
				a.drop(wid)
			}
		}
	}
}

// setAside moves away a session's workspace folder that a worker before this one left on this
// machine, so that the session starts here from the store.
func setAside(root, runID string) error {
	dir := filepath.Join(root, runID)
	if _, err := os.Lstat(dir); err != nil {
		return nil
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	old := dir + ".lost-" + hex.EncodeToString(b)
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("set aside the session's old workspaces: %w", err)
	}
	_ = os.RemoveAll(old)
	return nil
}

// ownQueue names a worker's own task queue after the shared one, the host and a random part.
func ownQueue(shared string) string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r < '!' || r > '~' {
			return '_'
		}
		return r
	}, host)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s@%s-%d-%s", shared, host, os.Getpid(), hex.EncodeToString(b))
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// tempDir is a new folder under the worker's workspace root, which it creates when missing.
func (a *Activities) tempDir(pattern string) (string, error) {
	if err := private.MkdirAll(a.workspaceRoot()); err != nil {
		return "", err
	}
	return os.MkdirTemp(a.workspaceRoot(), pattern)
}
