package temporalrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

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

// Worker runs sessions' workflows and activities from t's task queue until ctx is done.
func Worker(ctx context.Context, c client.Client, t durable.Target, acts *Activities) error {
	w := worker.New(c, t.QueueOrDefault(), worker.Options{})
	Register(w, acts)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start the worker on task queue %s: %w", t.QueueOrDefault(), err)
	}
	<-ctx.Done()
	w.Stop()
	return nil
}

// Register registers the session workflow, and acts when not nil, under their names.
func Register(w worker.Registry, acts *Activities) {
	RegisterWorkflow(w)
	if acts != nil {
		w.RegisterActivityWithOptions(acts.Turn, activity.RegisterOptions{Name: TurnActivity})
		w.RegisterActivityWithOptions(acts.Present, activity.RegisterOptions{Name: PresentActivity})
	}
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
	if err != nil {
		return fail(err)
	}
	in := Session{Config: doc, Question: o.Question, History: o.History, Turn: o.Turn, SessionID: o.SessionID, LogDir: o.LogDir,
		Heartbeat: t.Heartbeat}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: sessionWorkflowID(o), TaskQueue: t.QueueOrDefault(),
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE}, WorkflowName, in)
	if err != nil {
		return fail(fmt.Errorf("start the session on Temporal: %s", shortError(err)))
	}
	tailErr := tail(ctx, c, run, o.Bus)
	if ctx.Err() != nil {
		// Cancel the workflow: it ends coordination as interrupted and presents what it has;
		// the events that follow are still read, without ctx.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.CancelWorkflow(cctx, run.GetID(), run.GetRunID())
		tailErr = tail(cctx, c, run, o.Bus)
	}
	var out Outcome
	gctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run.Get(gctx, &out); err != nil {
		return fail(fmt.Errorf("the session on Temporal (workflow %s) failed: %w", run.GetID(), errors.Join(err, tailErr)))
	}
	res := engine.Result{Status: out.Status, ExitCode: out.ExitCode, EndReason: out.EndReason, Winner: out.Winner,
		FinalAnswer: out.FinalAnswer, TruncatedBy: out.TruncatedBy, Duration: time.Duration(out.Seconds * float64(time.Second)),
		Usage: out.Usage, CostUSD: out.CostUSD, CostUnknown: out.CostUnknown}
	if out.Err != "" {
		res.Err = errors.New(out.Err)
	}
	return res
}

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

// tail publishes the workflow's events on bus until SessionEnded, the workflow closes or ctx
// is done.
func tail(ctx context.Context, c client.Client, run client.WorkflowRun, bus *event.Bus) error {
	from := 0
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), QueryEvents, from)
		if err == nil {
			var p Page
			if err := v.Get(&p); err != nil {
				return fmt.Errorf("read the session's events: %w", err)
			}
			for _, e := range p.Events {
				bus.Publish(e.Payload)
			}
			from += len(p.Events)
			if p.Ended {
				return nil
			}
			if len(p.Events) == maxPageEvents {
				continue // more are waiting
			}
			if len(p.Events) == 0 && closed(ctx, c, run) {
				return errors.New("the workflow closed before the session ended")
			}
		} else if closed(ctx, c, run) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// closed reports whether the workflow has closed without the events saying so (it failed).
func closed(ctx context.Context, c client.Client, run client.WorkflowRun) bool {
	d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	if err != nil {
		return false
	}
	return d.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING
}
