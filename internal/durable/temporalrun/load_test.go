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
	loadTools    = flag.Int("load.tools", 4, "BenchmarkLoad: every n-th session has tools (0: none)")
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
// (0: in this process, without Temporal), one killed after a third of the sessions; every
// Tools-th session has tools (toolLoadTeam; 0: none).
type loadSpec struct {
	Sessions, Inflight, Workers, Tools int
	Heartbeat                          time.Duration
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

	// The sessions with tools: how many completed, how many found the peer's note, and their
	// store copies (toolStats).
	ToolSessions, PeerReads, Puts, Gets int
	// HeldAtKill are the sessions with tools the killed worker held; Moved those of them whose
	// events say they moved with their workspaces; MovedOn how long after the kill the last
	// of them was claimed by another worker.
	HeldAtKill, Moved int
	MovedOn           time.Duration
	lastMoved         string // the workflow ID of the session claimed again last
	// Reclaimed are the sessions with tools claimed again while their worker lived;
	// TurnWait is the longest a turn of theirs that started waited for its worker (holdWait
	// bounds it).
	Reclaimed int
	TurnWait  time.Duration
	// CPU is the CPU time the dev server, the surviving workers and this process (the front)
	// used during the load.
	CPU string
	// StoreLeft are the entries left in the store at the end; WorkspacesLeft the folders left
	// in the surviving workers' workspace roots.
	StoreLeft, WorkspacesLeft int
}

func (r loadReport) perSecond() float64 { return float64(r.Completed) / r.Wall.Seconds() }

func (r loadReport) String() string {
	s := fmt.Sprintf("%d completed, %d failed, %d duplicated; p50 %s, p99 %s; %.1f sessions/s over %s; %d in flight at the kill, the last ended %s after it",
		r.Completed, r.Failed, r.Duplicates, r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond), r.perSecond(),
		r.Wall.Round(time.Millisecond), r.InFlightAtKill, r.AfterKill.Round(time.Millisecond))
	if r.CPU != "" {
		s += "; CPU: " + r.CPU
	}
	if r.ToolSessions > 0 && r.CPU == "" {
		s += fmt.Sprintf("; %d with tools (%d found the peer's note)", r.ToolSessions, r.PeerReads)
	}
	if r.ToolSessions > 0 && r.CPU != "" {
		s += fmt.Sprintf("; %d with tools (%d found the peer's note; %d store puts, %d gets); the killed worker held %d, %d moved with their workspaces, the last claimed again %s after the kill; %d claimed again without a kill, the longest wait of a turn for its worker %s; %d store entries and %d workspace folders left",
			r.ToolSessions, r.PeerReads, r.Puts, r.Gets, r.HeldAtKill, r.Moved, r.MovedOn.Round(time.Millisecond), r.Reclaimed, r.TurnWait.Round(time.Millisecond), r.StoreLeft, r.WorkspacesLeft)
	}
	return s
}

// workerProcessOut starts the test binary as a worker process (what `massgen worker` runs) on
// queue, with env added to its environment and its stderr written to stderr (nil: dropped);
// it is killed when the test ends, if it is still running.
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

// loadSession is one session of a load.
type loadSession struct {
	start, end time.Time
	err        string
	tools      bool
	st         toolStats
}

