package temporalrun

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
)

// The load benchmark: many short sessions at once, locally and through Temporal with worker
// processes, one of which is killed with SIGKILL a third of the way through. TestLoad runs a
// small size in CI; BenchmarkLoad runs the full size (README, "Temporal").

var (
	loadSessions = flag.Int("load.sessions", 1000, "BenchmarkLoad: sessions")
	loadWorkers  = flag.Int("load.workers", 2, "BenchmarkLoad: worker processes (one is killed)")
	loadInflight = flag.Int("load.inflight", 32, "BenchmarkLoad: sessions running at once")
)

// quickTeam answers at once: the load measures the sessions' overhead, not the models'.
const quickTeam = `
agents:
  - id: short
    backend: {type: scripted, model: s1, answers: ["Paris."], vote: longest}
  - id: medium
    backend: {type: scripted, model: s2, answers: ["The capital is Paris."], vote: longest}
  - id: long
    backend: {type: scripted, model: s3, answers: ["The capital of France is Paris, on the Seine."], vote: longest}
`

// loadSpec is one load: Sessions sessions, Inflight at a time, on Workers worker processes
// (0: in this process, without Temporal), the first killed after a third of the sessions.
type loadSpec struct {
	Sessions, Inflight, Workers int
	Heartbeat                   time.Duration
}

// loadReport is what a load measured.
type loadReport struct {
	Completed, Failed, Duplicates int
	P50, P99, Wall                time.Duration
	// InFlightAtKill are the sessions running when the worker was killed; AfterKill is how
	// long after the kill the last of them ended.
	InFlightAtKill int
	AfterKill      time.Duration
	Errors         []string // the first few failures
}

func (r loadReport) perSecond() float64 { return float64(r.Completed) / r.Wall.Seconds() }

func (r loadReport) String() string {
	return fmt.Sprintf("%d completed, %d failed, %d duplicated; p50 %s, p99 %s; %.1f sessions/s over %s; %d in flight at the kill, the last ended %s after it",
		r.Completed, r.Failed, r.Duplicates, r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond), r.perSecond(),
		r.Wall.Round(time.Millisecond), r.InFlightAtKill, r.AfterKill.Round(time.Millisecond))
}

// workerProcess starts the test binary as a worker process (what `massgen worker` runs) on
// queue; it is killed when the test ends, if it is still running.
func workerProcess(tb testing.TB, addr, queue string) *exec.Cmd {
	return workerProcessOut(tb, nil, addr, queue)
}

// workerProcessOut is workerProcess with env added to its environment and its stderr
// written to stderr (nil: dropped).
func workerProcessOut(tb testing.TB, stderr io.Writer, addr, queue string, env ...string) *exec.Cmd {
	tb.Helper()
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	p := exec.Command(self, "-test.run=^$")
	p.Env = append(append(os.Environ(), workerEnv+"="+addr, workerEnv+"_QUEUE="+queue), env...)
	p.Stderr = stderr
	p.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = p.Process.Kill()
		_ = p.Wait()
	})
	return p
}

