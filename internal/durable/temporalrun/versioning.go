package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"massgen/internal/durable"
)

// workerOptions are a worker's options for t: versioned when t names a version. A versioned
// worker pins the sessions it starts running: a session's coordination replays its history
// on every workflow task, so it must keep the code that wrote that history; its turns and
// queries go to the workers of the same version too.
func workerOptions(t durable.Target) worker.Options {
	o := worker.Options{StickyScheduleToStartTimeout: stickyTimeout}
	if !t.Version.IsZero() {
		o.DeploymentOptions = worker.DeploymentOptions{
			UseVersioning:             true,
			Version:                   worker.WorkerDeploymentVersion{DeploymentName: t.Version.Deployment, BuildID: t.Version.BuildID},
			DefaultVersioningBehavior: workflow.VersioningBehaviorPinned,
		}
	}
	return o
}

// adoptWait bounds how long a new worker tries to make its version current in a deployment
// that has none: the server learns of a version from its first poll, within a second or two.
const adoptWait = 30 * time.Second

// adoptVersion makes v, whose worker polls already, the current version of its deployment
// when the deployment has none, so that the first versioned workers take new sessions without
// a promotion. It never replaces a current version: a restarted old worker must not take new
// sessions back (that is Promote's job, asked for by name).
func adoptVersion(ctx context.Context, c client.Client, v durable.Version) error {
	if v.IsZero() {
		return nil
	}
	h := c.WorkerDeploymentClient().GetHandle(v.Deployment)
	ctx, cancel := context.WithTimeout(ctx, adoptWait)
	defer cancel()
	for {
		d, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		if err == nil && d.Info.RoutingConfig.CurrentVersion != nil {
			return nil
		}
		if err == nil {
			// The conflict token keeps two new workers of different versions from both
			// becoming current: the second finds the first's.
			_, err = h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: v.BuildID, ConflictToken: d.ConflictToken})
			if err == nil {
				return nil
			}
		}
		if ctx.Err() == nil && !notYet(err) {
			return fmt.Errorf("make %s the current version of deployment %s: %s%s", v, v.Deployment, shortError(err), versioningHint(err))
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("make %s the current version of deployment %s: the server did not see this worker's version within %s: %s",
					v, v.Deployment, adoptWait, shortError(err))
			}
			return nil // the worker is stopping
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// notYet reports whether err may pass by itself: the deployment or version the server has
// not registered yet, or a change made meanwhile by another worker.
func notYet(err error) bool {
	var nf *serviceerror.NotFound
	var fp *serviceerror.FailedPrecondition
	return errors.As(err, &nf) || errors.As(err, &fp)
}

// versioningHint explains the errors of a server that cannot version workers.
func versioningHint(err error) string {
	var un *serviceerror.Unimplemented
	var pd *serviceerror.PermissionDenied
	if errors.As(err, &un) || errors.As(err, &pd) {
		return " (worker versioning needs Temporal server 1.28 or later with system.enableDeploymentVersions; or run workers without --deployment)"
	}
	return ""
}

// Promote makes v the current version of its deployment: new sessions go to its workers,
// while running ones stay on the version that started them. It returns the version that was
// current before (zero when none was, or when v already was). Workers started just before
// may not have polled yet: it waits for the server to see v, as long as adoptVersion does.
func Promote(ctx context.Context, c client.Client, v durable.Version) (durable.Version, error) {
	h := c.WorkerDeploymentClient().GetHandle(v.Deployment)
	wctx, cancel := context.WithTimeout(ctx, adoptWait)
	defer cancel()
	for {
		d, err := h.Describe(wctx, client.WorkerDeploymentDescribeOptions{})
		if err != nil && !notYet(err) {
			return durable.Version{}, fmt.Errorf("describe deployment %s: %s%s", v.Deployment, shortError(err), versioningHint(err))
		}
		if err == nil && d.Info.RoutingConfig.CurrentVersion != nil && d.Info.RoutingConfig.CurrentVersion.BuildID == v.BuildID {
			return durable.Version{}, nil
		}
		known := false
		for _, s := range d.Info.VersionSummaries {
			known = known || s.Version.BuildID == v.BuildID
		}
		if known {
			var prev durable.Version
			if cur := d.Info.RoutingConfig.CurrentVersion; cur != nil {
				prev = durable.Version{Deployment: v.Deployment, BuildID: cur.BuildID}
			}
			_, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: v.BuildID, ConflictToken: d.ConflictToken})
			if err == nil {
				return prev, nil
			}
			if !notYet(err) {
				return durable.Version{}, fmt.Errorf("make %s current: %s%s", v, shortError(err), versioningHint(err))
			}
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return durable.Version{}, ctx.Err()
			}
			return durable.Version{}, fmt.Errorf("no worker of %s has polled the server within %s: start its workers with `massgen worker --deployment %s --build-id %s`, then promote it",
				v, adoptWait, v.Deployment, v.BuildID)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Pinned counts the sessions running on v: those its workers must stay up for. Temporal's
// visibility store answers, a moment behind the sessions themselves.
func Pinned(ctx context.Context, c client.Client, v durable.Version) (int, error) {
	q := fmt.Sprintf(`TemporalWorkerDeploymentVersion = '%s' AND ExecutionStatus = 'Running'`, v)
	r, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: q})
	if err != nil {
		return 0, fmt.Errorf("count the sessions running on %s: %s", v, shortError(err))
	}
	return int(r.GetCount()), nil
}

// drainPoll is how often Drain counts the sessions left on a version.
const drainPoll = time.Second

// Drain waits until no session runs on v, which stopped being current at promoted, and calls
// report with each new count. A workflow task handed to v's workers just before the promotion
// pins its session to v only when it completes (within workflowTaskTimeout), and visibility
// counts it a moment later: a count of zero is trusted only after both, on two polls in a row.
func Drain(ctx context.Context, c client.Client, v durable.Version, promoted time.Time, report func(running int)) error {
	settled := promoted.Add(workflowTaskTimeout + drainPoll)
	last, zeros := -1, 0
	for {
		n, err := Pinned(ctx, c, v)
		if err != nil {
			return err
		}
		if n != last {
			report(n)
			last = n
		}
		if n > 0 {
			zeros = 0
		} else if zeros++; zeros >= 2 && time.Now().After(settled) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(drainPoll):
		}
	}
}
