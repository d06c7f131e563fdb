package config

import (
	"os/exec"
	"slices"
	"testing"
)

// command_line_execution_mode: srt and its keys reach Tools; docker stays refused by name; a
// setting the sandbox cannot honour is refused by name.
func TestParse_SrtSandbox(t *testing.T) {
	t.Setenv("DOCKER_HOST", "")
	dockerHere := dockerMissing() == ""
	dockerWhy := "Docker mode is not built, and no Docker daemon is reachable here (/var/run/docker.sock does not exist"
	if dockerHere {
		dockerWhy = "Docker mode is not built"
	}
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"srt and its settings", net("      enable_mcp_command_line: true\n      command_line_execution_mode: srt\n" +
			"      command_line_srt_read_mode: strict\n      command_line_srt_allow_read: [~/tools]\n      command_line_srt_deny_read: [/opt/private]\n" +
			"      command_line_srt_network_allowed_domains: [PyPI.org, \"*.pythonhosted.org\"]\n      command_line_srt_allow_unix_sockets: []\n"), nil},
		{"docker", net("      command_line_execution_mode: docker\n      command_line_srt_read_mode: open\n"),
			[]string{"E 5:7 agents[0].backend.command_line_execution_mode | `command_line_execution_mode: docker` is not supported yet: " + dockerWhy + " | `srt`",
				"E 6:7 agents[0].backend.command_line_srt_read_mode | it tunes `command_line_execution_mode`"}},
		{"unix sockets", net("      command_line_execution_mode: srt\n      command_line_srt_allow_unix_sockets: [/run/x.sock]\n"),
			[]string{"E 6:7 agents[0].backend.command_line_srt_allow_unix_sockets | `command_line_srt_allow_unix_sockets` is not supported yet: the sandbox refuses every new unix socket"}},
		{"every host", net("      command_line_execution_mode: srt\n      command_line_srt_network_allowed_domains: [\"*\"]\n"),
			[]string{"E 6:50 agents[0].backend.command_line_srt_network_allowed_domains[0] | `*` would allow every host | command_line_execution_mode: local"}},
		{"a URL for a host", net("      command_line_execution_mode: srt\n      command_line_srt_network_allowed_domains: [\"https://pypi.org/simple\"]\n"),
			[]string{"E 6:50 agents[0].backend.command_line_srt_network_allowed_domains[0] | is not a host name | no scheme, port or path"}},
		{"read mode", net("      command_line_execution_mode: srt\n      command_line_srt_read_mode: closed\n"),
			[]string{"E 6:35 agents[0].backend.command_line_srt_read_mode | invalid command_line_srt_read_mode `closed`"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := Parse("c.yaml", []byte(tc.yaml))
			if _, err := exec.LookPath("bwrap"); tc.want == nil && err != nil {
				tc.want = []string{"W 6:7 agents[0].backend.command_line_execution_mode | needs bubblewrap"}
			}
			checkIssues(t, rep, tc.want)
			if tc.name != "srt and its settings" {
				return
			}
			tl := cfg.Agents[0].Backend.Tools
			if tl.ExecutionMode != "srt" || tl.SrtReadMode != "strict" || !slices.Equal(tl.SrtAllowRead, []string{"~/tools"}) ||
				!slices.Equal(tl.SrtDenyRead, []string{"/opt/private"}) ||
				!slices.Equal(tl.SrtAllowedDomains, []string{"pypi.org", "*.pythonhosted.org"}) {
				t.Errorf("tools = %+v", tl)
			}
		})
	}
}

// --validate says that srt needs bubblewrap where it is missing.
func TestParse_SrtWithoutBubblewrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, rep := Parse("c.yaml", []byte(net("      command_line_execution_mode: srt\n")))
	checkIssues(t, rep, []string{"W 5:7 agents[0].backend.command_line_execution_mode | srt needs bubblewrap (bwrap), which is not installed here | apt-get install bubblewrap"})
}
