package app

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/runlog"
	"massgen/internal/usage"
)

// collect is a sink that keeps every event.
type collect struct {
	mu  sync.Mutex
	evs []event.Event
}

func (c *collect) Handle(e event.Event) { c.mu.Lock(); c.evs = append(c.evs, e); c.mu.Unlock() }

func (c *collect) toolResults(name string) []event.ToolResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []event.ToolResult
	for _, e := range c.evs {
		if r, ok := e.Payload.(event.ToolResult); ok && r.Tool == name {
			out = append(out, r)
		}
	}
	return out
}

func mustParse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, rep := config.Parse("team.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return cfg
}

// A scripted agent spawns two subagents; it gets both answers as the tool's result, each
// subagent has its own finished log folder under the parent's, and a subagent's own attempt
// to spawn (the same script) is refused: subagents do not nest.
func TestE2E_SubagentsScripted(t *testing.T) {
	cfg := mustParse(t, `
agents:
  - id: lead
    backend:
      type: scripted
      answers: [The plan is ready.]
      tool_calls:
        - {name: spawn_subagents, args: {tasks: [{task: Count the moons of Mars, subagent_id: moons}, {task: Name the planets, subagent_type: explorer}], context: A space quiz}}
orchestrator:
  coordination: {enable_subagents: true}
`)
	root := t.TempDir()
	sink := &collect{}
	res, err := Run(t.Context(), cfg, Options{Question: "Make a quiz", Logging: true, LogRoot: root, WorkspaceRoot: t.TempDir(),
		Sinks: []event.Sink{sink}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v, exit %d, %v", err, res.ExitCode, res.Err)
	}
	rs := sink.toolResults("spawn_subagents")
	if len(rs) != 1 || rs[0].IsError {
		t.Fatalf("spawn_subagents results: %+v", rs)
	}
	var got struct {
		Success bool
		Results []struct {
			ID     string `json:"subagent_id"`
			Status string
			Answer string
			LogDir string `json:"log_dir"`
		}
	}
	if err := json.Unmarshal([]byte(rs[0].Content), &got); err != nil {
		t.Fatalf("%v: %s", err, rs[0].Content)
	}
	if !got.Success || len(got.Results) != 2 {
		t.Fatalf("result: %s", rs[0].Content)
	}
	for k, want := range []string{"moons", "lead_sub1"} {
		r := got.Results[k]
		dir := filepath.Join(res.Dir, "subagents", want, "turn_1")
		if r.ID != want || r.Status != "completed" || r.Answer != "The plan is ready." || r.LogDir != dir {
			t.Errorf("result %d = %+v, want %s completed in %s", k, r, want, dir)
		}
		evs, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(evs), `"session_ended"`) || !strings.Contains(string(evs), `unknown tool \"spawn_subagents\"`) {
			t.Errorf("subagent %s's log lacks its end or the refused nested spawn:\n%.2000s", want, evs)
		}
	}
	parent, _ := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if strings.Count(string(parent), `"subagent_started"`) != 2 || strings.Count(string(parent), `"subagent_finished"`) != 2 {
		t.Errorf("the parent's log lacks the subagents' start and end")
	}
}

// spawnPlayer plays a lead on the OpenAI wire: while it has spawn_subagents and no result of
// it and before its answer, it spawns; the subagents' team (asked "Your task:") answers.
func spawnPlayer(args string) player {
	return func(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
		raw, _ := json.Marshal(body)
		spawned := strings.Contains(string(raw), `"function_call_output"`) || answered ||
			strings.Contains(string(raw), "Your own current answer is the one labelled")
		for _, o := range offered {
			if o == "spawn_subagents" && !spawned {
				return move{tool: "spawn_subagents", args: args}
			}
		}
		if strings.Contains(string(raw), "Your task:") {
			answer = "CHILD ANSWER"
		}
		return decide(answer, offered, enum, answered, body)
	}
}

// On a fake of OpenAI's Responses API, through the official SDK: the parent's cost is every
// call the server billed, its own and its two subagents' teams'.
func TestE2E_SubagentsOpenAIWire(t *testing.T) {
	fake := newFake(t, nil, openaiResponsesAs("LEAD ANSWER", spawnPlayer(`{"tasks":[{"task":"a"},{"task":"b"}]}`)))
	cfg := mustParse(t, fmt.Sprintf(`
agents:
  - {id: lead, backend: {type: openai, model: gpt-5-mini, base_url: %q}}
orchestrator:
  coordination: {enable_subagents: true, subagent_default_timeout: 60}
timeout_settings: {agent_timeout_seconds: 30}
`, fake.URL+"/v1"))
	sink := &collect{}
	res, err := Run(t.Context(), cfg, Options{Question: "Q?", Logging: true, LogRoot: t.TempDir(), WorkspaceRoot: t.TempDir(),
		Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-local"}), Sinks: []event.Sink{sink}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v, exit %d, %v", err, res.ExitCode, res.Err)
	}
	rs := sink.toolResults("spawn_subagents")
	if len(rs) != 1 || strings.Count(rs[0].Content, "CHILD ANSWER") != 2 {
		t.Fatalf("spawn_subagents results: %+v", rs)
	}
	perCall := usage.Cost("openai", "gpt-5-mini", provider.Usage{InputTokens: usageIn, OutputTokens: usageOut})
	billed := float64(fake.billed.Load())
	if want := billed * perCall; math.Abs(res.CostUSD-want) > 1e-9 || billed < 6 {
		t.Fatalf("cost %v, want %v (%v calls billed, parent and subagents)", res.CostUSD, want, billed)
	}
}

