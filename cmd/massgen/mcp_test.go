package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/mcptool/mcptest"
)

// massgen mcp as coding agents run it, the real binary on examples/demo.yaml (once as it is,
// then without its pauses): a subprocess over stdio and over streamable HTTP, called with the
// official go-sdk client and with the MCP inspector's CLI.
func TestMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo team five times (about 12 s)")
	}
	demo := absPath(t, "../../examples/demo.yaml")
	fast := fastDemo(t)

	t.Run("go-sdk over stdio", func(t *testing.T) {
		cmd := exec.Command(binary, "mcp", "--config", demo)
		cmd.Dir = t.TempDir()
		progress := &mcptest.Progress{}
		cs, err := mcptest.NewClient(progress).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		askDemo(t, cs, progress)
	})

	t.Run("go-sdk over streamable HTTP", func(t *testing.T) {
		url := startHTTP(t, fast)
		progress := &mcptest.Progress{}
		client := &http.Client{Transport: bearer{httpToken, http.DefaultTransport}}
		cs, err := mcptest.NewClient(progress).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		askDemo(t, cs, progress)
	})

	t.Run("inspector CLI", func(t *testing.T) {
		inspector := absPath(t, "../../.ci/npm/node_modules/.bin/mcp-inspector")
		if _, err := os.Stat(inspector); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing: .ci/run installs it", inspector)
			}
			t.Skip("the MCP inspector is not installed: npm install --prefix .ci/npm @modelcontextprotocol/inspector@2.12.0 (as .ci/run does)")
		}
		url := startHTTP(t, fast)
		call := []string{"--method", "tools/call", "--tool-name", "ask_team", "--tool-arg", "question=What is the capital of France?"}
		for name, args := range map[string][]string{
			// The inspector's own --config would take the server's: its command goes after --.
			"stdio": append(append([]string{"--cli"}, call...), "--", binary, "mcp", "--config", fast),
			"http":  append([]string{"--cli", url, "--header", "Authorization: Bearer " + httpToken}, call...),
		} {
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, inspector, args...)
				cmd.Dir = t.TempDir()
				// It keeps a catalog of servers in the home folder: not the user's.
				cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "MCP_CATALOG_PATH="+filepath.Join(cmd.Dir, "catalog.json"))
				out, err := cmd.Output()
				if err != nil {
					var ee *exec.ExitError
					if errors.As(err, &ee) {
						out = append(out, ee.Stderr...)
					}
					t.Fatalf("inspector: %v\n%s", err, out)
				}
				var res struct {
					IsError           bool `json:"isError"`
					StructuredContent struct {
						Answer, Winner string
						Votes          []json.RawMessage
					} `json:"structuredContent"`
				}
				start := strings.Index(string(out), "{")
				if start < 0 || json.Unmarshal(out[start:], &res) != nil {
					t.Fatalf("inspector output is not a result:\n%s", out)
				}
				if res.IsError || res.StructuredContent.Winner != "researcher" || !strings.Contains(res.StructuredContent.Answer, "Paris") || len(res.StructuredContent.Votes) != 3 {
					t.Fatalf("inspector result:\n%s", out)
				}
			})
		}
	})
}

// fastDemo writes examples/demo.yaml without its pauses, which only pace it for people
// watching, and returns its path.
func fastDemo(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data = regexp.MustCompile(`(?m)^\s+(latency|chunk_delay): .*\n`).ReplaceAll(data, nil)
	p := filepath.Join(t.TempDir(), "demo.yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func absPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// askDemo calls ask_team with a progress token and checks the demo team's answer, winner,
// votes and progress.
func askDemo(t *testing.T, cs *mcp.ClientSession, progress *mcptest.Progress) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_team", Meta: mcp.Meta{"progressToken": 1},
		Arguments: map[string]any{"question": "What is the capital of France?"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Answer, Winner, Status string
		LogDir                 string `json:"log_dir"`
		Votes                  []struct{ Voter, For string }
	}
	if err := json.Unmarshal(b, &out); err != nil || res.IsError {
		t.Fatalf("result %s (%v)", b, err)
	}
	if !strings.Contains(out.Answer, "Paris") || out.Winner != "researcher" || out.Status != "completed" || len(out.Votes) != 3 {
		t.Fatalf("result %s", b)
	}
	if _, err := os.Stat(filepath.Join(out.LogDir, "turn_1", "status.json")); err != nil {
		t.Errorf("log_dir %q: %v", out.LogDir, err)
	}
	progress.WaitFor(t, "researcher answered")
	progress.WaitFor(t, "voted for researcher")
	progress.WaitFor(t, "session completed")
}

// httpToken is the token the tests' massgen mcp --http requires, given as a user would, in
// $MASSGEN_SERVE_TOKEN.
const httpToken = "mcp-e2e-token"

// bearer sends the server's token with every request, as an MCP client configured with it does.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// startHTTP runs massgen mcp --http on a free loopback port until the test ends, then stops it
// with Ctrl-C; it returns the MCP URL.
func startHTTP(t *testing.T, cfg string) string {
	t.Helper()
	cmd := exec.Command(binary, "mcp", "--config", cfg, "--http", "127.0.0.1:0")
	cmd.Dir = t.TempDir()
	// Its server file goes to ~/.massgen/servers: not the user's.
	cmd.Env = append(os.Environ(), "MASSGEN_SERVE_TOKEN="+httpToken, "HOME="+cmd.Dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		n, _ := stdout.Read(buf)
		lines <- string(buf[:n])
		_, _ = io.Copy(io.Discard, stdout)
		waited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-waited:
			if err != nil {
				t.Errorf("massgen mcp --http after Ctrl-C: %v", err)
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("massgen mcp --http did not stop on Ctrl-C")
		}
	})
	select {
	case l := <-lines:
		url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(l)
		if url == "" {
			t.Fatalf("massgen mcp --http printed %q", l)
		}
		return url
	case <-time.After(20 * time.Second):
		t.Fatal("massgen mcp --http printed no address")
	}
	return ""
}
