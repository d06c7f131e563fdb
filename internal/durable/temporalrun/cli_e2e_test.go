package temporalrun

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"massgen/internal/childproc/proctest"

	"massgen/internal/app"
	"massgen/internal/cliagent/clitest"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
)

// cliKeys are the API keys the CLI agents' fake APIs take. On Temporal only the worker
// has them, in its environment; they must never reach the starter's log.
var cliKeys = map[string]string{
	"ANTHROPIC_API_KEY": "sk-ant-worker-SECRET-7777",
	"OPENAI_API_KEY":    "sk-worker-openai-SECRET-8888",
}

// cliAgent is one coding-agent CLI agent of a test team, on a fake API of its own.
type cliAgent struct {
	id, typ, bin, model string
	api                 func(*clitest.Brain) http.Handler
	tools               clitest.Tools
	baseSuffix          string
	script              clitest.Script
	backend             string // more backend keys, as flow-style YAML after the others
}

var (
	claudeAgent = cliAgent{id: "claude", typ: "claude_code", bin: "claude", model: "claude-sonnet-4-5", api: clitest.Anthropic,
		tools: clitest.ClaudeTools, script: clitest.Script{File: "claude.py", Content: "print('claude')"}}
	codexAgent = cliAgent{id: "codex", typ: "codex", bin: "codex", model: "gpt-5.4", api: clitest.Responses,
		tools: clitest.CodexTools, baseSuffix: "/v1", script: clitest.Script{File: "codex.py", Content: "print('codex')"}}
)

// cliPath puts the npm CLIs on this process's PATH (a local run finds them there) and returns
// that PATH for worker processes; a CLI that is not installed skips the test.
func cliPath(t *testing.T, agents ...cliAgent) string {
	t.Helper()
	dir := ""
	for _, a := range agents {
		bin := clitest.Bin(a.bin)
		if bin == "" {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: .ci/run installs it into .ci/npm", a.bin)
			}
			t.Skipf("%s is not installed (.ci/run installs it into .ci/npm)", a.bin)
		}
		dir = filepath.Dir(bin)
	}
	path := dir + string(os.PathListSeparator) + os.Getenv("PATH")
	t.Setenv("PATH", path)
	return path
}

// cliTeam starts a fake API per agent and returns the team's config, its fake models, and the
// APIs' base URLs (a worker must be allowed to send keys there). extra is YAML for more agents.
func cliTeam(t *testing.T, agents []cliAgent, extra string) (*config.Config, map[string]*clitest.Brain, []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("agents:\n")
	brains := map[string]*clitest.Brain{}
	var urls []string
	for _, a := range agents {
		brain := &clitest.Brain{Script: a.script, Tools: a.tools}
		brains[a.id] = brain
		srv := httptest.NewServer(a.api(brain))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+a.baseSuffix)
		fmt.Fprintf(&b, "  - id: %s\n    backend: {type: %s, model: %s, base_url: %q%s}\n", a.id, a.typ, a.model, srv.URL+a.baseSuffix, a.backend)
	}
	b.WriteString(extra)
	b.WriteString("timeout_settings: {agent_timeout_seconds: 120, orchestrator_timeout_seconds: 300}\n")
	return loadTeam(t, b.String()), brains, urls
}

// cliWorker starts a worker process that trusts its sessions, has the CLIs on its PATH, the
// API keys in its environment and leave to send them to the fake APIs at allow. stop sends
// it sig and waits for it to end.
func cliWorker(t *testing.T, addr, queue, workspaces, store, path string, allow []string) (stop func(sig syscall.Signal), stderr *strings.Builder) {
	t.Helper()
	stderr = &strings.Builder{}
	env := []string{workerEnv + "_WORKSPACES=" + workspaces, workerEnv + "_STORE=" + store, workerEnv + "_TRUST=1",
		"PATH=" + path, durable.AllowBaseURLEnv + "=" + strings.Join(allow, " ")}
	for k, v := range cliKeys {
		env = append(env, k+"="+v)
	}
	p := workerProcessOut(t, stderr, addr, queue, env...)
	var once sync.Once
	return func(sig syscall.Signal) {
		once.Do(func() {
			_ = p.Process.Signal(sig)
			_ = p.Wait()
		})
	}, stderr
}

