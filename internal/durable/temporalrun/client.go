package temporalrun

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
)

// dialTimeout bounds how long a wrong address takes to say so.
const dialTimeout = 5 * time.Second

// Dial connects to the Temporal server of t, failing within a few seconds with an error that
// says what to check.
func Dial(ctx context.Context, t durable.Target) (client.Client, error) {
	if _, _, err := net.SplitHostPort(t.Address); err != nil || t.Address == "" {
		return nil, fmt.Errorf("--temporal %q: give the Temporal server as HOST:PORT, e.g. 127.0.0.1:7233", t.Address)
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, client.Options{
		HostPort:  t.Address,
		Namespace: t.NamespaceOrDefault(),
		Logger:    quietLogger(),
	})
	if err != nil {
		return nil, fmt.Errorf("cannot reach the Temporal server at %s (namespace %s): %s (start one with `temporal server start-dev`, or check --temporal)",
			t.Address, t.NamespaceOrDefault(), shortError(err))
	}
	// Dial connects lazily for some failures; a namespace that does not exist shows here.
	if _, err := c.WorkflowService().GetSystemInfo(dctx, nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot reach the Temporal server at %s: %s (check --temporal)", t.Address, shortError(err))
	}
	return c, nil
}

func shortError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "desc = "); i >= 0 {
		msg = msg[i+len("desc = "):]
	}
	// gRPC's dial errors come quoted, with its own prefix before the reason.
	msg = strings.Trim(msg, `"`)
	if i := strings.LastIndex(msg, "Error while dialing: "); i >= 0 {
		msg = msg[i+len("Error while dialing: "):]
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "context deadline exceeded") {
		return fmt.Sprintf("no answer within %s", dialTimeout)
	}
	return msg
}

// quietLogger keeps the SDK's own logging (every poll, every retry) off the user's terminal:
// what matters reaches the user as errors and events.
func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// stickyTimeout is how long a session's next workflow task waits for the worker that ran its
// last one (which has it cached) before any worker takes it: the time a killed worker holds
// up a session between turns. Temporal's default is 5 s; a task that moves costs a replay
// of the session's history, a few milliseconds.
const stickyTimeout = 2 * time.Second

// Worker runs sessions' workflows and activities from t's task queue until ctx is done, as
// version t.Version when set (see workerOptions).
//
// It also polls a task queue of its own (ownQueue), where the turns of the sessions it holds
// go (holder.go); when it stops, it stops everything those sessions ran here, and they move.
func Worker(ctx context.Context, c client.Client, t durable.Target, acts *Activities) error {
	w := worker.New(c, t.QueueOrDefault(), workerOptions(t))
	if acts.Client == nil {
		acts.Client = c // turns stream their events to their workflows through it
	}
	if acts.Store == nil {
		acts.Store = t.StoreOrDefault()
	}
	acts.queue = ownQueue(t.QueueOrDefault())
	own := worker.New(c, acts.queue, workerOptions(t)) // the same version: a pinned session's turns reach it
	Register(w, acts)
	registerHeld(own, acts)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start the worker on task queue %s: %w", t.QueueOrDefault(), err)
	}
	if err := own.Start(); err != nil {
		w.Stop()
		return fmt.Errorf("start the worker on its own task queue %s: %w", acts.queue, err)
	}
	if err := adoptVersion(ctx, c, t.Version); err != nil {
		own.Stop()
		w.Stop()
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	var sweeping sync.WaitGroup
	sweeping.Go(func() { acts.sweep(sctx, c) })
	<-ctx.Done()
	cancel()
	sweeping.Wait()
	own.Stop()
	w.Stop()
	acts.dropAll()
	return nil
}

// Register registers the session workflow, and acts when not nil, under their names.
func Register(w worker.Registry, acts *Activities) {
	RegisterWorkflow(w)
	if acts != nil {
		w.RegisterActivityWithOptions(acts.Turn, activity.RegisterOptions{Name: TurnActivity})
		w.RegisterActivityWithOptions(acts.Present, activity.RegisterOptions{Name: PresentActivity})
		w.RegisterActivityWithOptions(acts.Claim, activity.RegisterOptions{Name: ClaimActivity})
	}
}

// registerHeld registers, on a worker's own task queue, the activities of the sessions it
// holds.
func registerHeld(w worker.Registry, acts *Activities) {
	w.RegisterActivityWithOptions(acts.Turn, activity.RegisterOptions{Name: TurnActivity})
	w.RegisterActivityWithOptions(acts.Present, activity.RegisterOptions{Name: PresentActivity})
	w.RegisterActivityWithOptions(acts.Release, activity.RegisterOptions{Name: ReleaseActivity})
	w.RegisterActivityWithOptions(acts.FinishSubagents, activity.RegisterOptions{Name: FinishSubagentsActivity})
}

