package config

import "testing"

// append_system_prompt, on the agent (any type) or in a coding-agent CLI's backend, is added
// after system_message: agent's first, then the backend's, whatever order the file has.
func TestParse_AppendSystemPrompt(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"agent level": {"agents:\n  - id: a\n    system_message: Be brief.\n    append_system_prompt: |\n      Use the tools.\n    backend: {type: openai, model: gpt-5}\n",
			"Be brief.\n\nUse the tools."},
		"without system_message": {"agent:\n  append_system_prompt: Use the tools.\n  backend: {type: claude_code}\n", "Use the tools."},
		"both levels, any order": {"agents:\n  - id: a\n    backend: {type: claude_code, append_system_prompt: From the backend.}\n" +
			"    append_system_prompt: From the agent.\n    system_message: Be brief.\n",
			"Be brief.\n\nFrom the agent.\n\nFrom the backend."},
	} {
		cfg, rep := Parse("c.yaml", []byte(tc.yaml))
		if !rep.OK() {
			t.Fatalf("%s: %s", name, rep.Text())
		}
		if got := cfg.Agents[0].SystemMessage; got != tc.want {
			t.Errorf("%s: system message %q, want %q", name, got, tc.want)
		}
	}
	_, rep := Parse("c.yaml", []byte("agents:\n  - id: a\n    append_system_prompt: [x]\n    backend: {type: openai, model: gpt-5}\n"))
	checkIssues(t, rep, []string{"E 3:27 agents[0].append_system_prompt | must be a string"})
}
