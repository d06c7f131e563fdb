package temporalrun

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
	"sync/atomic"
	"testing"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// centsPerCall is what pricedScripted bills each model call.
const centsPerCall = 0.01

// pricedScripted is the scripted backend with a price: every call costs centsPerCall, so
// that a session's cost counts its calls, its subagents' included.
func pricedScripted(b config.Backend, key, keyEnv string) (provider.Provider, error) {
	p, err := app.NewProvider(b, key, keyEnv)
	return priced{p}, err
}

type priced struct{ p provider.Provider }

func (p priced) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		for c, err := range p.p.Stream(ctx, req) {
			if u, ok := c.(provider.UsageChunk); ok {
				u.Usage.CostUSD = centsPerCall
				c = u
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// spawner's lead hands two tasks to subagents (teams of the same lead, whose own spawn is
// refused: subagents do not nest), then answers.
const spawner = `
agents:
  - id: lead
    backend:
      type: scripted
      tool_calls:
        - {name: spawn_subagents, args: {tasks: [{task: Count the moons of Mars, subagent_id: moons}, {task: Name the planets}], context: A space quiz}}
      answers: [The plan is ready.]
orchestrator:
  final_presentation: verbatim
  coordination: {enable_subagents: true}
`

// TestSession_SubagentsRunOnTheHolder: a scripted agent on Temporal calls spawn_subagents; the
// subagents run on the worker holding the session, their answers reach the agent's turn, and
// the session ends as the local run of the same config does: the same winner, answer and
// cost (every call priced, the subagents' counted once). Their log folders are in the
// starter's log folder where a local run leaves them, named there by the events, and nothing
// of them is left on the worker or in the store.
func TestSession_SubagentsRunOnTheHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	cfg := loadTeam(t, spawner)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	local, err := app.Run(ctx, cfg, app.Options{Question: "Make a quiz", Logging: true, LogRoot: filepath.Join(root, "local-logs"),
		WorkspaceRoot: filepath.Join(root, "local-ws"), NewProvider: pricedScripted})
	if err != nil || local.ExitCode != 0 {
		t.Fatalf("local run: %+v, %v", local.Result, err)
	}

	acts := &Activities{NewProvider: pricedScripted}
	target, c, wroot := heldSessions(t, "subagents-test", acts)
	res, err := app.Run(ctx, cfg, app.Options{Question: "Make a quiz", Logging: true, LogRoot: filepath.Join(root, "logs"), Remote: remoteOn(c, target)})
	if err != nil || res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("remote run: %+v, %v", res.Result, err)
	}
	if res.Winner != local.Winner || res.FinalAnswer != local.FinalAnswer {
		t.Errorf("on Temporal %s answered %q; locally %s answered %q", res.Winner, res.FinalAnswer, local.Winner, local.FinalAnswer)
	}

	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var own, children float64      // the parent's own calls; what its subagents spent
	started := map[string]string{} // log folder by subagent
	var result string
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ModelCalled:
			own += centsPerCall
		case event.SubagentStarted:
			started[p.ID] = p.LogDir
		case event.SubagentFinished:
			if p.Status != event.SubagentCompleted {
				t.Errorf("subagent %s: %s %s", p.ID, p.Status, p.Error)
			}
			children += p.CostUSD
		case event.ToolResult:
			if p.Tool == "spawn_subagents" {
				result = p.Content
			}
		}
	}
	if math.Abs(res.CostUSD-local.CostUSD) > 1e-9 || children < 2*centsPerCall || math.Abs(res.CostUSD-(own+children)) > 1e-9 {
		t.Errorf("cost on Temporal $%.2f, locally $%.2f; its own calls $%.2f and its subagents' $%.2f", res.CostUSD, local.CostUSD, own, children)
	}

	var got struct {
		Success bool
		Results []struct {
			ID     string `json:"subagent_id"`
			Answer string
			LogDir string `json:"log_dir"`
		}
	}
	if err := json.Unmarshal([]byte(result), &got); err != nil || !got.Success || len(got.Results) != 2 {
		t.Fatalf("spawn_subagents' result on Temporal: %v: %s", err, result)
	}
	if len(started) != 2 {
		t.Fatalf("%d subagent_started events, want 2", len(started))
	}
	for k, id := range []string{"moons", "lead_sub1"} {
		dir := filepath.Join(res.Dir, "subagents", id, "turn_1")
		r := got.Results[k]
		if r.ID != id || r.Answer != "The plan is ready." || r.LogDir != dir || started[id] != dir {
			t.Errorf("subagent %s: result %+v, started in %s; want its answer, and its log named %s", id, r, started[id], dir)
		}
		log, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		if err != nil || !strings.Contains(string(log), `"session_ended"`) || !strings.Contains(string(log), `unknown tool \"spawn_subagents\"`) {
			t.Errorf("subagent %s's log in the starter's log folder: %v\n%.1500s", id, err, log)
		}
	}
	// The lead has no workspace: the log has none for it, as a local run's has not.
	if _, err := os.Stat(filepath.Join(res.Dir, "final", "lead", "workspace")); !os.IsNotExist(err) {
		t.Errorf("the log has a workspace for the lead, which has none: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(wroot, "ws", "*")); len(left) != 0 {
		t.Errorf("the worker keeps %v after the session", left)
	}
	if entries, _ := os.ReadDir(target.Store); len(entries) != 0 {
		t.Errorf("the store keeps %d entries after the session", len(entries))
	}
}