// runLoad runs spec and reports it. Every session is checked (checkSession).
func runLoad(tb testing.TB, spec loadSpec) loadReport {
	tb.Helper()
	plain, tooled := loadTeam(tb, quickTeam), loadTeam(tb, toolLoadTeam)
	root := tb.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	var remote func(context.Context, *config.Config, engine.Options) engine.Result
	var c client.Client
	var procs []*exec.Cmd
	var roots []string // the workers' workspace roots
	store := filepath.Join(root, "store")
	var wids sync.Map // session index to workflow ID
	if spec.Workers > 0 {
		addr := devServer(tb)
		queue := fmt.Sprintf("load-%d", time.Now().UnixNano())
		target := durable.Target{Address: addr, Queue: queue, Heartbeat: spec.Heartbeat, Store: store}
		var err error
		if c, err = Dial(ctx, target); err != nil {
			tb.Fatal(err)
		}
		defer c.Close()
		for i := range spec.Workers {
			roots = append(roots, filepath.Join(root, fmt.Sprintf("worker-%d", i)))
			procs = append(procs, workerProcessOut(tb, nil, addr, queue, workerEnv+"_WORKSPACES="+roots[i], workerEnv+"_STORE="+store))
		}
		remote = func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
			if i, ok := ctx.Value(sessionIndex{}).(int); ok {
				wids.Store(i, sessionWorkflowID(o))
			}
			return Run(ctx, c, target, cfg, o)
		}
	}
	hasTools := func(i int) bool { return spec.Tools > 0 && i%spec.Tools == 0 }

	all := make([]loadSession, spec.Sessions)
	var (
		mu       sync.Mutex
		done     int
		running  = map[int]bool{}
		atKill   []int
		killed   = -1 // the index in procs of the killed worker
		killedAt time.Time
	)
	var wg sync.WaitGroup
	var next atomic.Int64
	began := time.Now()
	cpu0 := map[int]time.Duration{0: cpuTime(0)}
	if procs != nil {
		cpu0[server.cmd.Process.Pid] = cpuTime(server.cmd.Process.Pid)
		for _, p := range procs {
			cpu0[p.Process.Pid] = cpuTime(p.Process.Pid)
		}
	}
	for range spec.Inflight {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= spec.Sessions || ctx.Err() != nil {
					return
				}
				cfg := plain
				if hasTools(i) {
					cfg = tooled
				}
				mu.Lock()
				running[i] = true
				all[i].start, all[i].tools = time.Now(), hasTools(i)
				mu.Unlock()
				res, err := app.Run(context.WithValue(ctx, sessionIndex{}, i), cfg, app.Options{Question: "What is the capital of France?",
					Logging: true, LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "local-ws"), Remote: remote})
				msg, st := checkSession(res, err, hasTools(i))
				mu.Lock()
				all[i].end, all[i].err, all[i].st = time.Now(), msg, st
				delete(running, i)
				done++
				if procs != nil && killed < 0 && done >= spec.Sessions/3 {
					killed = busiestHolder(ctx, tb, c, procs, running, &wids)
					if err := procs[killed].Process.Signal(syscall.SIGKILL); err != nil {
						tb.Errorf("kill a worker: %v", err)
					}
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
	if procs != nil {
		used := func(pid int) string { return (cpuTime(pid) - cpu0[pid]).Round(100 * time.Millisecond).String() }
		r.CPU = "server " + used(server.cmd.Process.Pid)
		for i, p := range procs {
			if i != killed {
				r.CPU += fmt.Sprintf(", worker %d %s", i, used(p.Process.Pid))
			}
		}
		r.CPU += ", front " + used(0)
	}
	var lat []time.Duration
	for _, s := range all {
		switch {
		case s.err == "":
			r.Completed++
			lat = append(lat, s.end.Sub(s.start))
			if s.tools {
				r.ToolSessions++
				if procs != nil {
					r.Puts += s.st.Puts
					r.Gets += s.st.Gets
				}
				if s.st.PeerRead {
					r.PeerReads++
				}
			}
		case strings.HasPrefix(s.err, "duplicate"):
			r.Duplicates++
		default:
			r.Failed++
		}
		if s.err != "" && len(r.Errors) < 5 {
			r.Errors = append(r.Errors, s.err)
		}
	}
	slowest := -1 // the session of the killed worker's that ended last
	for _, k := range atKill {
		if d := all[k].end.Sub(killedAt); d > r.AfterKill {
			r.AfterKill, slowest = d, k
		}
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		r.P50, r.P99 = lat[n/2], lat[min(n-1, n*99/100)]
	}
	if procs == nil {
		return r
	}
	for k := range all {
		if all[k].tools {
			movedOn(ctx, tb, c, &r, &wids, k, procs[killed].Process.Pid, killedAt, all[k].st.Moved)
		}
	}
	r.StoreLeft = countEntries(store)
	for i, dir := range roots {
		if i != killed {
			r.WorkspacesLeft += countEntries(dir)
		}
	}
	for _, i := range []int{0, 1} {
		if wid, ok := wids.Load(i); ok {
			tb.Logf("session %d (tools: %v): %s; activities: %s", i, hasTools(i), historyShape(c, wid.(string)), activityTimes(c, wid.(string)))
		}
	}
	if wid, ok := wids.Load(slowest); ok {
		tb.Logf("the slowest of the killed worker's sessions after the kill: %s", timeline(c, wid.(string), killedAt))
	}
	if r.lastMoved != "" {
		tb.Logf("the last of the killed worker's held sessions to move: %s", timeline(c, r.lastMoved, killedAt))
	}
	return r
}