// RegisterWorkflow registers the session workflow under its name (on a worker or a replayer).
func RegisterWorkflow(w interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}) {
	w.RegisterWorkflowWithOptions(SessionWorkflow, workflow.RegisterOptions{Name: WorkflowName})
}

// Run runs a session on Temporal and publishes its events on o.Bus as they happen, as
// engine.Run would; cancelling ctx cancels the workflow, which ends the session as
// interrupted. The session's workflow ID is its log folder, so two starters never share one.
func Run(ctx context.Context, c client.Client, t durable.Target, cfg *config.Config, o engine.Options) engine.Result {
	fail := func(err error) engine.Result {
		o.Bus.Publish(event.SessionEnded{Status: event.StatusFailed, ExitCode: 2, Error: err.Error()})
		return engine.Result{Status: event.StatusFailed, ExitCode: 2, Err: err}
	}
	doc, err := durable.Encode(cfg)
	if err == nil {
		err = checkPlanSeed(o.PlanSeed)
	}
	if err != nil {
		return fail(err)
	}
	in := Session{Config: doc, Question: o.Question, History: o.History, Turn: o.Turn, SessionID: o.SessionID, LogDir: o.LogDir,
		Heartbeat: t.Heartbeat, Live: t.Live, HistoryLimit: t.HistoryLimit, Asks: o.Asks != nil, Personas: o.Personas, PersonasTurn: o.PersonasTurn,
		PlanSeed: o.PlanSeed}
	wid := sessionWorkflowID(o)
	// Scoped as a local run of the same config is: the team by its config file, here.
	in.Memory = app.MemoryScopeOf(cfg, cmp.Or(o.SessionID, wid))
	store := t.StoreOrDefault()
	if o.Previous != "" && app.NeedsMachine(cfg) {
		// The workers start this turn's workspaces from the previous winner's, as locally.
		if err := store.Put(ctx, durable.StoreKey(wid, "previous"), o.Previous); err != nil {
			return fail(fmt.Errorf("give the workers the previous turn's workspace: %w", err))
		}
		in.Previous = true
	}
	if cfg.Orchestrator.UseSkills {
		// The skills are files on this machine: the workers read the starter's.
		if err := store.Put(ctx, durable.StoreKey(wid, "skills"), app.SkillsDir(cfg)); err != nil {
			return fail(fmt.Errorf("give the workers the skills (use_skills): %w", err))
		}
		in.Skills = true
	}
	defer func() {
		for _, k := range []string{"previous", "skills"} {
			_ = store.Remove(context.WithoutCancel(ctx), durable.StoreKey(wid, k))
		}
	}()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: t.QueueOrDefault(),
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, WorkflowTaskTimeout: workflowTaskTimeout}, WorkflowName, in)
	if err != nil {
		return fail(fmt.Errorf("start the session on Temporal: %s", shortError(err)))
	}
	if o.Steering != nil {
		defer o.Steering.Forward(remoteSteering{c: c, wid: run.GetID()})()
	}
	if o.Asks != nil {
		defer relayAsks(ctx, o.Asks, o.Bus, remoteSteering{c: c, wid: run.GetID()})()
	}
	tl := &tailer{c: c, wid: run.GetID(), rid: run.GetRunID(), bus: o.Bus}
	tailErr := tl.tail(ctx)
	if ctx.Err() != nil {
		// Cancel the workflow (its current run): it ends coordination as interrupted and
		// presents what it has; the events that follow are still read, without ctx.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.CancelWorkflow(cctx, run.GetID(), "")
		tailErr = tl.tail(cctx)
	}
	var out Outcome
	gctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run.Get(gctx, &out); err != nil {
		return fail(fmt.Errorf("the session on Temporal (workflow %s) failed: %w", run.GetID(), errors.Join(err, tailErr)))
	}
	if tailErr != nil {
		// The session ended, but its log and views lack events: not a run to report as done.
		return fail(fmt.Errorf("the session on Temporal (workflow %s) ended, but its events could not all be read: %w", run.GetID(), tailErr))
	}
	for _, fetch := range []func() error{
		func() error { return fetchSubagents(store, run.GetID(), cfg, out, o.LogDir) }, // before the workspace's, which empties the store
		func() error { return fetchWorkspace(store, run.GetID(), out, o.LogDir) },
	} {
		if err := fetch(); err != nil {
			out.Err = strings.TrimPrefix(out.Err+"; "+err.Error(), "; ")
		}
	}
	res := engine.Result{Status: out.Status, ExitCode: out.ExitCode, EndReason: out.EndReason, Winner: out.Winner,
		FinalAnswer: out.FinalAnswer, TruncatedBy: out.TruncatedBy, Duration: time.Duration(out.Seconds * float64(time.Second)),
		Usage: out.Usage, CostUSD: out.CostUSD, CostUnknown: out.CostUnknown}
	if out.Err != "" {
		res.Err = errors.New(out.Err)
	}
	return res
}