// hangingChildren makes every call of a subagent's team (asked "Your task:") hang until
// cancelled; the lead is scripted.
func hangingChildren(t *testing.T) func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
	return func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
		p, err := NewProvider(b, key, keyEnv)
		return hangChild{p}, err
	}
}

type hangChild struct{ p provider.Provider }

func (h hangChild) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	raw, _ := json.Marshal(req.Messages)
	if !strings.Contains(string(raw), "Your task:") {
		return h.p.Stream(ctx, req)
	}
	return func(yield func(provider.Chunk, error) bool) {
		<-ctx.Done()
		yield(nil, ctx.Err())
	}
}

const hangingLead = `
agents:
  - id: lead
    backend:
      type: scripted
      answers: [Done without help.]
      tool_calls:
        - {name: spawn_subagents, args: {tasks: [{task: never ends, subagent_id: stuck}]}}
orchestrator:
  coordination: {enable_subagents: true, subagent_default_timeout: 1, subagent_min_timeout: 1}
`

// A subagent that never answers hits its timeout: the lead gets a clear tool error, the
// subagent's session is finished in its log, and the lead's session goes on to its answer.
func TestE2E_SubagentTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sink := &collect{}
	start := time.Now()
	res, err := Run(t.Context(), mustParse(t, hangingLead), Options{Question: "Q", Logging: true, LogRoot: t.TempDir(),
		WorkspaceRoot: t.TempDir(), NewProvider: hangingChildren(t), Sinks: []event.Sink{sink}})
	if err != nil || res.ExitCode != 0 || res.FinalAnswer != "Done without help." {
		t.Fatalf("run: %v, exit %d, %v, %q", err, res.ExitCode, res.Err, res.FinalAnswer)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
	rs := sink.toolResults("spawn_subagents")
	if len(rs) != 1 || !rs[0].IsError || !strings.Contains(rs[0].Content, `"status": "timeout"`) || !strings.Contains(rs[0].Content, "time ran out") {
		t.Fatalf("spawn_subagents results: %+v", rs)
	}
	evs, _ := os.ReadFile(filepath.Join(res.Dir, "subagents", "stuck", "turn_1", "events.jsonl"))
	if !strings.Contains(string(evs), `"session_ended"`) {
		t.Errorf("the subagent's log is not finished:\n%.1500s", evs)
	}
}

// Cancelling the lead's session cancels its subagents: Run returns, and nothing is left.
func TestE2E_SubagentsCancelledWithParent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := mustParse(t, strings.Replace(hangingLead, "subagent_default_timeout: 1, subagent_min_timeout: 1", "subagent_default_timeout: 600", 1))
	ctx, cancel := context.WithCancel(t.Context())
	sink := event.SinkFunc(func(e event.Event) {
		if _, ok := e.Payload.(event.SubagentStarted); ok {
			time.AfterFunc(100*time.Millisecond, cancel)
		}
	})
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(ctx, cfg, Options{Question: "Q", Logging: true, LogRoot: t.TempDir(), WorkspaceRoot: t.TempDir(),
			NewProvider: hangingChildren(t), Sinks: []event.Sink{sink}})
		done <- res
	}()
	select {
	case res := <-done:
		if res.ExitCode != ExitInterrupted {
			t.Errorf("exit %d, want %d", res.ExitCode, ExitInterrupted)
		}
		evs, _ := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
		if !strings.Contains(string(evs), `"status":"cancelled"`) {
			t.Errorf("no cancelled subagent in the lead's log")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

// A subagent that was running when the process died is reported lost on resume, so no view
// waits for it; one that finished is not.
func TestLostSubagents_ReportedOnResume(t *testing.T) {
	it := &runlog.Interrupted{Events: []event.Event{
		{Payload: event.SubagentStarted{Agent: "a", ID: "one", LogDir: "/l/one/turn_1"}},
		{Payload: event.SubagentStarted{Agent: "a", ID: "two", Background: true}},
		{Payload: event.SubagentFinished{Agent: "a", ID: "one", Status: event.SubagentCompleted}},
	}}
	got := lostSubagents(it)
	if len(got) != 1 {
		t.Fatalf("lost = %+v", got)
	}
	f, ok := got[0].(event.SubagentFinished)
	if !ok || f.ID != "two" || f.Status != event.SubagentLost || !f.Background {
		t.Fatalf("lost = %+v", got[0])
	}
	if ids := startedSubagents(it.Events); len(ids) != 2 {
		t.Errorf("reserved ids = %v", ids)
	}
}
