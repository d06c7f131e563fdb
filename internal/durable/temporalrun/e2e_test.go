package temporalrun

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protojson"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
)

var update = flag.Bool("update", false, "rewrite testdata/history.json from the end-to-end run")

// workerEnv makes the test binary a worker process (the code `massgen worker` runs) for the
// kill test: a real process, killed with SIGKILL.
const workerEnv = "MASSGEN_TEST_TEMPORAL_WORKER"

func TestMain(m *testing.M) {
	if addr := os.Getenv(workerEnv); addr != "" {
		os.Exit(runWorkerProcess(addr))
	}
	code := m.Run()
	stopServer()
	if err := goleak.Find(); code == 0 && err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		code = 1
	}
	os.Exit(code)
}

func runWorkerProcess(addr string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dir := os.Getenv(workerEnv + "_DIR"); dir != "" {
		if err := os.Chdir(dir); err != nil { // a worker on another machine: its own folders
			os.Stderr.WriteString(err.Error() + "\n")
			return 1
		}
	}
	t := durable.Target{Address: addr, Queue: os.Getenv(workerEnv + "_QUEUE"), Store: os.Getenv(workerEnv + "_STORE")}
	c, err := Dial(ctx, t)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	defer c.Close()
	allow, err := durable.NewAllowlist(durable.SplitList(os.Getenv(durable.AllowBaseURLEnv)))
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	// What `massgen worker` runs.
	acts := &Activities{WorkspaceRoot: os.Getenv(workerEnv + "_WORKSPACES"), TrustSessions: os.Getenv(workerEnv+"_TRUST") != "", Allow: allow}
	if err := Worker(ctx, c, t, acts); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 2
	}
	return 0
}

// team is three scripted agents with one answer each, voting for the longest: the winner does
// not depend on which worker runs which turn (a scripted agent that moves to another worker
// forgets what it did, and finds out from the session).
const team = `
agents:
  - id: short
    backend: {type: scripted, model: s1, latency: 900ms, chunk_delay: 20ms, answers: ["Paris."], vote: longest}
  - id: medium
    backend: {type: scripted, model: s2, latency: 1100ms, chunk_delay: 20ms, answers: ["The capital is Paris."], vote: longest}
  - id: long
    backend: {type: scripted, model: s3, latency: 1300ms, chunk_delay: 20ms, answers: ["The capital of France is Paris, on the Seine."], vote: longest}
orchestrator:
  final_presentation: regenerate
`

func loadTeam(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, rep := config.Parse("team.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatalf("config: %v", rep.Err())
	}
	return cfg
}

// runLogged runs the team through app.Run, remotely when remote is set, and returns the result.
func runLogged(t *testing.T, cfg *config.Config, root string, remote func(context.Context, *config.Config, engine.Options) engine.Result) app.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := app.Run(ctx, cfg, app.Options{Question: "What is the capital of France?", Logging: true, LogRoot: root, Remote: remote})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

