package temporalrun

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// recorder is a view: what a person watching the session sees (app.Options.Sinks).
type recorder struct {
	mu     sync.Mutex
	evs    []event.Event
	onEach func(event.Event)
}

func (r *recorder) Handle(e event.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	f := r.onEach
	r.mu.Unlock()
	if f != nil {
		f(e)
	}
}

func (r *recorder) events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.evs...)
}

// textOf is agent's coordination text in evs, in order.
func textOf(evs []event.Event, agent string) string {
	var b strings.Builder
	for _, e := range evs {
		if d, ok := e.Payload.(event.TextDelta); ok && d.Agent == agent && !d.Presentation {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

func dialTarget(t *testing.T, target durable.Target) client.Client {
	t.Helper()
	c, err := Dial(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// runRemote runs cfg through app.Run on target, with view as a view and steer as the
// session's steering; it returns the result and the workflow's ID.
func runRemote(t *testing.T, c client.Client, target durable.Target, cfg *config.Config, view event.Sink, steer *engine.Steering) (app.Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wid string
	remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		wid = sessionWorkflowID(o)
		return Run(ctx, c, target, cfg, o)
	}
	o := app.Options{Question: "What is the capital of France?", Logging: true, LogRoot: t.TempDir(), Remote: remote, Steering: steer}
	if view != nil {
		o.Sinks = []event.Sink{view}
	}
	res, err := app.Run(ctx, cfg, o)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("remote run: exit %d, err %v", res.ExitCode, res.Err)
	}
	return res, wid
}

func readLog(t *testing.T, dir string) []event.Event {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range evs {
		if e.Seq != int64(k+1) {
			t.Fatalf("events.jsonl: event %d has seq %d", k+1, e.Seq)
		}
		if e.Preview || e.Previewed {
			t.Fatalf("events.jsonl: event %d (%s) is marked as a preview", e.Seq, e.Payload.Type())
		}
	}
	return evs
}

// gated holds a provider's stream after its first text until release is closed.
type gated struct {
	provider.Provider
	release <-chan struct{}
	held    chan<- error
}

func (g gated) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		first := true
		for c, err := range g.Provider.Stream(ctx, req) {
			if !yield(c, err) {
				return
			}
			if _, text := c.(provider.TextDelta); text && first {
				first = false
				select {
				case <-g.release:
				case <-time.After(10 * time.Second):
					select {
					case g.held <- errors.New("the first text never reached the caller while the call was held"):
					default:
					}
					return // the call ends there, and the turn with it
				case <-ctx.Done():
					return
				}
			}
		}
	}
}

func TestLive_TextReachesTheCallerWhileTheTurnRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	target := durable.Target{Address: devServer(t), Queue: "live-text", Heartbeat: 2 * time.Second, Live: 100 * time.Millisecond}
	c := dialTarget(t, target)
	release := make(chan struct{})
	held := make(chan error, 8)
	workerWith(t, c, target, &Activities{NewProvider: func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
		p, err := app.NewProvider(b, key, keyEnv)
		return gated{Provider: p, release: release, held: held}, err
	}})
	cfg := loadTeam(t, `
agents:
  - id: solo
    backend: {type: scripted, model: s, chunk_delay: 10ms, answers: ["The capital of France is Paris."]}
`)
	var once sync.Once
	view := &recorder{}
	view.onEach = func(e event.Event) {
		if _, ok := e.Payload.(event.TextDelta); ok && e.Preview {
			once.Do(func() { close(release) }) // the call goes on only now
		}
	}
	res, _ := runRemote(t, c, target, cfg, view, nil)
	select {
	case err := <-held:
		t.Fatal(err)
	default:
	}
	logged := readLog(t, res.Dir)
	want := textOf(logged, "solo")
	if !strings.Contains(want, "Paris") {
		t.Fatalf("the log's text %q does not hold the answer", want)
	}
	// The view saw every text once: as previews, not again when the turn was logged.
	if got := textOf(view.events(), "solo"); got != want {
		t.Errorf("the view showed %q, the log holds %q", got, want)
	}
	previews := 0
	for _, e := range view.events() {
		if e.Previewed {
			t.Errorf("the view got the logged copy of a preview (%s)", e.Payload.Type())
		}
		if e.Preview {
			previews++
		}
	}
	if previews == 0 {
		t.Error("the view got no previews")
	}
}

