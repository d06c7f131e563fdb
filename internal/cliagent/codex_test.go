package cliagent

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/cliagent/clitest"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// With the user's own login, Codex keeps the user's config.toml as it is: massgen's settings
// and MCP server go on the command line. Before, only the top-level lines did, so Codex never
// saw massgen's tools and could not answer.
func TestCodex_LoginModeKeepsTheUsersConfig(t *testing.T) {
	t.Parallel()
	bin := needCLI(t, "codex")
	brain := &clitest.Brain{Script: clitest.Script{File: "hello.txt", Content: "hello"}, Tools: clitest.CodexTools}
	srv := httptest.NewServer(clitest.Responses(brain))
	defer srv.Close()
	userHome := clitest.StateDir(t) // Codex sets up no sandbox helper under /tmp
	userCfg := filepath.Join(userHome, ".codex", "config.toml")
	const mine = "# the user's own settings\nhide_agent_reasoning = true\n\n[projects.\"/somewhere\"]\ntrust_level = \"trusted\"\n"
	if err := os.MkdirAll(filepath.Dir(userCfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(userCfg, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	// No key: the login mode, on a local server that needs none.
	a, err := New(Options{Type: "codex", Model: "gpt-5.4", BaseURL: srv.URL + "/v1", Binary: bin,
		PathEnv: os.Getenv("PATH"), UseLogin: true, UserHome: userHome})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	a.Bind(Workspace{Dir: ws}, clitest.StateDir(t))
	chunks, err := collect(t, a, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "Write hello.txt."}},
		Tools: prompt.Tools(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if call := lastCall(t, chunks); call.Name != "new_answer" {
		t.Fatalf("last call = %+v, want new_answer through massgen's MCP server", call)
	}
	if got, err := os.ReadFile(filepath.Join(ws, "hello.txt")); err != nil || strings.TrimSpace(string(got)) != "hello" {
		t.Errorf("hello.txt = %q, %v", got, err)
	}
	if got, err := os.ReadFile(userCfg); err != nil || string(got) != mine {
		t.Errorf("the user's config.toml changed:\n%s (%v)", got, err)
	}
}

// Both renderings of a Codex config carry the same settings, in TOML that keeps any string.
func TestCodexSettings_FileAndFlags(t *testing.T) {
	c := codexSettings{
		{"approval_policy", "never"},
		{"mcp_servers.x", []tomlKV{{"url", "http://h/\"q\"\\\n\x01\xff"}, {"http_headers", map[string]string{"B": "2", "A": "1"}},
			{"tool_timeout_sec", 30}, {"enabled_tools", []string{"a", "b"}}}},
		{"sandbox_workspace_write", []tomlKV{{"network_access", false}}},
	}
	wantServer := `{ url = "http://h/\"q\"\\\n\u0001` + "\uFFFD" + `", http_headers = { "A" = "1", "B" = "2" }, tool_timeout_sec = 30, enabled_tools = ["a", "b"] }`
	file := "approval_policy = \"never\"\nmcp_servers.x = " + wantServer + "\nsandbox_workspace_write = { network_access = false }\n"
	if got := c.file(); got != file {
		t.Errorf("file:\n%s\nwant:\n%s", got, file)
	}
	want := []string{"-c", `approval_policy="never"`, "-c", "mcp_servers.x=" + wantServer, "-c", "sandbox_workspace_write={ network_access = false }"}
	if got := c.flags(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("flags:\n%q\nwant:\n%q", got, want)
	}
}

// Codex's own sandbox bounds its commands' writes to the workspace. The attack: its
// workspace-write mode also lets them write /tmp, where a read-only context path may live.
func TestCodex_CommandsCannotWriteTmp(t *testing.T) {
	t.Parallel()
	bin := needCLI(t, "codex")
	ctx := t.TempDir() // under /tmp
	notes := filepath.Join(ctx, "notes.txt")
	if err := os.WriteFile(notes, []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	brain := &clitest.Brain{Script: clitest.Script{File: notes, Content: "changed"}, Tools: clitest.CodexTools}
	srv := httptest.NewServer(clitest.Responses(brain))
	defer srv.Close()
	ws := filepath.Join(clitest.StateDir(t), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Type: "codex", Model: "gpt-5.4", APIKey: "sk-test", BaseURL: srv.URL + "/v1", Binary: bin, PathEnv: os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	a.Bind(Workspace{Dir: ws, Read: []string{ctx}}, clitest.StateDir(t))
	chunks, err := collect(t, a, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "Write the notes."}},
		Tools: prompt.Tools(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if call := lastCall(t, chunks); call.Name != "new_answer" {
		t.Fatalf("last call = %+v", call)
	}
	if got, err := os.ReadFile(notes); err != nil || string(got) != "the user's" {
		t.Errorf("a file under /tmp was changed: %q, %v", got, err)
	}
}
