package cliagent

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"massgen/internal/cliagent/clitest"
	"massgen/internal/mcptool"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// allowed_tools names the CLI's own tools it keeps, and in the mcp__<server>__<tool> form the
// user's MCP tools it keeps: the model is offered just those, plus massgen's workflow tools.
// Claude Code's MCP config has no per-tool filter: it offers the server's other tools, and
// refuses them when called. Codex has no allow-list of its own tools (the config refuses one).
func TestAllowedTools(t *testing.T) {
	for _, tc := range cliCases {
		if tc.typ == "codex" {
			continue
		}
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			bin := needCLI(t, tc.bin)
			// The model writes, then calls echo, which is not among the allowed tools.
			brain := &clitest.Brain{Script: clitest.Script{File: "hello.txt", Content: "hello", MCPTool: "echo"}, Tools: tc.tools}
			srv := httptest.NewServer(tc.api(brain))
			defer srv.Close()
			ws := filepath.Join(t.TempDir(), "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			read, write := tc.tools.Read("x").Name, tc.tools.Write("x", "y").Name
			a, err := New(Options{Type: tc.typ, Model: tc.model, APIKey: "sk-test", BaseURL: srv.URL + tc.baseSuffix, Binary: bin,
				PathEnv: os.Getenv("PATH"), AllowedTools: []string{read, "mcp__everything__get-env"}})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			a.Bind(Workspace{Dir: ws}, clitest.StateDir(t))
			a.UseMCPServers([]mcptool.Server{{Name: "everything", Command: needCLI(t, "mcp-server-everything"), Args: []string{"stdio"}}}, nil)
			chunks, err := collect(t, a, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "Write hello.txt."}},
				Tools: prompt.Tools(nil)})
			if err != nil {
				t.Fatal(err)
			}
			offered := brain.Offered()
			for _, want := range []string{read, "new_answer", "vote", "get-env"} {
				if find(offered, want) == "" {
					t.Errorf("%s is not offered: %v", want, offered)
				}
			}
			if find(offered, write) != "" {
				t.Errorf("%s is offered: %v", write, offered)
			}
			if tc.typ != "claude_code" && find(offered, "echo") != "" {
				t.Errorf("echo is offered: %v", offered)
			}
			refused := false
			for _, c := range chunks {
				h, ok := c.(provider.HostedToolChunk)
				if ok && strings.Contains(h.Result, clitest.MCPMessage) && !h.Failed {
					t.Errorf("echo, not allowed, ran: %+v", h)
				}
				refused = refused || ok && strings.HasSuffix(h.Call.Name, "echo") && h.Failed
			}
			if find(offered, "echo") != "" && !refused {
				t.Errorf("echo was offered, and no call of it was refused: %+v", chunks)
			}
			if _, err := os.Stat(filepath.Join(ws, "hello.txt")); err == nil {
				t.Error("hello.txt was written without the write tool")
			}
			if call := lastCall(t, chunks); call.Name != "new_answer" {
				t.Errorf("last call = %+v", call)
			}
		})
	}
}

// find is the offered tool whose name is want, or ends with it after a separator.
func find(offered []string, want string) string {
	i := slices.IndexFunc(offered, func(o string) bool {
		return o == want || strings.HasSuffix(o, "_"+want) || strings.HasSuffix(o, "-"+want)
	})
	if i < 0 {
		return ""
	}
	return offered[i]
}