// TestSession_CLIAgentsOnAWorker: a team of Claude Code and Codex, the real CLIs against
// local fakes of their APIs, runs on a worker process that holds the keys; Claude Code also
// gets the user's MCP server in its own MCP config, on the worker. The session ends with the
// local run's winner, the winner's CLI's file is in final/<winner>/workspace, nothing the CLIs
// ran is left on the worker once the session is released (processes, workspaces, the CLIs'
// homes), and no key from the worker's environment is in the starter's log.
func TestSession_CLIAgentsOnAWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server, a worker and the real coding-agent CLIs: about 30 s")
	}
	tag := fmt.Sprintf("MASSGEN_TEST_TAG_%d_cli", os.Getpid())
	claude := claudeAgent
	claude.script.MCPTool = "echo"
	claude.backend = fmt.Sprintf(", mcp_servers: [{name: everything, type: stdio, command: %q, args: [stdio], env: {%s: \"1\"}}]",
		everythingServer(t), tag)
	agents := []cliAgent{claude, codexAgent}
	path := cliPath(t, agents...)
	addr := devServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	cfg, _, _ := cliTeam(t, agents, "")
	local, err := app.Run(ctx, cfg, app.Options{Question: "Write a hello-world program.", Logging: true, LogRoot: t.TempDir(),
		WorkspaceRoot: clitest.StateDir(t), Getenv: func(k string) string { return cliKeys[k] }})
	if err != nil || local.ExitCode != 0 || local.Winner == "" {
		t.Fatalf("local run: %+v, %v", local.Result, err)
	}

	cfg, brains, urls := cliTeam(t, agents, "")
	store := filepath.Join(t.TempDir(), "store")
	wsRoot := clitest.StateDir(t) // Codex refuses its state under /tmp
	target := durable.Target{Address: addr, Queue: "cli-test", Heartbeat: 2 * time.Second, Store: store}
	c, err := Dial(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, wErr := cliWorker(t, addr, target.Queue, wsRoot, store, path, urls)
	// While the CLIs wait on their new_answer calls, they run in the worker's workspaces:
	// the check that none is left afterwards looks where they were.
	var mu sync.Mutex
	ran := map[string]bool{}
	watch := event.SinkFunc(func(e event.Event) {
		if a, ok := e.Payload.(event.AnswerSubmitted); ok && !e.Preview && len(processesUnder(t, wsRoot)) > 0 {
			mu.Lock()
			ran[a.Agent] = true
			mu.Unlock()
		}
	})
	remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		o.Bus.Subscribe(watch)
		return Run(ctx, c, target, cfg, o)
	}
	res, err := app.Run(ctx, cfg, app.Options{Question: "Write a hello-world program.", Logging: true, LogRoot: t.TempDir(),
		Remote: remote, Getenv: func(string) string { return "" }})
	if err != nil || res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("remote run: %+v, %v\nworker: %s", res.Result, err, wErr)
	}
	if res.Winner != local.Winner {
		t.Errorf("winner on Temporal %q, locally %q", res.Winner, local.Winner)
	}
	for id, b := range brains {
		if b.Requests() == 0 {
			t.Errorf("%s's CLI never reached its model", id)
		}
	}
	if !brains["claude"].MCPCalled() {
		t.Error("Claude Code on the worker did not offer the user's MCP server's echo tool")
	}
	want := map[string]clitest.Script{claude.id: claude.script, codexAgent.id: codexAgent.script}[res.Winner]
	got := workspaceFiles(t, filepath.Join(res.Dir, "final", res.Winner, "workspace"))
	if strings.TrimSpace(got[want.File]) != want.Content {
		t.Errorf("final/%s/workspace = %v, want %s with %q", res.Winner, got, want.File, want.Content)
	}
	// Each agent's turns continued its CLI's session, as locally: a new one starts only with a
	// call that sends the conversation anew (its first, or after a failed turn, which a loaded
	// machine may cause in either run).
	for where, dir := range map[string]string{"locally": local.Dir, "on Temporal": res.Dir} {
		if bad := cliSessions(t, dir); bad != "" {
			t.Errorf("%s: %s", where, bad)
		}
	}
	// What the CLIs spent on the worker is counted in the starter's status.json, as locally.
	var status struct {
		Agents map[string]struct {
			Usage struct {
				Input  int64   `json:"input_tokens"`
				Output int64   `json:"output_tokens"`
				Cost   float64 `json:"cost_usd"`
			} `json:"usage"`
			Session string `json:"cli_session_id"`
		} `json:"agents"`
	}
	if raw, err := os.ReadFile(filepath.Join(res.Dir, "status.json")); err != nil || json.Unmarshal(raw, &status) != nil {
		t.Fatalf("status.json: %v", err)
	}
	for _, a := range agents {
		if st := status.Agents[a.id]; st.Usage.Input == 0 || st.Usage.Output == 0 || st.Session == "" {
			t.Errorf("%s in status.json: %+v, want its usage and CLI session", a.id, st)
		}
	}
	if cost := status.Agents["claude"].Usage.Cost; cost <= 0 {
		t.Errorf("claude's cost in status.json = %v, want Claude Code's total_cost_usd", cost)
	}
	noKeyInLog(t, res.Dir)
	mu.Lock()
	if len(ran) == 0 {
		t.Error("no CLI process was seen in the worker's workspaces while the session ran")
	}
	mu.Unlock()
	noProcessesUnder(t, wsRoot)
	if pids := proctest.WithEnv(t, tag+"=1"); len(pids) > 0 {
		t.Errorf("MCP server processes left running: %v", pids)
	}
	if left, _ := os.ReadDir(wsRoot); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("the worker keeps %v in its workspaces after the session was released", names)
	}
}

