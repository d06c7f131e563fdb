package cliagent

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"massgen/internal/cliagent/clitest"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// flagValue is the value after flag in args ("" when absent).
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// Claude Code's WebSearch tool is allowed with enable_web_search, or when allowed_tools names
// it, and denied otherwise; the agent's system message (append_system_prompt included) is what
// --append-system-prompt carries.
func TestClaudeInvocation_WebSearch(t *testing.T) {
	for _, tc := range []struct {
		name         string
		o            Options
		allowed      bool
		tools        string // --tools ("" when not passed)
		disallowedTo []string
	}{
		{name: "off", o: Options{}, allowed: false},
		{name: "on", o: Options{WebSearch: true}, allowed: true},
		{name: "on with an allow-list", o: Options{WebSearch: true, AllowedTools: []string{"Read"}}, allowed: true, tools: "Read,WebSearch"},
		{name: "off with an allow-list", o: Options{AllowedTools: []string{"Read"}}, allowed: false, tools: "Read"},
		{name: "named in allowed_tools", o: Options{AllowedTools: []string{"Read", "WebSearch"}}, allowed: true, tools: "Read,WebSearch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Type, o.APIKey, o.Home = "claude_code", "sk-test", t.TempDir()
			a, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			a.tools = &toolServer{url: "http://127.0.0.1:1/mcp", secret: "s"}
			inv, err := claudeInvocation(a, provider.Request{System: "Be brief.\n\nAlways cite sources."}, "hi", "")
			if err != nil {
				t.Fatal(err)
			}
			allowed := strings.Split(flagValue(inv.args, "--allowedTools"), ",")
			disallowed := strings.Split(flagValue(inv.args, "--disallowedTools"), ",")
			if slices.Contains(allowed, "WebSearch") != tc.allowed || slices.Contains(disallowed, "WebSearch") == tc.allowed {
				t.Errorf("--allowedTools %v, --disallowedTools %v: WebSearch allowed should be %v", allowed, disallowed, tc.allowed)
			}
			if got := flagValue(inv.args, "--tools"); got != tc.tools {
				t.Errorf("--tools %q, want %q", got, tc.tools)
			}
			if sys := flagValue(inv.args, "--append-system-prompt"); !strings.HasPrefix(sys, "Be brief.\n\nAlways cite sources.\n\n") {
				t.Errorf("--append-system-prompt %q does not start with the agent's system message", sys)
			}
		})
	}
}

// The real CLI, against the fake Anthropic API, offers its model WebSearch only when it is
// allowed.
func TestClaude_WebSearchOffered(t *testing.T) {
	bin := needCLI(t, "claude")
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[on], func(t *testing.T) {
			t.Parallel()
			brain := &clitest.Brain{Script: clitest.Script{File: "hello.txt", Content: "hello"}, Tools: clitest.ClaudeTools}
			srv := httptest.NewServer(clitest.Anthropic(brain))
			defer srv.Close()
			ws := filepath.Join(t.TempDir(), "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			a, err := New(Options{Type: "claude_code", Model: "claude-sonnet-4-5", APIKey: "sk-test", BaseURL: srv.URL, Binary: bin,
				PathEnv: os.Getenv("PATH"), WebSearch: on})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			a.Bind(Workspace{Dir: ws}, clitest.StateDir(t))
			if _, err := collect(t, a, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "Write hello.txt."}},
				Tools: prompt.Tools(nil)}); err != nil {
				t.Fatal(err)
			}
			offered := brain.Offered()
			if slices.Contains(offered, "WebSearch") != on {
				t.Errorf("WebSearch offered = %v, want %v: %v", !on, on, offered)
			}
		})
	}
}