// runLoad runs spec and reports it. Every session is checked: exit 0, the longest answer
// wins, and its events.jsonl holds one final answer and one session end.
func runLoad(tb testing.TB, spec loadSpec) loadReport {
	tb.Helper()
	cfg := loadTeam(tb, quickTeam)
	root := tb.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	var remote func(context.Context, *config.Config, engine.Options) engine.Result
	var kill func()
	var wids sync.Map // session index to workflow ID
	slowest := -1     // the session of the killed worker's that ended last
	var killedAt time.Time
	if spec.Workers > 0 {
		addr := devServer(tb)
		queue := fmt.Sprintf("load-%d", time.Now().UnixNano())
		target := durable.Target{Address: addr, Queue: queue, Heartbeat: spec.Heartbeat}
		c, err := Dial(ctx, target)
		if err != nil {
			tb.Fatal(err)
		}
		defer c.Close()
		var procs []*exec.Cmd
		for range spec.Workers {
			procs = append(procs, workerProcess(tb, addr, queue))
		}
		kill = func() {
			if err := procs[0].Process.Signal(syscall.SIGKILL); err != nil {
				tb.Errorf("kill a worker: %v", err)
			}
		}
		remote = func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
			if i, ok := ctx.Value(sessionIndex{}).(int); ok {
				wids.Store(i, sessionWorkflowID(o))
			}
			return Run(ctx, c, target, cfg, o)
		}
		defer func() {
			if wid, ok := wids.Load(0); ok {
				tb.Logf("one session's history: %s", historyShape(c, wid.(string)))
			}
			if wid, ok := wids.Load(slowest); ok && !killedAt.IsZero() {
				tb.Logf("the slowest of the killed worker's sessions after the kill: %s", timeline(c, wid.(string), killedAt))
			}
		}()
	}

	type session struct {
		start, end time.Time
		err        string
	}
	all := make([]session, spec.Sessions)
	var (
		mu      sync.Mutex
		done    int
		running = map[int]bool{}
		atKill  []int
	)
	var wg sync.WaitGroup
	var next atomic.Int64
	began := time.Now()
	for range spec.Inflight {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= spec.Sessions || ctx.Err() != nil {
					return
				}
				mu.Lock()
				running[i] = true
				all[i].start = time.Now()
				mu.Unlock()
				res, err := app.Run(context.WithValue(ctx, sessionIndex{}, i), cfg, app.Options{Question: "What is the capital of France?", Logging: true, LogRoot: root, Remote: remote})
				msg := checkSession(res, err)
				mu.Lock()
				all[i].end, all[i].err = time.Now(), msg
				delete(running, i)
				done++
				if kill != nil && killedAt.IsZero() && done >= spec.Sessions/3 {
					kill()
					killedAt = time.Now()
					for k := range running {
						atKill = append(atKill, k)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r := loadReport{Wall: time.Since(began), InFlightAtKill: len(atKill)}
	var lat []time.Duration
	for _, s := range all {
		switch {
		case s.err == "":
			r.Completed++
			lat = append(lat, s.end.Sub(s.start))
		case strings.HasPrefix(s.err, "duplicate"):
			r.Duplicates++
		default:
			r.Failed++
		}
		if s.err != "" && len(r.Errors) < 5 {
			r.Errors = append(r.Errors, s.err)
		}
	}
	for _, k := range atKill {
		if d := all[k].end.Sub(killedAt); d > r.AfterKill {
			r.AfterKill, slowest = d, k
		}
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		r.P50, r.P99 = lat[n/2], lat[min(n-1, n*99/100)]
	}
	return r
}

// checkSession says what is wrong with a session of quickTeam ("" when nothing is); a
// session that ended twice starts with "duplicate".
func checkSession(res app.Result, err error) string {
	if err != nil {
		return err.Error()
	}
	if res.ExitCode != 0 || res.Err != nil || res.Winner != "long" {
		return fmt.Sprintf("exit %d, winner %q, err %v", res.ExitCode, res.Winner, res.Err)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		return err.Error()
	}
	finals, ends := 0, 0
	for _, e := range evs {
		switch e.Payload.(type) {
		case event.FinalAnswer:
			finals++
		case event.SessionEnded:
			ends++
		}
	}
	if finals > 1 || ends > 1 {
		return fmt.Sprintf("duplicate: %s has %d final answers and %d session ends", res.Dir, finals, ends)
	}
	if finals != 1 || ends != 1 {
		return fmt.Sprintf("%s has %d final answers and %d session ends", res.Dir, finals, ends)
	}
	return ""
}

func TestLoad_AKilledWorkerLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server and worker processes")
	}
	devServer(t)
	local := runLoad(t, loadSpec{Sessions: 60, Inflight: 16})
	t.Logf("local:    %s", local)
	r := runLoad(t, loadSpec{Sessions: 60, Inflight: 16, Workers: 2})
	t.Logf("temporal: %s", r)
	if r.Completed != 60 || r.Failed != 0 || r.Duplicates != 0 {
		t.Errorf("%d of 60 completed, %d failed, %d duplicated: %q", r.Completed, r.Failed, r.Duplicates, r.Errors)
	}
	if r.InFlightAtKill == 0 {
		t.Error("no session was running when the worker was killed")
	}
	// The heartbeat and workflow task timeouts (5 s each) and the rest of the sessions' run,
	// on a busy machine; with the 30 s heartbeat they ended 31 s after the kill.
	if r.AfterKill > 15*time.Second {
		t.Errorf("the killed worker's sessions ended %s after the kill, want within 15 s", r.AfterKill)
	}
}

// BenchmarkLoad runs -load.sessions sessions locally and through Temporal on -load.workers
// worker processes, one killed a third of the way; run it once:
//
//	go test ./internal/durable/temporalrun -run '^$' -bench Load -benchtime 1x
func BenchmarkLoad(b *testing.B) {
	devServer(b)
	for b.Loop() {
		spec := loadSpec{Sessions: *loadSessions, Inflight: *loadInflight}
		local := runLoad(b, spec)
		b.Logf("local:    %s", local)
		spec.Workers = *loadWorkers
		r := runLoad(b, spec)
		b.Logf("temporal (%d workers): %s", spec.Workers, r)
		if r.Failed+r.Duplicates > 0 {
			b.Errorf("%d failed, %d duplicated: %q", r.Failed, r.Duplicates, r.Errors)
		}
		b.ReportMetric(float64(r.Completed), "completed")
		b.ReportMetric(float64(r.Duplicates), "duplicates")
		b.ReportMetric(r.P50.Seconds(), "p50-s")
		b.ReportMetric(r.P99.Seconds(), "p99-s")
		b.ReportMetric(r.perSecond(), "sessions/s")
		b.ReportMetric(local.perSecond(), "local-sessions/s")
		b.ReportMetric(r.perSecond()/local.perSecond(), "ratio")
		b.ReportMetric(r.perSecond()/float64(spec.Workers)/local.perSecond(), "per-worker-ratio")
		b.ReportMetric(r.AfterKill.Seconds(), "after-kill-s")
	}
}

// sessionIndex is the context key of a session's index in the load.
type sessionIndex struct{}

// timeline lists the first of a workflow's history events from just before since on,
// with their times after it.
func timeline(c client.Client, wid string, since time.Time) string {
	it := c.GetWorkflowHistory(context.Background(), wid, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var b strings.Builder
	lines := 0
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return err.Error()
		}
		if d := e.GetEventTime().AsTime().Sub(since); d > -200*time.Millisecond {
			if lines++; lines > 12 {
				b.WriteString("\n  ...")
				break
			}
			fmt.Fprintf(&b, "\n  %+.2fs %s", d.Seconds(), strings.TrimPrefix(e.GetEventType().String(), "EventType"))
		}
	}
	return b.String()
}

// historyShape counts a workflow's history events by type.
func historyShape(c client.Client, wid string) string {
	it := c.GetWorkflowHistory(context.Background(), wid, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := map[string]int{}
	total := 0
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return err.Error()
		}
		n[strings.TrimPrefix(e.GetEventType().String(), "EventType")]++
		total++
	}
	return fmt.Sprintf("%d events %v", total, n)
}