// countEntries counts what is in dir (0 when it does not exist).
func countEntries(dir string) int {
	entries, _ := os.ReadDir(dir)
	return len(entries)
}

// checkSession says what is wrong with a session of quickTeam or toolLoadTeam ("" when
// nothing is): exit 0, the longest answer wins, its events.jsonl holds one final answer and
// one session end, and with tools what checkTools checks. A session that ended twice starts
// with "duplicate".
func checkSession(res app.Result, err error, tools bool) (string, toolStats) {
	if err != nil {
		return err.Error(), toolStats{}
	}
	if res.ExitCode != 0 || res.Err != nil || res.Winner != "long" {
		return fmt.Sprintf("exit %d, winner %q, err %v", res.ExitCode, res.Winner, res.Err), toolStats{}
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		return err.Error(), toolStats{}
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
		return fmt.Sprintf("duplicate: %s has %d final answers and %d session ends", res.Dir, finals, ends), toolStats{}
	}
	if finals != 1 || ends != 1 {
		return fmt.Sprintf("%s has %d final answers and %d session ends", res.Dir, finals, ends), toolStats{}
	}
	if !tools {
		return "", toolStats{}
	}
	return checkTools(res, evs)
}

func TestLoad_AKilledWorkerLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server and worker processes")
	}
	devServer(t)
	spec := loadSpec{Sessions: 60, Inflight: 16, Tools: 4}
	local := runLoad(t, spec)
	t.Logf("local:    %s", local)
	if local.Completed != 60 || local.ToolSessions != 15 || local.PeerReads < 15/2 {
		t.Errorf("local: %d of 60 completed, %d of 15 with tools, %d found the peer's note: %q", local.Completed, local.ToolSessions, local.PeerReads, local.Errors)
	}
	spec.Workers = 2
	r := runLoad(t, spec)
	t.Logf("temporal: %s", r)
	if r.Completed != 60 || r.Failed != 0 || r.Duplicates != 0 || r.ToolSessions != 15 {
		t.Errorf("%d of 60 completed (%d of 15 with tools), %d failed, %d duplicated: %q", r.Completed, r.ToolSessions, r.Failed, r.Duplicates, r.Errors)
	}
	checkHeld(t, r)
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
		spec := loadSpec{Sessions: *loadSessions, Inflight: *loadInflight, Tools: *loadTools}
		local := runLoad(b, spec)
		b.Logf("local:    %s", local)
		spec.Workers = *loadWorkers
		r := runLoad(b, spec)
		b.Logf("temporal (%d workers): %s", spec.Workers, r)
		if r.Failed+r.Duplicates > 0 {
			b.Errorf("%d failed, %d duplicated: %q", r.Failed, r.Duplicates, r.Errors)
		}
		if spec.Tools > 0 {
			checkHeld(b, r)
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
		b.ReportMetric(r.MovedOn.Seconds(), "held-moved-on-s")
		b.ReportMetric(r.TurnWait.Seconds(), "held-turn-wait-s")
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
			if lines++; lines > 20 {
				b.WriteString("\n  ...")
				break
			}
			fmt.Fprintf(&b, "\n  %+.2fs %s", d.Seconds(), strings.TrimPrefix(e.GetEventType().String(), "EventType"))
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				fmt.Fprintf(&b, " %s", a.GetActivityType().GetName())
			}
			if a := e.GetActivityTaskTimedOutEventAttributes(); a != nil {
				fmt.Fprintf(&b, " (%s)", a.GetFailure().GetMessage())
			}
			if a := e.GetWorkflowTaskTimedOutEventAttributes(); a != nil {
				fmt.Fprintf(&b, " (%s)", a.GetTimeoutType())
			}
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
