package cliagent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/cliagent/clitest"
	"massgen/internal/mcptool"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// collect reads one Stream to its end.
func collect(t *testing.T, p provider.Provider, req provider.Request) ([]provider.Chunk, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out []provider.Chunk
	for c, err := range p.Stream(ctx, req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func needCLI(t *testing.T, name string) string {
	t.Helper()
	p := clitest.Bin(name)
	if p == "" {
		t.Skipf("%s is not installed (.ci/run installs it into .ci/npm)", name)
	}
	return p
}

// cliCase is one CLI against its fake API.
type cliCase struct {
	typ, bin, model string
	api             func(*clitest.Brain) http.Handler
	tools           clitest.Tools
	baseSuffix      string // what the base URL needs after the host
}

var cliCases = []cliCase{
	{typ: "claude_code", bin: "claude", model: "claude-sonnet-4-5", api: clitest.Anthropic, tools: clitest.ClaudeTools},
	{typ: "codex", bin: "codex", model: "gpt-5.4", api: clitest.Responses, tools: clitest.CodexTools, baseSuffix: "/v1"},
	{typ: "gemini_cli", bin: "gemini", model: "gemini-2.5-pro", api: clitest.Gemini, tools: clitest.GeminiTools},
	{typ: "copilot", bin: "copilot", model: "claude-sonnet-4-5", api: clitest.Anthropic, tools: clitest.CopilotTools},
}

// Each CLI writes a file with its own tool, submits new_answer through massgen's MCP server,
// takes the verdict as the tool's result in the same session, reads a peer's file and votes.
func TestTurn(t *testing.T) {
	// The CLIs mostly wait on node's start-up and on each other's loopback calls: each has
	// its own fake and workspace, so they run side by side.
	for _, tc := range cliCases {
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			testTurn(t, tc)
		})
	}
}

func testTurn(t *testing.T, tc cliCase) {
	bin := needCLI(t, tc.bin)
	brain := &clitest.Brain{Script: clitest.Script{File: "hello.txt", Content: "hello from " + tc.typ, MCPTool: "echo"}, Tools: tc.tools}
	srv := httptest.NewServer(tc.api(brain))
	defer srv.Close()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Type: tc.typ, Model: tc.model, APIKey: "sk-test", BaseURL: srv.URL + tc.baseSuffix, Binary: bin,
		PathEnv: os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	snaps := filepath.Join(dir, "snapshots")
	if err := os.MkdirAll(filepath.Join(snaps, "agent2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snaps, "agent2", "peer.txt"), []byte("peer work"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Bind(Workspace{Dir: ws, Read: []string{snaps}}, clitest.StateDir(t))
	// The user's own MCP server goes into the CLI's MCP config: the CLI calls it itself.
	a.UseMCPServers([]mcptool.Server{{Name: "everything", Command: needCLI(t, "mcp-server-everything"), Args: []string{"stdio"}}}, nil)
	req := provider.Request{System: "You are agent1.", Messages: []provider.Message{{Role: provider.RoleUser, Content: "Write hello.txt."}},
		Tools: prompt.Tools(nil)}
	chunks, err := collect(t, a, req)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(ws, "hello.txt"))
	if err != nil || strings.TrimSpace(string(got)) != "hello from "+tc.typ {
		t.Fatalf("hello.txt = %q, %v; offered %v; chunks %+v", got, err, brain.Offered(), chunks)
	}
	var echoed bool
	for _, c := range chunks {
		// Codex's stream gives an MCP call's status, not its result.
		if h, ok := c.(provider.HostedToolChunk); ok && strings.Contains(h.Call.Name, "echo") && !h.Failed &&
			(strings.Contains(h.Result, clitest.MCPMessage) || tc.typ == "codex") {
			echoed = true
		}
	}
	if !echoed {
		t.Errorf("the user's MCP server was not called: offered %v; chunks %+v", brain.Offered(), chunks)
	}
	call := lastCall(t, chunks)
	if call.Name != "new_answer" {
		t.Fatalf("first call = %+v, want new_answer", call)
	}
	session := a.SessionID()
	if session == "" {
		t.Fatal("no session id")
	}
	if !hasChunk(chunks, provider.SessionChunk{ID: session}) {
		t.Errorf("the session id %s was not streamed: %+v", session, chunks)
	}
	// The verdict, with another agent's answer, goes back as the tool's result: the same
	// process goes on, reads the peer's file and votes.
	peer := filepath.Join(snaps, "agent2", "peer.txt")
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{call}},
		provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Content: "Your answer was accepted. agent2 answered: see " + peer})
	req.Tools = prompt.Tools([]string{"agent1", "agent2"})
	chunks, err = collect(t, a, req)
	if err != nil {
		t.Fatalf("second stream: %v", err)
	}
	var read bool
	for _, c := range chunks {
		// Gemini CLI's stream does not carry what read_file read; the others' do.
		if h, ok := c.(provider.HostedToolChunk); ok && strings.Contains(h.Call.Arguments, "peer.txt") && !h.Failed &&
			(strings.Contains(h.Result, "peer work") || tc.typ == "gemini_cli") {
			read = true
		}
	}
	if !read {
		t.Errorf("the peer's file was not read: %+v", chunks)
	}
	if call := lastCall(t, chunks); call.Name != "vote" {
		t.Fatalf("second call = %+v, want vote", call)
	}
	if a.SessionID() != session {
		t.Errorf("session changed: %s, then %s", session, a.SessionID())
	}
}

func lastCall(t *testing.T, chunks []provider.Chunk) provider.ToolCall {
	t.Helper()
	if len(chunks) < 2 {
		t.Fatalf("chunks: %+v", chunks)
	}
	tc, ok := chunks[len(chunks)-2].(provider.ToolCallChunk)
	if d, isDone := chunks[len(chunks)-1].(provider.Done); !ok || !isDone || d.StopReason != "tool_use" {
		t.Fatalf("stream did not end with a tool call: %+v", chunks)
	}
	return tc.Call
}

func hasChunk(chunks []provider.Chunk, want provider.Chunk) bool {
	for _, c := range chunks {
		if c == want {
			return true
		}
	}
	return false
}
