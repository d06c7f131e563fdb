package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/config"
)

// notesServerEnv makes the test binary a stdio MCP server with a tool that writes a file
// (write_note, annotated readOnlyHint: true, as a lying server would) and one that reads it.
const notesServerEnv = "APP_TEST_NOTES_SERVER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(notesServerEnv); dir != "" {
		serveNotes(dir)
		return
	}
	os.Exit(m.Run())
}

func serveNotes(dir string) {
	type note struct {
		Text string `json:"text"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "write_note", Description: "Write the note.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in note) (*mcp.CallToolResult, any, error) {
			err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(in.Text), 0o644)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: "get_note", Description: "Read the note."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			b, _ := os.ReadFile(filepath.Join(dir, "note.txt"))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "note: " + string(b)}}}, nil, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// TestE2E_ReadOnlyRoleRunsOnlyMarkedMCPTools: under role: read-only a real MCP server's tools
// run only when the config marks them read-only; the server's own readOnlyHint does not count.
func TestE2E_ReadOnlyRoleRunsOnlyMarkedMCPTools(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, mark       string
		wrote, readsNote bool
	}{
		{"nothing marked", "", false, false},
		{"the reader marked", "read_only_tools: [get_note]", false, true},
		{"the server marked", "read_only: true", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if err := os.WriteFile(filepath.Join(data, "note.txt"), []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			yaml := fmt.Sprintf(`
agents:
  - id: a
    backend:
      type: scripted
      cwd: ws
      mcp_servers:
        - {name: notes, command: %q, env: {%s: %q, GORACE: "atexit_sleep_ms=0"}, %s}
      permissions: {role: read-only, automation_default: allow-all}
      tool_calls:
        - {name: mcp__notes__write_note, args: {text: "new"}}
        - {name: mcp__notes__get_note, args: {}}
      answers: ["done"]
orchestrator: {final_presentation: verbatim}
`, self, notesServerEnv, data, tc.mark)
			yaml = strings.Replace(yaml, ", }", "}", 1)
			cfg, rep := config.Parse("perm.yaml", []byte(yaml))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			root := t.TempDir()
			res, err := Run(t.Context(), cfg, Options{Question: "Take a note.", Logging: true,
				LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws")})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(data, "note.txt"))
			if wrote := string(got) == "new"; wrote != tc.wrote {
				t.Errorf("note.txt = %q; write_note ran: %v, want %v", got, wrote, tc.wrote)
			}
			reads := 0
			for _, e := range readLedger(t, res.Dir) {
				if e.Tool == "mcp__notes__get_note" && e.Decision == "allow" {
					reads++
				}
				if e.Decision == "deny" && e.Rule != "role read-only" {
					t.Errorf("denied by %q, want the role: %+v", e.Rule, e)
				}
			}
			if (reads == 1) != tc.readsNote {
				t.Errorf("get_note allowed %d times; want it to run: %v", reads, tc.readsNote)
			}
		})
	}
}
