package config

import "testing"

// enable_web_search on claude_code switches on the CLI's own WebSearch tool; the other CLIs
// have none to switch on, and a deny-list naming it contradicts the key.
func TestParse_ClaudeCodeWebSearch(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte("agent: {backend: {type: claude_code, enable_web_search: true}}\n"))
	if !rep.OK() || !cfg.Agents[0].Backend.Hosted.WebSearch {
		t.Fatalf("claude_code with enable_web_search: %s %+v", rep.Text(), cfg)
	}
	const head = "agents:\n  - id: a\n    backend:\n"
	for _, tc := range []struct{ yaml, want string }{
		{"      type: codex\n      enable_web_search: true\n", "E 5:7 agents[0].backend.enable_web_search | does not support `enable_web_search`"},
		{"      type: claude_code\n      disallowed_tools: [WebSearch]\n      enable_web_search: true\n",
			"E 6:7 agents[0].backend.enable_web_search | disallowed_tools denies"},
	} {
		_, rep := Parse("c.yaml", []byte(head+tc.yaml))
		checkIssues(t, rep, []string{tc.want})
	}
}