// backgrounder's lead hands a task to a background subagent and answers without waiting.
const backgrounder = `
agents:
  - id: lead
    backend:
      type: scripted
      tool_calls:
        - {name: spawn_subagents, args: {tasks: [{task: Watch the sky, subagent_id: watcher}], background: true}}
      answers: [Started the watch.]
orchestrator:
  final_presentation: verbatim
  coordination: {enable_subagents: true}
`

// slowChild prices every call as pricedScripted does; a subagent's team (asked "Your task:")
// makes one call and then hangs until it is stopped, and the lead's calls after its answer
// wait until that call is paid: the subagent is still running, having spent one call, when
// coordination ends.
type slowChild struct {
	paid chan struct{}
	once sync.Once
}

func (s *slowChild) newProvider(b config.Backend, key, keyEnv string) (provider.Provider, error) {
	p, err := pricedScripted(b, key, keyEnv)
	return &slowCalls{s: s, p: p}, err
}

type slowCalls struct {
	s     *slowChild
	p     provider.Provider
	calls atomic.Int32
}

func (c *slowCalls) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	raw, _ := json.Marshal(req.Messages)
	child := strings.Contains(string(raw), "Your task:")
	n := c.calls.Add(1)
	return func(yield func(provider.Chunk, error) bool) {
		wait := c.s.paid
		if child && n > 1 {
			wait = nil // hangs until the subagent is stopped
		}
		if (child && n > 1) || (!child && n > 2) {
			select {
			case <-wait:
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
		}
		for ch, err := range c.p.Stream(ctx, req) {
			if !yield(ch, err) {
				return
			}
		}
		if child && n == 1 {
			c.s.once.Do(func() { close(c.s.paid) })
		}
	}
}

// TestSession_BackgroundSubagentBilledWhenCoordinationEnds: a background subagent still
// running when coordination ends is stopped on the holder, and what it spent is counted once
// in the session's cost, as locally.
func TestSession_BackgroundSubagentBilledWhenCoordinationEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	cfg := loadTeam(t, backgrounder)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	lc := &slowChild{paid: make(chan struct{})}
	local, err := app.Run(ctx, cfg, app.Options{Question: "Watch.", Logging: true, LogRoot: filepath.Join(root, "local-logs"),
		WorkspaceRoot: filepath.Join(root, "local-ws"), NewProvider: lc.newProvider})
	if err != nil || local.ExitCode != 0 {
		t.Fatalf("local run: %+v, %v", local.Result, err)
	}

	rc := &slowChild{paid: make(chan struct{})}
	target, c, _ := heldSessions(t, "background-subagents-test", &Activities{NewProvider: rc.newProvider})
	res, err := app.Run(ctx, cfg, app.Options{Question: "Watch.", Logging: true, LogRoot: filepath.Join(root, "logs"), Remote: remoteOn(c, target)})
	if err != nil || res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("remote run: %+v, %v", res.Result, err)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var own, child float64
	status := ""
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ModelCalled:
			own += centsPerCall
		case event.SubagentFinished:
			child, status = p.CostUSD, p.Status
		}
	}
	if status != event.SubagentCancelled || math.Abs(child-centsPerCall) > 1e-9 {
		t.Errorf("the subagent ended %q having spent $%.2f; want cancelled with coordination, after one call", status, child)
	}
	if math.Abs(res.CostUSD-local.CostUSD) > 1e-9 || math.Abs(res.CostUSD-(own+child)) > 1e-9 {
		t.Errorf("cost on Temporal $%.2f, locally $%.2f; its own calls $%.2f and its subagent's $%.2f", res.CostUSD, local.CostUSD, own, child)
	}
}

// TestSession_SubagentsShareTheBudget: max_cost_usd is shared by the session and its
// subagents on the holder as locally: what the agent's own calls spent before it spawned
// leaves the subagent less, and the session's cost and the subagent's end are the local run's.
func TestSession_SubagentsShareTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	one := strings.Replace(spawner, ", {task: Name the planets}", "", 1) // one subagent: its calls come one at a time
	cfg := loadTeam(t, strings.Replace(one, "  final_presentation: verbatim\n", "  final_presentation: verbatim\n  max_cost_usd: 0.025\n", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	local, err := app.Run(ctx, cfg, app.Options{Question: "Make a quiz", Logging: true, LogRoot: filepath.Join(root, "local-logs"),
		WorkspaceRoot: filepath.Join(root, "local-ws"), NewProvider: pricedScripted})
	if err != nil {
		t.Fatalf("local run: %v", err)
	}
	target, c, _ := heldSessions(t, "budget-subagents-test", &Activities{NewProvider: pricedScripted})
	res, err := app.Run(ctx, cfg, app.Options{Question: "Make a quiz", Logging: true, LogRoot: filepath.Join(root, "logs"), Remote: remoteOn(c, target)})
	if err != nil {
		t.Fatalf("remote run: %v", err)
	}
	ends := func(dir string) (out []string) {
		evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if f, ok := e.Payload.(event.SubagentFinished); ok {
				out = append(out, fmt.Sprintf("%s %s $%.2f", f.ID, f.Status, f.CostUSD))
			}
		}
		return out
	}
	want, got := ends(local.Dir), ends(res.Dir)
	if len(want) != 1 || fmt.Sprint(got) != fmt.Sprint(want) || math.Abs(res.CostUSD-local.CostUSD) > 1e-9 || res.EndReason != local.EndReason {
		t.Errorf("on Temporal: %v, $%.2f, ended %q; locally: %v, $%.2f, ended %q", got, res.CostUSD, res.EndReason, want, local.CostUSD, local.EndReason)
	}
}