// workflowTaskTimeout is how long the server waits for a worker to finish a workflow task
// (the coordination's few milliseconds between turns) before handing it to another: the
// time a killed worker holds up its sessions' coordination. Temporal's default is 10 s.
const workflowTaskTimeout = 5 * time.Second

// sessionWorkflowID names a session's workflow after its log folder (unique under its log
// root), or the time and a random part without logs.
func sessionWorkflowID(o engine.Options) string {
	if o.SessionID != "" {
		return fmt.Sprintf("massgen-%s-turn-%d", o.SessionID, max(o.Turn, 1))
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("massgen-run_%s-%s", time.Now().UTC().Format("20060102_150405"), hex.EncodeToString(b))
}

// pollEvery is how often the starter asks the workflow for new events.
const pollEvery = 200 * time.Millisecond

// queryGrace is how long the events query may keep failing on a closed workflow before the
// starter gives up on the rest of its events. A query is answered by a worker replaying the
// workflow; when the worker that last ran it has died, the server moves the query to another
// one only after a few seconds.
const queryGrace = 30 * time.Second

// tailer reads a session's events from its workflow, run after run, and publishes them.
type tailer struct {
	c        client.Client
	wid, rid string // the run read now
	from     int    // the events query's index of the next event
	bus      *event.Bus
}

// tail publishes the workflow's events on bus until SessionEnded, the workflow closes or ctx
// is done: previews as previews, the logged copies of previewed events as such.
func (t *tailer) tail(ctx context.Context) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var failing time.Time // the query has failed since
	wasClosed := false    // the run was closed before the last query
	for {
		v, err := t.c.QueryWorkflow(ctx, t.wid, t.rid, QueryEvents, t.from)
		if err == nil {
			failing = time.Time{}
			var p Page
			if err := v.Get(&p); err != nil {
				return fmt.Errorf("read the session's events: %w", err)
			}
			for _, e := range p.Events {
				switch {
				case e.Preview:
					t.bus.PublishPreview(e.Payload)
				case e.Previewed:
					t.bus.PublishPreviewed(e.Payload)
				default:
					t.bus.Publish(e.Payload)
				}
			}
			t.from += len(p.Events)
			switch {
			case p.Ended:
				return nil
			case p.Continued:
				if t.rid, err = nextRun(ctx, t.c, t.wid, t.rid); err != nil {
					return err
				}
				continue
			case len(p.Events) == maxPageEvents:
				continue // more are waiting
			case len(p.Events) == 0 && wasClosed:
				return errors.New("the workflow closed before the session ended")
			case len(p.Events) == 0 && closed(ctx, t.c, t.wid, t.rid):
				// The answer may predate the workflow's last task: ask the closed workflow
				// once more before deciding that its events stop short.
				wasClosed = true
				continue
			}
		} else {
			if failing.IsZero() {
				failing = time.Now()
			}
			if time.Since(failing) > queryGrace && closed(ctx, t.c, t.wid, t.rid) {
				return fmt.Errorf("read the session's events: %s", shortError(err))
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// nextRun is the run that continued run rid as new.
func nextRun(ctx context.Context, c client.Client, wid, rid string) (string, error) {
	it := c.GetWorkflowHistory(ctx, wid, rid, false, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return "", fmt.Errorf("find the session's next run: %s", shortError(err))
		}
		if a := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
			return a.GetNewExecutionRunId(), nil
		}
	}
	return "", errors.New("the session's run ended without naming the run that continues it")
}

// closed reports whether the run has closed without the events saying so (it failed).
func closed(ctx context.Context, c client.Client, wid, rid string) bool {
	d, err := c.DescribeWorkflowExecution(ctx, wid, rid)
	if err != nil {
		return false
	}
	switch d.GetWorkflowExecutionInfo().GetStatus() {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING, enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return false
	}
	return true
}

// fetchWorkspace copies the winner's workspace of a session with tools from the store into
// the log folder (final/<winner>/workspace, as a local run leaves it), and removes the
// session from the store. Without a log folder the workspace stays in the store.
func fetchWorkspace(store durable.Store, wid string, out Outcome, logDir string) error {
	if out.Workspace == "" || logDir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ok, err := store.Get(ctx, out.Workspace, filepath.Join(logDir, "final", out.Winner, "workspace"))
	if err == nil && !ok {
		err = errors.New("it is not in the store the workers share with this process (give both the same --temporal-store)")
	}
	if err != nil {
		return fmt.Errorf("the winner's workspace could not be copied into the log folder: %w", err)
	}
	return store.Remove(ctx, durable.StoreKey(wid))
}
