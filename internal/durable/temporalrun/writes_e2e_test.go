package temporalrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
)

// TestSession_IsolatedWritesOnTheWorker: with write_mode, each agent changes its own copy of
// a writable context path on the worker that holds the session; only the winner's changes
// reach the folder, applied before the session ends, and the log says so.
func TestSession_IsolatedWritesOnTheWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	// A writable context path opens a folder of the worker's machine: it needs trust.
	target, c, root := heldSessions(t, "writes-test", &Activities{TrustSessions: true})
	project := filepath.Join(root, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "a.txt"), []byte("a0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := loadTeam(t, fmt.Sprintf(`
agents:
  - id: one
    backend:
      type: scripted
      tool_calls: [{name: write_file, args: {path: .worktree/ctx_1/a.txt, content: "a by agent1\n"}}]
      answers: ["Changed a."]
      vote: agent1
  - id: two
    backend:
      type: scripted
      latency: 200ms
      tool_calls: [{name: write_file, args: {path: .worktree/ctx_1/loser.txt, content: "agent2\n"}}]
      answers: ["Added loser."]
      vote: agent1
orchestrator:
  final_presentation: verbatim
  context_paths: [{path: %q, permission: write}]
  coordination: {write_mode: isolated}
`, project))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := app.Run(ctx, cfg, app.Options{Question: "Change it.", Logging: true, LogRoot: filepath.Join(root, "logs"),
		Remote: func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
			return Run(ctx, c, target, cfg, o)
		}})
	if err != nil || res.ExitCode != 0 || res.Winner != "one" {
		t.Fatalf("run: %+v, %v", res.Result, err)
	}
	got := workspaceFiles(t, project)
	if fmt.Sprint(got) != "map[a.txt:a by agent1\n]" {
		t.Errorf("the project holds %q, want only agent1's change", got)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, e := range evs {
		if p, ok := e.Payload.(event.ToolServerStatus); ok && p.Server == event.ServerWrites {
			writes = append(writes, p.Status)
		}
	}
	if !strings.Contains(strings.Join(writes, ","), "applied") {
		t.Errorf("the log's writes statuses %v do not say the presenter's changes were applied", writes)
	}
}
