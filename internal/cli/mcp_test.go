package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/event"
	"massgen/internal/mcptool/mcptest"
)

// fastDemo writes examples/demo.yaml without its pauses (they only pace it for people
// watching) to dir/demo.yaml.
func fastDemo(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(repoFile(t, "examples/demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = regexp.MustCompile(`(?m)^\s+(latency|chunk_delay): .*\n`).ReplaceAll(data, nil)
	p := filepath.Join(dir, "demo.yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// askDemo calls ask_team on cs and checks the demo team's answer and progress.
func askDemo(t *testing.T, cs *mcp.ClientSession, progress *mcptest.Progress) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_team", Meta: mcp.Meta{"progressToken": 1},
		Arguments: map[string]any{"question": "What is the capital of France?"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Answer, Winner, Status, LogDir string
		Votes                          []struct{ Voter, For string }
	}
	if err := json.Unmarshal(b, &out); err != nil || res.IsError {
		t.Fatalf("result %s (%v)", b, err)
	}
	if !strings.Contains(out.Answer, "Paris") || out.Winner != "researcher" || out.Status != event.StatusCompleted || len(out.Votes) != 3 {
		t.Fatalf("result %s", b)
	}
	progress.WaitFor(t, "researcher answered")
	progress.WaitFor(t, "session completed")
}

// massgen mcp over stdio, run in process: a client lists the teams and asks one; closing
// stdin ends the command with exit 0, and nothing but JSON-RPC was written to stdout.
func TestMCP_StdioInProcess(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	cfg := fastDemo(t, work)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- Execute(t.Context(), []string{"mcp", "--config", cfg, "--config", "second=" + cfg}, inR, outW, &syncWriter{w: &stderr})
		outW.Close()
	}()
	progress := &mcptest.Progress{}
	cs, err := mcptest.NewClient(progress).Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_teams"})
	if err != nil || res.IsError {
		t.Fatalf("list_teams: %v %v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"name":"demo"`) || !strings.Contains(string(b), `"name":"second"`) {
		t.Errorf("teams %s", b)
	}
	askDemo(t, cs, progress)
	cs.Close()
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d; stderr %s", c, stderr.String())
	}
	if !strings.Contains(stderr.String(), "massgen mcp: serving demo, second over stdio") {
		t.Errorf("stderr %q", stderr.String())
	}
	if logs, _ := filepath.Glob(filepath.Join(work, ".massgen", "massgen_logs", "log_*", "turn_1", "events.jsonl")); len(logs) != 1 {
		t.Errorf("logs under the current directory: %v", logs)
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Bad flags and configs are refused before anything is served.
func TestMCP_Refusals(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	cfg := fastDemo(t, work)
	bad := writeConfig(t, "agents:\n  - id: a\n    backend:\n      type: nosuch\n")
	t.Setenv(tokenEnv, "")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"token-file without http", []string{"mcp", "--config", cfg, "--token-file", cfg}, "--token-file and --no-token go with --http"},
		{"not loopback without a token", []string{"mcp", "--config", cfg, "--http", "0.0.0.0:0", "--no-token"}, "--no-token serves loopback only"},
		{"negative max sessions", []string{"mcp", "--config", cfg, "--max-sessions", "-1"}, "--max-sessions -1"},
		{"bad config", []string{"mcp", "--config", bad}, "unknown backend"},
		{"missing config", []string{"mcp", "--config", filepath.Join(work, "nosuch.yaml")}, "config file not found"},
		{"same name twice", []string{"mcp", "--config", cfg, "--config", cfg}, `two configs are served as team "demo"`},
		{"arguments", []string{"mcp", "--config", cfg, "question"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := execute(t, t.Context(), tc.args...)
			if code != ExitConfig || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %q", code, stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
		})
	}
}