func TestSession_SurvivesAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server and kills a worker: about 20 s")
	}
	addr := devServer(t)
	cfg := loadTeam(t, team)
	local := runLogged(t, cfg, t.TempDir(), nil)
	if local.ExitCode != 0 || local.Winner == "" {
		t.Fatalf("local run: exit %d, winner %q, err %v", local.ExitCode, local.Winner, local.Err)
	}

	target := durable.Target{Address: addr, Queue: "kill-test", Heartbeat: 2 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Dial(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// Worker A: a process of its own, alone on the queue when the session starts.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a := exec.Command(self, "-test.run=^$")
	a.Env = append(os.Environ(), workerEnv+"="+addr, workerEnv+"_QUEUE="+target.Queue)
	a.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var aErr strings.Builder
	a.Stderr = &aErr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = a.Process.Kill()
		}
		_ = a.Wait()
	})

	// When every agent's first turn has started (all on A), A is killed and B takes over.
	var once sync.Once
	started := map[string]bool{}
	var mu sync.Mutex
	takeOver := make(chan struct{})
	watch := event.SinkFunc(func(e event.Event) {
		if ts, ok := e.Payload.(event.TurnStarted); ok {
			mu.Lock()
			started[ts.Agent] = true
			all := len(started) == len(cfg.Agents)
			mu.Unlock()
			if all {
				once.Do(func() { close(takeOver) })
			}
		}
	})
	var bWG sync.WaitGroup
	bCtx, stopB := context.WithCancel(ctx)
	defer func() { stopB(); bWG.Wait() }()
	bWG.Go(func() {
		select {
		case <-takeOver:
		case <-bCtx.Done():
			return
		}
		time.Sleep(300 * time.Millisecond) // A has picked the turns up
		if err := a.Process.Signal(syscall.SIGKILL); err != nil {
			t.Errorf("kill worker A: %v", err)
		}
		killed = true
		w := worker.New(c, target.Queue, worker.Options{Identity: "worker-B"})
		Register(w, &Activities{Client: c})
		if err := w.Start(); err != nil {
			t.Errorf("start worker B: %v", err)
			return
		}
		<-bCtx.Done()
		w.Stop()
	})

	root := t.TempDir()
	var wid string
	remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		o.Bus.Subscribe(watch)
		wid = sessionWorkflowID(o)
		return Run(ctx, c, target, cfg, o)
	}
	res := runLogged(t, cfg, root, remote)
	if res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("remote run: exit %d, err %v\nworker A: %s", res.ExitCode, res.Err, aErr.String())
	}
	if res.Winner != local.Winner {
		t.Errorf("winner on Temporal %q, locally %q", res.Winner, local.Winner)
	}
	if !killed {
		t.Fatal("worker A was never killed")
	}

	// The log is a local run's: status.json, events.jsonl and final/ for the winner.
	b, err := os.ReadFile(filepath.Join(res.Dir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Results struct {
			Winner   string `json:"winner"`
			ExitCode int    `json:"exit_code"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Results.Winner != res.Winner || st.Results.ExitCode != 0 {
		t.Errorf("status.json results %+v, want winner %q and exit 0", st.Results, res.Winner)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "final", res.Winner, "answer.txt")); err != nil {
		t.Errorf("final answer file: %v", err)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := evs[0].Payload.(event.SessionStarted); !ok {
		t.Errorf("first event %T, want SessionStarted", evs[0].Payload)
	}
	if _, ok := evs[len(evs)-1].Payload.(event.SessionEnded); !ok {
		t.Errorf("last event %T, want SessionEnded", evs[len(evs)-1].Payload)
	}

	// Turns A held were run again, on B.
	hist := history(t, c, wid)
	retried, onB := 0, 0
	for _, e := range hist.Events {
		if s := e.GetActivityTaskStartedEventAttributes(); s != nil {
			if s.GetAttempt() > 1 {
				retried++
			}
			if s.GetIdentity() == "worker-B" {
				onB++
			}
		}
	}
	t.Logf("%d history events; %d activity attempts after the first, %d activities started on worker B", len(hist.Events), retried, onB)
	if retried == 0 || onB == 0 {
		t.Errorf("%d activity attempts after the first, %d on worker B: the killed worker's turns did not move", retried, onB)
	}

	// The workflow code replays deterministically on the history it made.
	replay(t, hist)
	if *update {
		b, err := protojson.MarshalOptions{Indent: " "}.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "history.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func history(t *testing.T, c client.Client, wid string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), wid, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	return h
}

func replay(t *testing.T, h *historypb.History) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	RegisterWorkflow(r)
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		t.Errorf("replay: %v", err)
	}
}

// TestReplay_RecordedHistory replays a history recorded by the end-to-end test (go test -run
// SurvivesAKilledWorker -update): a change to the workflow code that would break sessions
// already running fails here, without a server.
func TestReplay_RecordedHistory(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "history.json"))
	if err != nil {
		t.Fatal(err)
	}
	var h historypb.History
	if err := protojson.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	replay(t, &h)
}

func TestDial_BadAddressFailsFast(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:1", "no-port", ""} {
		start := time.Now()
		_, err := Dial(context.Background(), durable.Target{Address: addr})
		if err == nil {
			t.Fatalf("%q: no error", addr)
		}
		if d := time.Since(start); d > dialTimeout+2*time.Second {
			t.Errorf("%q: took %s", addr, d)
		}
		if !strings.Contains(err.Error(), "Temporal") || !strings.Contains(err.Error(), "--temporal") {
			t.Errorf("%q: %v does not say what to check", addr, err)
		}
	}
}

// inProcessWorker runs a worker on target's queue until the test ends.
func inProcessWorker(t *testing.T, c client.Client, target durable.Target) {
	t.Helper()
	workerWith(t, c, target, &Activities{})
}

// workerWith runs a worker with acts (streaming through c) on target's queue until the test
// ends.
func workerWith(t *testing.T, c client.Client, target durable.Target, acts *Activities) {
	t.Helper()
	w := worker.New(c, target.Queue, worker.Options{})
	acts.Client = c
	if acts.Store == nil {
		acts.Store = target.StoreOrDefault()
	}
	Register(w, acts)
	acts.queue = ownQueue(target.Queue)
	own := worker.New(c, acts.queue, worker.Options{})
	registerHeld(own, acts)
	for _, w := range []worker.Worker{w, own} {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	t.Cleanup(acts.dropAll)
}

func TestSession_InterruptedByTheStarter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := devServer(t)
	target := durable.Target{Address: addr, Queue: "interrupt-test", Heartbeat: 2 * time.Second}
	c, err := Dial(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	inProcessWorker(t, c, target)
	cfg := loadTeam(t, `
agents:
  - id: slow
    backend: {type: scripted, model: s, latency: 30s, answers: ["Paris."]}
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wid string
	remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		o.Bus.Subscribe(event.SinkFunc(func(e event.Event) {
			if _, ok := e.Payload.(event.TurnStarted); ok {
				time.AfterFunc(300*time.Millisecond, cancel) // Ctrl-C in the middle of the turn
			}
		}))
		wid = sessionWorkflowID(o)
		return Run(ctx, c, target, cfg, o)
	}
	start := time.Now()
	res, err := app.Run(ctx, cfg, app.Options{Question: "q", Logging: true, LogRoot: t.TempDir(), Remote: remote})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 4 || res.Status != event.StatusInterrupted {
		t.Errorf("exit %d status %q, want 4 interrupted (err %v)", res.ExitCode, res.Status, res.Err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s: the interrupt did not stop the 30 s turn", d)
	}
	d, err := c.DescribeWorkflowExecution(context.Background(), wid, "")
	if err != nil {
		t.Fatal(err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("the workflow is still %s after the starter returned", st)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if end, ok := evs[len(evs)-1].Payload.(event.SessionEnded); !ok || end.ExitCode != 4 {
		t.Errorf("last event %#v, want session_ended with exit 4", evs[len(evs)-1].Payload)
	}
}

// A session that cannot run on Temporal ends the starter's wait with the reason, instead of
// polling a closed workflow for ever: a feature Temporal does not run yet, refused before the
// workflow starts, and tools that start programs, which a worker runs only with
// --trust-sessions, refused by the worker that claims the session.
func TestSession_Refused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := devServer(t)
	target := durable.Target{Address: addr, Queue: "refuse-test", Store: t.TempDir()}
	c, err := Dial(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	workerWith(t, c, target, &Activities{WorkspaceRoot: t.TempDir()})
	for _, tt := range []struct{ name, yaml, want string }{
		{"broadcast", `
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris."]}
orchestrator: {coordination: {broadcast: human}}
`, "orchestrator.coordination.broadcast: human: not supported on Temporal yet"},
		{"commands on an untrusted worker", `
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris."], cwd: ws, enable_mcp_command_line: true}
`, "start the worker with --trust-sessions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadTeam(t, tt.yaml)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res := Run(ctx, c, target, cfg, engine.Options{Question: "q", Bus: event.NewBus(nil)})
			if res.ExitCode != 2 || res.Err == nil || !strings.Contains(res.Err.Error(), tt.want) {
				t.Errorf("exit %d, err %v: want exit 2 saying %q", res.ExitCode, res.Err, tt.want)
			}
			if ctx.Err() != nil {
				t.Error("the starter waited for its context to end")
			}
		})
	}
}