// TestSession_CLIAgentMovesToAnotherWorker: worker A, holding a Claude Code agent's CLI
// session, is killed (SIGKILL: it dies) or stopped (SIGTERM: it drops its sessions) once the
// agent has answered. Worker B takes the session over from the agent's snapshot. The CLI's own
// session (what --resume continues) ended with A, so on B the CLI starts a new one from the
// whole conversation, and the session ends with its winner and files as usual, and no CLI
// process left on either worker.
func TestSession_CLIAgentMovesToAnotherWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server, worker processes and the real Claude Code CLI: about 30 s")
	}
	path := cliPath(t, claudeAgent)
	addr := devServer(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { cliMove(t, addr, path, sig) })
	}
}

func cliMove(t *testing.T, addr, path string, sig syscall.Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg, brains, urls := cliTeam(t, []cliAgent{claudeAgent}, `  - id: reviewer
    backend: {type: scripted, latency: 4s, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`)
	root := clitest.StateDir(t)
	store := filepath.Join(root, "store")
	target := durable.Target{Address: addr, Queue: "cli-move-" + strings.ToLower(sig.String()), Heartbeat: 2 * time.Second, Store: store}
	c, err := Dial(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wsA, wsB := filepath.Join(root, "ws-a"), filepath.Join(root, "ws-b")
	stopA, aErr := cliWorker(t, addr, target.Queue, wsA, store, path, urls)

	var once sync.Once
	var bErr *strings.Builder
	watch := event.SinkFunc(func(e event.Event) {
		if a, ok := e.Payload.(event.AnswerSubmitted); ok && a.Agent == "claude" && !e.Preview {
			once.Do(func() {
				stopA(sig)
				_, bErr = cliWorker(t, addr, target.Queue, wsB, store, path, urls)
			})
		}
	})
	remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		o.Bus.Subscribe(watch)
		return Run(ctx, c, target, cfg, o)
	}
	res, err := app.Run(ctx, cfg, app.Options{Question: "Write a hello-world program.", Logging: true, LogRoot: filepath.Join(root, "logs"),
		Remote: remote, Getenv: func(string) string { return "" }})
	if err != nil || res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("remote run: %+v, %v\nworker A: %s\nworker B: %v", res.Result, err, aErr, bErr)
	}
	if bErr == nil {
		t.Fatal("worker A was never stopped")
	}
	if res.Winner != "claude" {
		t.Errorf("winner %q, want claude (both vote for it)", res.Winner)
	}
	got := workspaceFiles(t, filepath.Join(res.Dir, "final", res.Winner, "workspace"))
	if s := claudeAgent.script; strings.TrimSpace(got[s.File]) != s.Content {
		t.Errorf("final/claude/workspace = %v, want %s with %q", got, s.File, s.Content)
	}
	if brains["claude"].Requests() == 0 {
		t.Error("the CLI never reached its model")
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	sessions := map[string]bool{}
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ToolServerStatus:
			moved = moved || p.Status == "moved" && strings.Contains(p.Detail, "claude")
		case event.AgentSession:
			if p.Agent == "claude" {
				sessions[p.SessionID] = true
			}
		}
	}
	if !moved {
		t.Error("no event says the session moved with claude's workspace restored")
	}
	// One CLI session on A, a new one on B.
	if len(sessions) < 2 {
		t.Errorf("claude's CLI sessions %v: want a new one after the move", sessions)
	}
	noKeyInLog(t, res.Dir)
	noProcessesUnder(t, wsA)
	noProcessesUnder(t, wsB)
}

// cliSessions counts, per agent of the log in dir, the CLI sessions it ran in.
func cliSessions(t *testing.T, dir string) string {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sessions, fresh := map[string]map[string]bool{}, map[string]int{}
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.AgentSession:
			if sessions[p.Agent] == nil {
				sessions[p.Agent] = map[string]bool{}
			}
			sessions[p.Agent][p.SessionID] = true
		case event.ModelCalled:
			if p.Fresh {
				fresh[p.Agent]++
			}
		}
	}
	if len(sessions) == 0 {
		return "no CLI session started"
	}
	var bad []string
	for _, a := range slices.Sorted(maps.Keys(sessions)) {
		if n := len(sessions[a]); n > fresh[a] {
			bad = append(bad, fmt.Sprintf("%s started %d CLI sessions in %d calls that began a conversation", a, n, fresh[a]))
		}
	}
	return strings.Join(bad, "; ")
}

// noKeyInLog fails when a worker's key is in the starter's log folder.
func noKeyInLog(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"events.jsonl", "status.json", "massgen.log"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for k, v := range cliKeys {
			if strings.Contains(string(b), v) {
				t.Errorf("%s holds the worker's %s", name, k)
			}
		}
	}
}

// noProcessesUnder fails when a process works in dir (a CLI or anything it started), after
// a few seconds for those being stopped.
func noProcessesUnder(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	left := processesUnder(t, dir)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		left = processesUnder(t, dir)
	}
	if len(left) > 0 {
		t.Errorf("processes left running under %s: %v", dir, left)
	}
}

// processesUnder lists the processes whose working directory is under dir.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, real+string(os.PathSeparator)) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}
