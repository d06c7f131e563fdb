package temporalrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/childproc"
	"massgen/internal/childproc/proctest"

	"go.temporal.io/sdk/client"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// everythingServer is the reference MCP server that .ci/run installs from npm.
func everythingServer(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../.ci/npm/node_modules/.bin/mcp-server-everything")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: .ci/run installs it with npm", p)
		}
		t.Skipf("%s is not installed (npm install --prefix .ci/npm @modelcontextprotocol/server-everything)", p)
	}
	return p
}

// heldWorker starts a worker process (workerProcessOut) that trusts its sessions, with its own
// workspaces folder and the shared store; kill SIGKILLs it.
func heldWorker(t *testing.T, addr, queue, workspaces, store string) (kill func(), stderr *strings.Builder) {
	t.Helper()
	stderr = &strings.Builder{}
	p := workerProcessOut(t, stderr, addr, queue, workerEnv+"_WORKSPACES="+workspaces, workerEnv+"_STORE="+store, workerEnv+"_TRUST=1")
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = p.Process.Kill()
			_ = p.Wait()
		})
	}, stderr
}

// toolTeam: the builder calls a real MCP server, writes its result into its workspace and
// runs a shell command there in the bubblewrap sandbox, then answers; the reviewer answers slowly. Both vote for the
// builder.
func toolTeam(server, tag string) string {
	return fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      latency: 200ms
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: srt
      mcp_servers:
        - {name: everything, command: %q, env: {%s: "1"}}
      exclude_tools: [trigger-long-running-operation]
      tool_calls:
        - {name: mcp__everything__echo, args: {message: "hello from massgen"}}
        - {name: write_file, args: {path: result.txt, content: "{{result}}"}}
        - {name: execute_command, args: {command: "echo built > built.txt"}}
      answers: ["I saved what the echo tool returned to result.txt and built built.txt."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, latency: 4s, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`, server, tag)
}

// TestSession_ToolsMoveToAnotherWorker: a session with file tools, a shell command and an MCP
// server runs on worker A, which holds its workspace and server; A is killed (SIGKILL) once
// the builder has answered, while the reviewer's turn runs there. Worker B takes the session
// over from the builder's snapshot in the store; the session ends with the local run's winner
// and workspace in the log folder, and no MCP server process is left.
func TestSession_ToolsMoveToAnotherWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server, two workers and an MCP server: about 20 s")
	}
	server := everythingServer(t)
	proctest.NeedBwrap(t)
	if ok, why := childproc.Confinement(); !ok {
		t.Skip("no sandbox without user namespaces: " + why)
	}
	addr := devServer(t)
	tag := fmt.Sprintf("MASSGEN_TEST_TAG_%d_tools", os.Getpid())
	cfg := loadTeam(t, toolTeam(server, tag))
	root := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	local, err := app.Run(ctx, cfg, app.Options{Question: "Build it.", Logging: true, LogRoot: filepath.Join(root, "local-logs"),
		WorkspaceRoot: filepath.Join(root, "local-ws")})
	if err != nil || local.ExitCode != 0 || local.Winner != "builder" {
		t.Fatalf("local run: %+v, %v", local.Result, err)
	}
	want := workspaceFiles(t, filepath.Join(local.Dir, "final", local.Winner, "workspace"))

	store := filepath.Join(root, "store")
	target := durable.Target{Address: addr, Queue: "tools-test", Heartbeat: 2 * time.Second, Store: store}
	c, err := Dial(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	killA, aErr := heldWorker(t, addr, target.Queue, filepath.Join(root, "ws-a"), store)

	// Once the builder's answer is in, A dies and B starts.
	var once sync.Once
	var bErr *strings.Builder
	watch := event.SinkFunc(func(e event.Event) {
		if a, ok := e.Payload.(event.AnswerSubmitted); ok && a.Agent == "builder" && !e.Preview {
			once.Do(func() {
				killA()
				_, bErr = heldWorker(t, addr, target.Queue, filepath.Join(root, "ws-b"), store)
			})
		}
	})
	remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		o.Bus.Subscribe(watch)
		return Run(ctx, c, target, cfg, o)
	}
	res, err := app.Run(ctx, cfg, app.Options{Question: "Build it.", Logging: true, LogRoot: filepath.Join(root, "logs"), Remote: remote})
	if err != nil || res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("remote run: %+v, %v\nworker A: %s\nworker B: %v", res.Result, err, aErr, bErr)
	}
	if bErr == nil {
		t.Fatal("worker A was never killed")
	}
	if res.Winner != local.Winner {
		t.Errorf("winner on Temporal %q, locally %q", res.Winner, local.Winner)
	}
	got := workspaceFiles(t, filepath.Join(res.Dir, "final", res.Winner, "workspace"))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("final workspace on Temporal %v, locally %v", got, want)
	}
	if !strings.Contains(got["result.txt"], "hello from massgen") || strings.TrimSpace(got["built.txt"]) != "built" {
		t.Errorf("final workspace %v lacks the tools' work", got)
	}

	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	var tools []string
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ToolServerStatus:
			if p.Status == "moved" && strings.Contains(p.Detail, "builder") {
				moved = true
			}
		case event.ToolResult:
			if p.IsError {
				t.Errorf("%s failed: %s", p.Tool, p.Content)
			}
			tools = append(tools, p.Tool)
		}
	}
	if !moved {
		t.Error("no event says the session moved with the builder's workspace restored")
	}
	if !strings.Contains(strings.Join(tools, ","), "mcp__everything__echo,write_file,execute_command") {
		t.Errorf("tool results %v", tools)
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("the store keeps %d entries after the session ended", len(entries))
	}
	// SIGKILL of A ended its MCP server too (its supervisor saw A go); B's ended with the session.
	proctest.Eventually(5*time.Second, func() bool { return len(proctest.WithEnv(t, tag+"=1")) == 0 })
	if pids := proctest.WithEnv(t, tag+"=1"); len(pids) > 0 {
		t.Errorf("MCP server processes left running: %v", pids)
	}
}

// heldSessions connects to the dev server and runs an in-process worker on queue with acts,
// its workspaces and the store under root (a new folder, returned).
func heldSessions(t *testing.T, queue string, acts *Activities) (durable.Target, client.Client, string) {
	t.Helper()
	addr := devServer(t)
	root := t.TempDir()
	target := durable.Target{Address: addr, Queue: queue, Store: filepath.Join(root, "store")}
	c, err := Dial(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if acts.WorkspaceRoot == "" {
		acts.WorkspaceRoot = filepath.Join(root, "ws")
	}
	workerWith(t, c, target, acts)
	return target, c, root
}

// remoteOn is app.Options.Remote for sessions on target through c.
func remoteOn(c client.Client, target durable.Target) func(context.Context, *config.Config, engine.Options) engine.Result {
	return func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		return Run(ctx, c, target, cfg, o)
	}
}

// workspaceFiles maps each regular file under dir to its content.
func workspaceFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	return out
}

// TestSession_NextTurnStartsFromTheWinnersWorkspace: the second turn of a conversation on
// Temporal starts its workspaces from the first turn's winner's, as locally: the builder reads
// the file it wrote in the first turn.
func TestSession_NextTurnStartsFromTheWinnersWorkspace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	target, c, root := heldSessions(t, "turns-test", &Activities{})
	remote := remoteOn(c, target)
	turn := func(calls string) *config.Config {
		return loadTeam(t, `
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      tool_calls: `+calls+`
      answers: ["Done."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, latency: 300ms, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conv := app.NewConversation()
	defer conv.Close()
	logs := filepath.Join(root, "logs")
	first, err := app.Run(ctx, turn(`[{name: write_file, args: {path: note.txt, content: "from turn one"}}]`),
		app.Options{Question: "One.", Logging: true, LogRoot: logs, Remote: remote, Conversation: conv})
	if err != nil || first.ExitCode != 0 || first.Winner != "builder" {
		t.Fatalf("turn 1: %+v, %v", first.Result, err)
	}
	second, err := app.Run(ctx, turn(`[{name: read_file, args: {path: note.txt}}, {name: write_file, args: {path: copy.txt, content: "{{result}}"}}]`),
		app.Options{Question: "Two.", History: []provider.Message{{Role: provider.RoleUser, Content: "One."}, {Role: provider.RoleAssistant, Content: "Done."}},
			Logging: true, LogRoot: logs, Session: first.Session, Turn: 2, Remote: remote, Conversation: conv})
	if err != nil || second.ExitCode != 0 || second.Winner != "builder" {
		t.Fatalf("turn 2: %+v, %v", second.Result, err)
	}
	got := workspaceFiles(t, filepath.Join(second.Dir, "final", "builder", "workspace"))
	if !strings.Contains(got["copy.txt"], "from turn one") {
		t.Errorf("turn 2's workspace %v: the builder did not find turn 1's file", got)
	}
	if entries, _ := os.ReadDir(target.Store); len(entries) != 0 {
		t.Errorf("the store keeps %d entries after the turns", len(entries))
	}
}

// TestSession_SkillsTravelToTheWorker: use_skills reads the starter's skills folder; on
// Temporal the worker that holds the session gets it through the store, and read_skill there
// returns the starter's skill.
func TestSession_SkillsTravelToTheWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := devServer(t)
	root := t.TempDir()
	skills := filepath.Join(root, "skills", "hello")
	if err := os.MkdirAll(skills, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: hello\ndescription: Greets in the house style.\n---\n\nSay the house greeting, word for word: ahoy from the starter.\n"
	if err := os.WriteFile(filepath.Join(skills, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	target := durable.Target{Address: addr, Queue: "skills-test", Store: filepath.Join(root, "store")}
	c, err := Dial(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The worker runs in a folder of its own, where skills_directory names nothing.
	elsewhere := filepath.Join(root, "worker")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	workerProcessOut(t, nil, addr, target.Queue, workerEnv+"_DIR="+elsewhere, workerEnv+"_STORE="+target.Store)
	t.Chdir(root)
	cfg := loadTeam(t, `
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      tool_calls: [{name: read_skill, args: {name: hello}}, {name: write_file, args: {path: skill.txt, content: "{{result}}"}}]
      answers: ["Done."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, latency: 200ms, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim, coordination: {use_skills: true, skills_directory: skills}}
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := app.Run(ctx, cfg, app.Options{Question: "Greet.", Logging: true, LogRoot: filepath.Join(root, "logs"),
		Remote: func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
			return Run(ctx, c, target, cfg, o)
		}})
	if err != nil || res.ExitCode != 0 || res.Winner != "builder" {
		t.Fatalf("run: %+v, %v", res.Result, err)
	}
	got := workspaceFiles(t, filepath.Join(res.Dir, "final", "builder", "workspace"))
	if !strings.Contains(got["skill.txt"], "ahoy from the starter") {
		t.Errorf("read_skill on the worker returned %q", got["skill.txt"])
	}
	if entries, _ := os.ReadDir(target.Store); len(entries) != 0 {
		t.Errorf("the store keeps %d entries after the session", len(entries))
	}
}
