package temporalrun

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"massgen/internal/app"
	"massgen/internal/cli"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// An upgrade with worker versioning: a session started on v1 keeps running on v1's workers
// after v2 becomes current, a session started after runs on v2, and v1's workers stop once
// none of its sessions runs, with nothing lost.
func TestVersioning_UpgradeKeepsRunningSessionsOnTheirVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server and two worker versions: about 15 s")
	}
	addr := devServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Dial(ctx, durable.Target{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := time.Now().UnixNano()
	queue, dep := fmt.Sprintf("versioning-%d", n), fmt.Sprintf("massgen-test-%d", n)
	v1 := durable.Version{Deployment: dep, BuildID: "v0.1.0-dev+1a2b3c"} // dots, as default build ids have
	v2 := durable.Version{Deployment: dep, BuildID: "v0.2.0-dev+4d5e6f"}

	// Each worker runs until its stop is called; stop waits for it and reports its error. The
	// workers' cleanups run before this one.
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	startWorker := func(v durable.Version, acts *Activities) (stop func() error) {
		wctx, wcancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		wg.Go(func() {
			errc <- Worker(wctx, c, durable.Target{Address: addr, Queue: queue, Version: v}, acts)
		})
		var once sync.Once
		var werr error
		stop = func() error {
			once.Do(func() { wcancel(); werr = <-errc })
			return werr
		}
		t.Cleanup(func() { _ = stop() })
		return stop
	}
	current := func() string {
		d, err := c.WorkerDeploymentClient().GetHandle(dep).Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		if err != nil || d.Info.RoutingConfig.CurrentVersion == nil {
			return ""
		}
		return d.Info.RoutingConfig.CurrentVersion.BuildID
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 30 s for %s", what)
			}
		}
	}

	// The first worker of a deployment makes its version current by itself. Its turns wait
	// for release, so that its session outlasts the upgrade however slow the machine.
	release := make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	stop1 := startWorker(v1, &Activities{Client: c, NewProvider: func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
		p, err := app.NewProvider(b, key, keyEnv)
		return heldUntil{p, release}, err
	}})
	waitFor("v1 to become current", func() bool { return current() == v1.BuildID })

	cfg := loadTeam(t, team)
	type session struct {
		wid string
		res app.Result
		err error
	}
	start := func(s *session, started chan<- struct{}) func() {
		var once sync.Once
		remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
			s.wid = sessionWorkflowID(o)
			o.Bus.Subscribe(event.SinkFunc(func(e event.Event) {
				if _, ok := e.Payload.(event.TurnStarted); ok {
					once.Do(func() { close(started) })
				}
			}))
			return Run(ctx, c, durable.Target{Address: addr, Queue: queue}, cfg, o)
		}
		done := make(chan struct{})
		root := t.TempDir()
		go func() {
			defer close(done)
			s.res, s.err = app.Run(ctx, cfg, app.Options{Question: "What is the capital of France?", Logging: true, LogRoot: root, Remote: remote})
		}()
		return func() { <-done }
	}

	// Session A starts on v1 and is pinned there once its first workflow task is done.
	var a, b session
	aStarted := make(chan struct{})
	waitA := start(&a, aStarted)
	defer waitA()
	defer open()
	select {
	case <-aStarted:
	case <-ctx.Done():
		t.Fatal("session A never started a turn")
	}

	// v2's workers start, and while A runs v2 becomes current with the command the README
	// gives, which then waits for v1's sessions to end.
	stop2 := startWorker(v2, &Activities{Client: c})
	var promoteOut, promoteErr bytes.Buffer
	promoted := make(chan int, 1)
	// Not on wg: the command runs under its own signal context; when the test fails before
	// it returns, it is left to the process's end.
	go func() {
		promoted <- cli.MainTemporal([]string{"worker", "promote", "--temporal", addr, "--deployment", dep, "--build-id", v2.BuildID, "--wait"},
			&promoteOut, &promoteErr, Connect)
	}()
	waitFor("v2 to become current", func() bool { return current() == v2.BuildID })
	waitFor("A to count as running on v1", func() bool {
		n, err := Pinned(ctx, c, v1)
		return err == nil && n == 1
	})

	// A v1 worker that restarts now does not take new sessions back.
	if err := adoptVersion(ctx, c, v1); err != nil {
		t.Errorf("a restarted v1 worker: %v", err)
	}
	if cur := current(); cur != v2.BuildID {
		t.Errorf("current version %q after a v1 worker restarted, want %q", cur, v2.BuildID)
	}

	// B runs on v2 while A waits on v1; then A goes on.
	bStarted := make(chan struct{})
	waitB := start(&b, bStarted)
	waitB()
	open()
	waitA()
	for name, s := range map[string]*session{"A": &a, "B": &b} {
		if s.err != nil || s.res.ExitCode != 0 || s.res.Winner != "long" {
			t.Errorf("session %s: exit %d, winner %q, err %v %v", name, s.res.ExitCode, s.res.Winner, s.err, s.res.Err)
		}
	}
	checkRanOn(t, c, "A", a.wid, v1)
	checkRanOn(t, c, "B", b.wid, v2)

	// Nothing runs on v1 any more: promote --wait says so, and its workers may stop.
	select {
	case code := <-promoted:
		if code != 0 {
			t.Errorf("promote --wait: exit %d\n%s%s", code, promoteOut.String(), promoteErr.String())
		}
	case <-ctx.Done():
		t.Fatal("promote --wait did not return after v1's session ended")
	}
	for _, want := range []string{v2.String() + " is current", "waiting for the sessions on " + v1.String(), "no session runs on " + v1.String() + " any more"} {
		if !strings.Contains(promoteOut.String(), want) {
			t.Errorf("promote said %q, want %q in it", promoteOut.String(), want)
		}
	}
	if !strings.Contains(promoteErr.String(), "1 session(s) running on "+v1.String()) {
		t.Errorf("promote reported %q while waiting, want A counted on v1", promoteErr.String())
	}
	if n, err := Pinned(ctx, c, v1); err != nil || n != 0 {
		t.Errorf("%d sessions (%v) on v1 after promote --wait returned", n, err)
	}
	if err := stop1(); err != nil {
		t.Errorf("v1 worker: %v", err)
	}
	if err := stop2(); err != nil {
		t.Errorf("v2 worker: %v", err)
	}
}