func TestLive_LostAttemptIsCountedOnceAndNotLogged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server and kills a worker: about 15 s")
	}
	addr := devServer(t)
	// One agent whose first call of each turn attempt answers without the workflow tool:
	// the second call, after the reminder, is where its worker dies.
	cfg := loadTeam(t, `
agents:
  - id: solo
    backend: {type: scripted, model: s, latency: 2s, chunk_delay: 10ms, answers: ["The capital of France is Paris."], faults: [{kind: no_tool, call: 1}]}
`)
	local := runLogged(t, cfg, t.TempDir(), nil)
	if local.ExitCode != 0 {
		t.Fatalf("local run: exit %d, err %v", local.ExitCode, local.Err)
	}
	localText := textOf(readLog(t, local.Dir), "solo")

	target := durable.Target{Address: addr, Queue: "live-kill", Heartbeat: 2 * time.Second, Live: 100 * time.Millisecond}
	c := dialTarget(t, target)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a := exec.Command(self, "-test.run=^$")
	a.Env = append(os.Environ(), workerEnv+"="+addr, workerEnv+"_QUEUE="+target.Queue)
	a.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Process.Kill(); _ = a.Wait() })

	// When the reminder's call shows, the first call's usage is in the workflow: A dies
	// and B takes the turn over.
	var once sync.Once
	takeOver := make(chan struct{})
	view := &recorder{}
	view.onEach = func(e event.Event) {
		if m, ok := e.Payload.(event.ModelCalled); ok && e.Preview && m.Attempt == 2 {
			once.Do(func() {
				_ = a.Process.Signal(syscall.SIGKILL)
				close(takeOver)
			})
		}
	}
	go func() {
		<-takeOver
		workerWith(t, c, target, &Activities{})
	}()
	res, _ := runRemote(t, c, target, cfg, view, nil)
	select {
	case <-takeOver:
	default:
		t.Fatal("worker A was never killed")
	}

	logged := readLog(t, res.Dir)
	if got := textOf(logged, "solo"); got != localText {
		t.Errorf("events.jsonl's text %q, a local run's %q: the lost attempt's text must not be logged", got, localText)
	}
	if got := textOf(view.events(), "solo"); len(got) <= len(localText) {
		t.Errorf("the view showed %q: want the lost attempt's text too", got)
	}
	var retried provider.Usage
	calls := 0
	for _, e := range logged {
		if u, ok := e.Payload.(event.UsageReported); ok && u.Retried > 0 {
			if u.Retried != 1 {
				t.Errorf("a call of attempt %d marked retried, want attempt 1", u.Retried)
			}
			retried = retried.Add(u.Usage)
			calls++
		}
	}
	if calls != 1 {
		t.Fatalf("%d retried calls logged, want 1 (the lost attempt's first call)", calls)
	}
	// Every call paid for is in the cost: a local run's coordination calls and the lost one
	// (the presentation on Temporal is a fresh call, not a continued conversation), and the
	// session's usage is what its log reports.
	coordination := func(evs []event.Event) (coord, all provider.Usage) {
		for _, e := range evs {
			if u, ok := e.Payload.(event.UsageReported); ok {
				all = all.Add(u.Usage)
				if !u.Presentation {
					coord = coord.Add(u.Usage)
				}
			}
		}
		return coord, all
	}
	localCoord, _ := coordination(readLog(t, local.Dir))
	remoteCoord, remoteAll := coordination(logged)
	if want := localCoord.Add(retried); remoteCoord != want {
		t.Errorf("coordination usage on Temporal %+v, want a local run's plus the retried call's: %+v", remoteCoord, want)
	}
	if res.Usage != remoteAll {
		t.Errorf("the session's usage %+v, its log's %+v", res.Usage, remoteAll)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Retried struct {
			Calls int `json:"calls"`
		} `json:"retried"`
		Usage struct {
			Output int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Retried.Calls != 1 || st.Usage.Output != res.Usage.OutputTokens {
		t.Errorf("status.json: retried %d calls, %d output tokens; want 1 and %d", st.Retried.Calls, st.Usage.Output, res.Usage.OutputTokens)
	}
}

func TestLive_ContinuedAsNewTheTailGoesOn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	cfg := loadTeam(t, team)
	local := runLogged(t, cfg, t.TempDir(), nil)
	target := durable.Target{Address: devServer(t), Queue: "live-can", Heartbeat: 2 * time.Second, Live: 100 * time.Millisecond,
		HistoryLimit: minHistoryLimit}
	c := dialTarget(t, target)
	inProcessWorker(t, c, target)
	res, wid := runRemote(t, c, target, cfg, nil, nil)
	if res.Winner != local.Winner || res.FinalAnswer != local.FinalAnswer {
		t.Errorf("on Temporal %s won with %q; locally %s with %q", res.Winner, res.FinalAnswer, local.Winner, local.FinalAnswer)
	}

	// The session took several runs, each of which replays: walk back from the last.
	runs := 0
	for rid := ""; ; runs++ {
		h := historyOf(t, c, wid, rid)
		replay(t, h)
		rid = h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if rid == "" {
			break
		}
	}
	if runs == 0 {
		t.Fatal("the session never continued as new")
	}
	t.Logf("%d runs after the first", runs)

	// The caller's log is one session's: numbered without gaps, started and ended once, with
	// every answer a local run gave.
	logged := readLog(t, res.Dir)
	count := map[string]int{}
	var answers, localAnswers []string
	for _, e := range logged {
		count[e.Payload.Type()]++
		if a, ok := e.Payload.(event.AnswerSubmitted); ok {
			answers = append(answers, a.Agent+": "+a.Content)
		}
	}
	for _, e := range readLog(t, local.Dir) {
		if a, ok := e.Payload.(event.AnswerSubmitted); ok {
			localAnswers = append(localAnswers, a.Agent+": "+a.Content)
		}
	}
	if count["session_started"] != 1 || count["session_ended"] != 1 || count["final_answer"] != 1 {
		t.Errorf("events.jsonl: %d session_started, %d session_ended, %d final_answer; want 1 each", count["session_started"], count["session_ended"], count["final_answer"])
	}
	if strings.Join(sorted(answers), "\n") != strings.Join(sorted(localAnswers), "\n") {
		t.Errorf("answers on Temporal:\n%s\nlocally:\n%s", strings.Join(answers, "\n"), strings.Join(localAnswers, "\n"))
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// historyOf is the history of run rid of workflow wid ("": its latest run).
func historyOf(t *testing.T, c client.Client, wid, rid string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), wid, rid, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
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

func TestLive_SteeringReachesTheWorkflow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	target := durable.Target{Address: devServer(t), Queue: "live-steer", Heartbeat: 2 * time.Second, Live: 100 * time.Millisecond}
	c := dialTarget(t, target)
	// mid answers only once the message is in the workflow, so fast's next turn (which
	// mid's answer gives it) meets the message however slow the machine is.
	sent := make(chan struct{})
	workerWith(t, c, target, &Activities{NewProvider: func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
		p, err := app.NewProvider(b, key, keyEnv)
		if b.Model == "s2" {
			return heldUntil{Provider: p, open: sent}, err
		}
		return p, err
	}})
	// fast answers and votes at once; mid's answer, later, gives fast another turn, which
	// the message reaches; slow and slower would take a minute: slow is stopped, and only
	// Answer Now ends the session before slower answers.
	cfg := loadTeam(t, `
agents:
  - id: fast
    backend: {type: scripted, model: s1, latency: 100ms, answers: ["Paris."]}
  - id: mid
    backend: {type: scripted, model: s2, latency: 100ms, answers: ["Paris, on the Seine."]}
  - id: slow
    backend: {type: scripted, model: s3, latency: 60s, answers: ["Nice?"]}
  - id: slower
    backend: {type: scripted, model: s4, latency: 60s, answers: ["Lyon?"]}
orchestrator:
  final_presentation: verbatim
  end_when_decided: false
`)
	steer := engine.NewSteering()
	errs := make(chan error, 8)
	step := make(chan string, 8)
	var answered, told sync.Once
	view := &recorder{onEach: func(e event.Event) {
		switch p := e.Payload.(type) {
		case event.AnswerSubmitted:
			if p.Agent == "fast" {
				answered.Do(func() { step <- "answered" })
			}
		case event.HumanInput:
			if p.Agent == "fast" {
				told.Do(func() { step <- "told" })
			}
		}
	}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the view saw: %s", eventTypes(view.events()))
		}
	})
	// The steering goes from its own goroutine, as the dashboard's does.
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for s := range step {
			switch s {
			case "answered":
				if err := steer.StopAgent("nobody"); err == nil || !strings.Contains(err.Error(), "nobody") {
					errs <- errors.New("stopping an unknown agent: " + errString(err))
				}
				for _, err := range []error{steer.Send("Answer in one word."), steer.StopAgent("slow")} {
					if err != nil {
						errs <- err
					}
				}
				close(sent)
			case "told":
				if err := steer.AnswerNow(); err != nil {
					errs <- err
				}
				return
			}
		}
	})
	start := time.Now()
	res, wid := runRemote(t, c, target, cfg, view, steer)
	close(step)
	for _, e := range historyOf(t, c, wid, "").Events {
		if f := e.GetWorkflowTaskFailedEventAttributes(); f != nil {
			t.Errorf("a workflow task failed: %s: %s", f.GetCause(), f.GetFailure().GetMessage())
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if d := time.Since(start); d > 45*time.Second {
		t.Errorf("took %s: the 60 s turns were not cancelled", d)
	}
	if res.EndReason != event.EndAnswerNow || res.Status != event.StatusCompleted {
		t.Errorf("ended %q (%s), want answer_now and completed", res.EndReason, res.Status)
	}
	var input, stopped bool
	for _, e := range readLog(t, res.Dir) {
		switch p := e.Payload.(type) {
		case event.HumanInput:
			input = input || p.Agent == "fast" && p.Text == "Answer in one word."
		case event.AgentDead:
			stopped = stopped || p.Agent == "slow" && strings.Contains(p.Reason, "stopped")
		}
	}
	if !input || !stopped {
		t.Errorf("the log holds the message for fast: %v; slow stopped: %v", input, stopped)
	}
	if err := steer.AnswerNow(); !errors.Is(err, engine.ErrNotRunning) {
		t.Errorf("Answer Now after the session: %v, want %v", err, engine.ErrNotRunning)
	}
}

// eventTypes is evs in short, for a failing test's log.
func eventTypes(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if _, text := e.Payload.(event.TextDelta); text {
			continue
		}
		var who struct{ Agent string }
		raw, _ := json.Marshal(e.Payload)
		_ = json.Unmarshal(raw, &who)
		b.WriteString(" " + e.Payload.Type() + "(" + who.Agent + ")")
	}
	return b.String()
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
