package config

import (
	"strings"
	"testing"
)

// enable_code_based_tools and use_skills against the keys they need: each problem is named,
// with what to do.
func TestParse_CodeToolsAndSkills(t *testing.T) {
	const mcp = "      answers: [hi]\n      mcp_servers: [{name: s, command: x}]\n"
	tests := []struct {
		name, yaml string
		ok         bool
		want       string
	}{
		{"code tools", scripted("      cwd: ws\n      enable_mcp_command_line: true\n      enable_code_based_tools: true\n" + mcp +
			"      direct_mcp_servers: [s]\n      custom_tools_path: tools\n      exclude_custom_tools: [x]\n      shared_tools_directory: shared\n"), true, ""},
		{"no commands", scripted("      enable_code_based_tools: true\n" + mcp), true, "has no effect without commands"},
		{"unknown direct server", scripted("      enable_mcp_command_line: true\n      enable_code_based_tools: true\n" + mcp + "      direct_mcp_servers: [t]\n"),
			false, "direct_mcp_servers: no MCP server is called `t`"},
		{"coding-agent CLI", "agents:\n  - id: a\n    backend: {type: claude_code, enable_mcp_command_line: true, enable_code_based_tools: true}\n",
			false, "does not take `enable_code_based_tools`"},
		{"planning mode", scripted("      enable_mcp_command_line: true\n      enable_code_based_tools: true\n"+mcp) +
			"orchestrator: {coordination: {enable_planning_mode: true}}\n", false, "cannot be used with `enable_planning_mode`"},
		{"skills", okAgents + "orchestrator: {skills_directory: b, coordination: {use_skills: true, skills_directory: a}}\n", true, ""},
		{"built-in skills", okAgents + "orchestrator: {coordination: {use_skills: true, massgen_skills: [file_search]}}\n", false, "built-in skills"},
		{"previous sessions", okAgents + "orchestrator: {coordination: {use_skills: true, load_previous_session_skills: true}}\n", false, "task planning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, rep := Parse("c.yaml", []byte(tt.yaml))
			if rep.OK() != tt.ok || !strings.Contains(rep.Text(), tt.want) {
				t.Fatalf("ok = %v, want %v with %q:\n%s", rep.OK(), tt.ok, tt.want, rep.Text())
			}
			if tt.name == "skills" && (!cfg.Orchestrator.UseSkills || cfg.Orchestrator.SkillsDirectory != "a") {
				t.Errorf("orchestrator = %+v, want use_skills with coordination's skills_directory", cfg.Orchestrator)
			}
			if tt.name == "code tools" {
				tl := cfg.Agents[0].Backend.Tools
				if !tl.CodeTools || tl.CustomToolsPath != "tools" || tl.SharedToolsDir != "shared" || len(tl.DirectMCPServers) != 1 || len(tl.ExcludeCustomTools) != 1 {
					t.Errorf("tools = %+v", tl)
				}
			}
		})
	}
}