// checkRanOn checks that the session's workflow is pinned to v and that a worker of v completed
// its every workflow task and ran its every turn: it never moved to other code.
func checkRanOn(t *testing.T, c client.Client, name, wid string, v durable.Version) {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(context.Background(), wid, "")
	if err != nil {
		t.Fatal(err)
	}
	vi := d.GetWorkflowExecutionInfo().GetVersioningInfo()
	if got := vi.GetDeploymentVersion().GetBuildId(); got != v.BuildID || vi.GetBehavior() != enums.VERSIONING_BEHAVIOR_PINNED {
		t.Errorf("session %s ran as %q, %s; want %q, pinned", name, got, vi.GetBehavior(), v.BuildID)
	}
	tasks, turns := 0, 0
	for _, e := range history(t, c, wid).Events {
		if at := e.GetActivityTaskStartedEventAttributes(); at != nil {
			turns++
			if got := at.GetWorkerVersion().GetBuildId(); got != v.BuildID {
				t.Errorf("session %s: turn %d run by version %q, want %q", name, e.GetEventId(), got, v.BuildID)
			}
		}
		if wt := e.GetWorkflowTaskCompletedEventAttributes(); wt != nil {
			tasks++
			if got := wt.GetDeploymentVersion().GetBuildId(); got != v.BuildID {
				t.Errorf("session %s: workflow task %d completed by version %q, want %q", name, e.GetEventId(), got, v.BuildID)
			}
		}
	}
	if tasks < 3 || turns < 3 {
		t.Errorf("session %s: %d workflow tasks and %d turns, want the several of a session", name, tasks, turns)
	}
}

// heldUntil is a provider whose calls wait until open is closed.
type heldUntil struct {
	provider.Provider
	open <-chan struct{}
}

func (g heldUntil) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		select {
		case <-g.open:
		case <-ctx.Done():
			yield(nil, ctx.Err())
			return
		}
		for c, err := range g.Provider.Stream(ctx, req) {
			if !yield(c, err) {
				return
			}
		}
	}
}
