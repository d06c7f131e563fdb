package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// TestConversation_CarriesServersAndWorkspace: two turns of one conversation share the MCP
// server (started once, running between turns, stopped by Close), and the second turn starts
// from the first winner's files, with the original read-only beside them.
func TestConversation_CarriesServersAndWorkspace(t *testing.T) {
	server := everythingServer(t)
	tag := fmt.Sprintf("MASSGEN_TEST_CONV_%d", os.Getpid())
	team := func(calls string) *config.Config {
		yaml := fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      mcp_servers:
        - {name: everything, command: %q, env: {%s: "1"}}
      exclude_tools: [trigger-long-running-operation]
      tool_calls: %s
      answers: ["Done; see my workspace."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, cwd: ws, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`, server, tag, calls)
		cfg, rep := config.Parse("conv.yaml", []byte(yaml))
		if !rep.OK() {
			t.Fatal(rep.Text())
		}
		return cfg
	}
	first := team(`[{name: mcp__everything__echo, args: {message: "turn one"}}, {name: write_file, args: {path: notes.txt, content: "{{result}}"}}]`)
	second := team(`[{name: read_file, args: {path: notes.txt}}, {name: list_directory, args: {path: .}}, {name: mcp__everything__echo, args: {message: "turn two"}}]`)

	root := t.TempDir()
	conv := NewConversation()
	t.Cleanup(func() { _ = conv.Close() })
	var out bytes.Buffer
	opts := Options{Logging: true, LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"),
		Sinks: []event.Sink{view.NewPlain(&out)}, Conversation: conv}

	opts.Question, opts.Turn = "Write notes.", 1
	res1, err := Run(t.Context(), first, opts)
	if err != nil || res1.Winner != "builder" {
		t.Fatalf("turn 1: %+v %v\n%s", res1.Result, err, out.String())
	}
	if len(processesTagged(tag)) == 0 {
		t.Fatal("the MCP server stopped between turns")
	}
	opts.Question, opts.Turn, opts.Session = "Extend the notes.", 2, res1.Session
	res2, err := Run(t.Context(), second, opts)
	if err != nil || res2.Winner != "builder" {
		t.Fatalf("turn 2: %+v %v\n%s", res2.Result, err, out.String())
	}

	evs, err := event.ReadFile(filepath.Join(res2.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]event.ToolResult{}
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ToolResult:
			results[p.Tool] = p
		case event.ToolServerStatus:
			if p.Status == "starting" {
				t.Errorf("turn 2 started the server again: %+v", p)
			}
		}
	}
	if r := results["read_file"]; r.IsError || !strings.Contains(r.Content, "Echo: turn one") {
		t.Errorf("turn 2 does not start from turn 1's workspace: read_file = %+v", r)
	}
	if r := results["list_directory"]; r.IsError || !strings.Contains(r.Content, "notes.txt") {
		t.Errorf("list_directory = %+v", r)
	}
	if r := results["mcp__everything__echo"]; r.IsError || !strings.Contains(r.Content, "turn two") {
		t.Errorf("echo in turn 2 = %+v", r)
	}
	// Every agent got the copy, and the original beside it is read-only.
	prev := filepath.Join(root, "ws", res2.Session+"_turn_2", "previous_turn", "notes.txt")
	if b, err := os.ReadFile(prev); err != nil || !strings.Contains(string(b), "turn one") {
		t.Errorf("previous_turn copy: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "ws", res2.Session+"_turn_2", "reviewer", "workspace", "notes.txt")); err != nil || !strings.Contains(string(b), "turn one") {
		t.Errorf("the reviewer did not start from the previous turn: %q %v", b, err)
	}

	if err := conv.Close(); err != nil {
		t.Fatal(err)
	}
	if pids := processesTagged(tag); len(pids) > 0 {
		t.Errorf("MCP server processes left after Close: %v", pids)
	}
}

// A conversation resumed from a logged workspace (a new process continuing a session) starts
// its first turn from that workspace, as the second turn of a live conversation would.
func TestResumeConversation_StartsFromTheLoggedWorkspace(t *testing.T) {
	root := t.TempDir()
	logged := filepath.Join(root, "logs", "log_20250101_000000_000001", "turn_1", "final", "builder", "workspace")
	if err := os.MkdirAll(logged, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logged, "notes.txt"), []byte("from the logged turn"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Parse("t.yaml", []byte(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      tool_calls: [{name: read_file, args: {path: notes.txt}}]
      answers: ["Read it."]
      vote: agent1
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	for _, tc := range []struct {
		name string
		conv *Conversation
		want bool
	}{{"resumed", ResumeConversation(logged), true}, {"new", ResumeConversation(""), false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() { _ = tc.conv.Close() })
			res, err := Run(t.Context(), cfg, Options{Question: "q", Turn: 2, Logging: true, LogRoot: filepath.Join(root, tc.name),
				WorkspaceRoot: filepath.Join(root, "ws-"+tc.name), Conversation: tc.conv})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if r, ok := e.Payload.(event.ToolResult); ok && r.Tool == "read_file" {
					if got := !r.IsError && strings.Contains(r.Content, "from the logged turn"); got != tc.want {
						t.Errorf("read_file = %+v, want found=%v", r, tc.want)
					}
					return
				}
			}
			t.Error("no read_file result")
		})
	}
}
