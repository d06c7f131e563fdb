package config

import (
	"slices"
	"testing"
)

func TestCommandEnvPassthrough(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte(net("      command_line_env_passthrough: [GITHUB_TOKEN, NPM_CONFIG_*]\n")))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	if got := cfg.Agents[0].Backend.Tools.CommandEnv; !slices.Equal(got, []string{"GITHUB_TOKEN", "NPM_CONFIG_*"}) {
		t.Errorf("CommandEnv = %q", got)
	}
	_, rep = Parse("c.yaml", []byte(net("      command_line_env_passthrough: [\"A=B\", \"*\", 3]\n")))
	checkIssues(t, rep, []string{
		"E 5:38 agents[0].backend.command_line_env_passthrough[0] | `A=B` is not an environment variable name",
		"E 5:45 agents[0].backend.command_line_env_passthrough[1] | `*` is not an environment variable name",
		"E 5:50 agents[0].backend.command_line_env_passthrough[2] | command_line_env_passthrough[2] must be a string, not a number",
	})
}
