package subagent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/event"
)

// recorder keeps the events a Manager publishes.
type recorder struct {
	mu  sync.Mutex
	evs []event.Payload
}

func (r *recorder) publish(p event.Payload) { r.mu.Lock(); r.evs = append(r.evs, p); r.mu.Unlock() }

func (r *recorder) finished() []event.SubagentFinished {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.SubagentFinished
	for _, p := range r.evs {
		if f, ok := p.(event.SubagentFinished); ok {
			out = append(out, f)
		}
	}
	return out
}

func settings() Settings {
	return Settings{Timeout: time.Minute, MaxConcurrent: 3, Types: []string{"explorer"}, Background: true}
}

func answering(ctx context.Context, r Request) Outcome {
	r.OnCost(0.01, false)
	return Outcome{Answer: "done: " + r.ID, CostUSD: 0.01}
}

func call(t *testing.T, m *Manager, args string) (string, bool, float64) {
	t.Helper()
	res := m.Tool("agent1", nil).Run(t.Context(), args)
	return res.Content, res.IsError, res.Spent.CostUSD
}

func TestSpawn_ResultsAndCostComeBack(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec := &recorder{}
	m := NewManager(settings(), answering, rec.publish)
	defer m.Close()
	out, isErr, spent := call(t, m, `{"tasks":[{"task":"a","subagent_id":"one"},{"task":"b","subagent_type":"explorer"}]}`)
	if isErr {
		t.Fatalf("error: %s", out)
	}
	var got struct {
		Success bool
		Results []struct {
			ID     string `json:"subagent_id"`
			Status string
			Answer string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Success || len(got.Results) != 2 || got.Results[0].Answer != "done: one" || got.Results[1].ID != "agent1_sub1" {
		t.Fatalf("results = %+v", got)
	}
	if spent < 0.0199 || spent > 0.0201 {
		t.Errorf("spent %v, want both subagents' 0.02", spent)
	}
	if n := len(rec.finished()); n != 2 {
		t.Errorf("%d subagent_finished events, want 2", n)
	}
}

func TestSpawn_RefusesWhatIsOverTheCaps(t *testing.T) {
	nested := settings()
	nested.Depth = MaxDepth
	noBG := settings()
	noBG.Background = false
	cases := []struct {
		name string
		set  Settings
		args string
		want string
	}{
		{"nesting", nested, `{"tasks":[{"task":"a"}]}`, "cannot spawn subagents"},
		{"fan-out", settings(), `{"tasks":[{"task":"a"},{"task":"b"},{"task":"c"},{"task":"d"}]}`, "at most 3 per call"},
		{"empty task", settings(), `{"tasks":[{"task":"  "}]}`, "task is missing"},
		{"unknown type", settings(), `{"tasks":[{"task":"a","subagent_type":"round_evaluator"}]}`, "is not offered"},
		{"paths without a workspace", settings(), `{"tasks":[{"task":"a","context_paths":["./"]}]}`, "no workspace"},
		{"context_files", settings(), `{"tasks":[{"task":"a","context_files":["x"]}]}`, "context_files is not supported"},
		{"background off", noBG, `{"tasks":[{"task":"a"}],"background":true}`, "turned off"},
		{"not json", settings(), `tasks`, "invalid arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ran := false
			m := NewManager(c.set, func(ctx context.Context, r Request) Outcome { ran = true; return Outcome{} }, func(event.Payload) {})
			defer m.Close()
			out, isErr, _ := call(t, m, c.args)
			if !isErr || !strings.Contains(out, c.want) || ran {
				t.Fatalf("got %q (error %v, ran %v), want an error containing %q", out, isErr, ran, c.want)
			}
		})
	}
}

// A model-chosen id names a folder: it cannot climb out of the subagents folder.
func TestSpawn_IDsAreSafeAndUnique(t *testing.T) {
	m := NewManager(settings(), answering, func(event.Payload) {}, "x")
	defer m.Close()
	for _, c := range []struct{ want, got string }{{"../../etc", "etc"}, {"x", "x_2"}, {"x", "x_3"}, {"", "a_sub1"}, {"..", "a_sub2"}} {
		if id := m.reserve("a", c.want); id != c.got {
			t.Errorf("reserve(%q) = %q, want %q", c.want, id, c.got)
		}
	}
}

func TestSpawn_TimeoutIsAClearError(t *testing.T) {
	defer goleak.VerifyNone(t)
	set := settings()
	set.Timeout = 50 * time.Millisecond
	rec := &recorder{}
	hang := func(ctx context.Context, r Request) Outcome { <-ctx.Done(); return Outcome{Err: ctx.Err()} }
	m := NewManager(set, hang, rec.publish)
	defer m.Close()
	start := time.Now()
	out, isErr, _ := call(t, m, `{"tasks":[{"task":"a"}]}`)
	if !isErr || !strings.Contains(out, `"status": "timeout"`) || !strings.Contains(out, "time ran out") {
		t.Fatalf("got %s", out)
	}
	if d := time.Since(start); d > hardGrace+5*time.Second {
		t.Errorf("took %v", d)
	}
	if f := rec.finished(); len(f) != 1 || f[0].Status != event.SubagentTimeout {
		t.Errorf("finished = %+v", f)
	}
}

// The parent's spending and its subagents' share one max_cost_usd: once they spend it
// together, every running subagent is stopped.
func TestSpawn_BudgetStopsSubagents(t *testing.T) {
	defer goleak.VerifyNone(t)
	set := settings()
	set.MaxCostUSD = 1
	var gotMax float64
	spend := func(ctx context.Context, r Request) Outcome {
		gotMax = r.MaxCostUSD
		r.OnCost(0.3, false) // with the parent's 0.8 the budget is spent
		<-ctx.Done()
		return Outcome{Answer: "partial", CostUSD: 0.3}
	}
	m := NewManager(set, spend, func(event.Payload) {})
	defer m.Close()
	m.Handle(event.Event{Payload: event.UsageReported{Agent: "agent1", CostUSD: 0.8}})
	out, _, spent := call(t, m, `{"tasks":[{"task":"a"}]}`)
	if !strings.Contains(out, `"status": "budget"`) || spent != 0.3 {
		t.Fatalf("got %s, spent %v", out, spent)
	}
	if gotMax < 0.19 || gotMax > 0.21 {
		t.Errorf("the subagent's budget was %v, want what the parent left, 0.2", gotMax)
	}
	m.Handle(event.Event{Payload: event.UsageReported{Agent: "agent1", CostUSD: 0.3}})
	if out, isErr, _ := call(t, m, `{"tasks":[{"task":"b"}]}`); !isErr || !strings.Contains(out, "max_cost_usd is spent") {
		t.Errorf("a spawn after the budget: %s", out)
	}
}

// A background subagent's result and cost reach its agent through the inbox; one still
// running when coordination ends is cancelled by Finish.
func TestSpawn_BackgroundReportsBack(t *testing.T) {
	defer goleak.VerifyNone(t)
	release := make(chan struct{})
	run := func(ctx context.Context, r Request) Outcome {
		if r.ID == "slow" {
			<-ctx.Done()
			return Outcome{Err: ctx.Err(), CostUSD: 0.05}
		}
		<-release
		return answering(ctx, r)
	}
	rec := &recorder{}
	m := NewManager(settings(), run, rec.publish)
	defer m.Close()
	out, isErr, _ := call(t, m, `{"tasks":[{"task":"a","subagent_id":"quick"},{"task":"b","subagent_id":"slow"}],"background":true}`)
	if isErr || !strings.Contains(out, `"mode":"background"`) {
		t.Fatalf("got %s", out)
	}
	inbox := m.Inbox("agent1")
	if text, _ := inbox(); text != "" {
		t.Fatalf("inbox before any result: %q", text)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	var text string
	var spent float64
	for text == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		tx, u := inbox()
		text, spent = tx, u.CostUSD
	}
	if !strings.Contains(text, "Background subagent quick finished") || !strings.Contains(text, "done: quick") || spent != 0.01 {
		t.Fatalf("inbox = %q, spent %v", text, spent)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if u := m.Finish(ctx, "agent1"); u.CostUSD != 0.05 {
		t.Errorf("Finish billed %v, want the cancelled subagent's 0.05", u.CostUSD)
	}
	if f := rec.finished(); len(f) != 2 || f[1].Status != event.SubagentCancelled {
		t.Errorf("finished = %+v", f)
	}
}

// Close ends the subagents still running, and nothing of theirs outlives it.
func TestClose_CancelsRunningSubagents(t *testing.T) {
	defer goleak.VerifyNone(t)
	started := make(chan struct{}, 1)
	m := NewManager(settings(), func(ctx context.Context, r Request) Outcome {
		started <- struct{}{}
		<-ctx.Done()
		return Outcome{Err: ctx.Err()}
	}, func(event.Payload) {})
	if _, isErr, _ := call(t, m, `{"tasks":[{"task":"a"}],"background":true}`); isErr {
		t.Fatal("spawn failed")
	}
	<-started
	m.Close()
}

// A session whose logs move after it (on Temporal, to the starter's log folder) names them
// where they will be, in its events and in the results the model reads; paths outside the
// log root stay as they are.
func TestSpawn_LogsNamedWhereTheyAreShown(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name, shown, want string
	}{
		{"shown elsewhere", "/starter/log/subagents", "/starter/log/subagents/one/turn_1"},
		{"where written", "", "one/turn_1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			set := settings()
			set.LogRoot, set.ShownLogRoot = t.TempDir(), tc.shown
			if tc.shown == "" {
				tc.want = filepath.Join(set.LogRoot, tc.want)
			}
			m := NewManager(set, func(ctx context.Context, r Request) Outcome {
				return Outcome{Answer: "ok", LogDir: r.LogRoot + "/" + r.ID + "/turn_1", Workspace: "/elsewhere/ws"}
			}, rec.publish)
			defer m.Close()
			out, isErr, _ := call(t, m, `{"tasks":[{"task":"a","subagent_id":"one"}]}`)
			if isErr || !strings.Contains(out, `"log_dir": "`+tc.want+`"`) || !strings.Contains(out, `"workspace": "/elsewhere/ws"`) {
				t.Fatalf("result names the log %s? %s", tc.want, out)
			}
			var started string
			for _, p := range rec.evs {
				if s, ok := p.(event.SubagentStarted); ok {
					started = s.LogDir
				}
			}
			if f := rec.finished(); started != tc.want || len(f) != 1 || f[0].LogDir != tc.want {
				t.Errorf("events name %q and %+v, want %s", started, f, tc.want)
			}
		})
	}
}
