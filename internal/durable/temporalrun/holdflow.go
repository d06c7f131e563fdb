package temporalrun

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"massgen/internal/event"
)

// The workflow's side of holder.go: it claims a session with tools for one worker, sends the
// session's turns to that worker's task queue, claims it again when that worker is lost, and
// has the holder keep the winner's workspace and stop the team at the end.

// claimTimeout bounds a claim: the team's MCP servers, custom tools and CLIs start in it.
const claimTimeout = 5 * time.Minute

// claim has a worker take the session (on the shared task queue) and sends its turns there
// from now on. The error ends the session: no worker could build its team.
func (w *run) claim() error {
	ctx := workflow.WithStartToCloseTimeout(w.actx, claimTimeout)
	var r ClaimResult
	err := workflow.ExecuteActivity(ctx, ClaimActivity, ClaimInput{Session: w.in, WorkflowID: w.wid, Spent: spentSoFar(w.x.Ops())}).Get(w.ctx, &r)
	if err != nil {
		if isRefusal(err) {
			return temporal.NewNonRetryableApplicationError(activityError(err), refusedType, nil)
		}
		return temporal.NewNonRetryableApplicationError("no worker could set up the session's tools: "+activityError(err), "claim", nil)
	}
	w.queue = r.Queue
	w.epoch++
	for _, e := range r.Preamble {
		w.bus.Publish(e.Payload)
	}
	switch {
	case len(r.Restored) > 0:
		w.bus.Publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "moved",
			Detail: "the session moved to another worker; workspaces restored from their last snapshots: " + strings.Join(r.Restored, ", ")})
	case w.epoch > 1:
		w.bus.Publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "moved",
			Detail: "the session moved to another worker; no agent had answered, so the workspaces start anew"})
	}
	return nil
}

// reclaim claims the session again, unless a claim made after epoch did already.
func (w *run) reclaim(epoch int) error {
	if w.epoch > epoch {
		return nil
	}
	return w.claim()
}

// onHolder is the context of one execution of lt's activity, which it counts: for a held
// session on its holder's task queue, and not retried there (a worker that is gone never
// takes it, and another one must claim the session first). It returns the claim it runs
// under.
func (w *run) onHolder(ctx workflow.Context, lt *liveTurn) (workflow.Context, int) {
	if lt != nil {
		lt.tries++
	}
	if !w.machine {
		return ctx, w.epoch
	}
	ctx = workflow.WithTaskQueue(ctx, w.queue)
	ctx = workflow.WithScheduleToStartTimeout(ctx, holdWait)
	ctx = workflow.WithRetryPolicy(ctx, temporal.RetryPolicy{MaximumAttempts: 1})
	return ctx, w.epoch
}

// again reports whether lt's activity, failed with err on the worker holding the session,
// runs again after a new claim: the worker died, went silent, lost the session, or failed in
// a way Temporal would have retried.
func (w *run) again(lt *liveTurn, err error) bool {
	if !w.machine || lt.tries >= maxAttempts {
		return false
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Type() == movedType || !ae.NonRetryable()
	}
	return true // a timeout
}

// deliver is the engine's Deliver for a held session: the holder applies the presenter's
// isolated writes (write_mode), keeps its workspace in the store and stops the team. A
// workspace that cannot be kept is reported and the final answer stands; writes that could
// not be applied fail the session, as locally.
func (w *run) deliver(_ context.Context, presenter string) error {
	r, err := w.releaseHeld(presenter)
	if err != nil {
		w.bus.Publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "warning",
			Detail: "the winner's workspace could not be kept: " + err.Error()})
	}
	w.workspace, w.released = r.Workspace, true
	if r.Delivery != "" {
		return errors.New(r.Delivery) // as locally: the presenter's writes did not land (exit 2)
	}
	return nil
}

// releaseHeld has the holder keep winner's workspace ("" none) and stop the team, claiming the
// session again (its workspaces from the store) when the holder was lost.
func (w *run) releaseHeld(winner string) (ReleaseResult, error) {
	if !w.machine || w.queue == "" || w.released {
		return ReleaseResult{}, nil
	}
	ctx, _ := workflow.NewDisconnectedContext(w.actx)
	var err error
	for range 3 {
		hctx, epoch := w.onHolder(ctx, nil)
		var r ReleaseResult
		if err = workflow.ExecuteActivity(hctx, ReleaseActivity, ReleaseInput{WorkflowID: w.wid, Winner: winner}).Get(w.ctx, &r); err == nil {
			for _, e := range r.Reports {
				w.bus.Publish(e.Payload)
			}
			return r, nil
		}
		if winner == "" || w.reclaim(epoch) != nil {
			break
		}
	}
	return ReleaseResult{}, errors.New(activityError(err))
}
