package trust

import (
	"fmt"
	"strings"

	"massgen/internal/command"
	"massgen/internal/config"
	"massgen/internal/redact"
)

// Reasons lists what cfg would start on this machine or reach besides the providers' own
// endpoints, one line each, in config order: MCP servers (their command, or their URL),
// custom tools, shell commands, coding-agent CLIs, and base_url endpoints that receive an
// API key. A config with none runs nothing a model reply could not, and needs no trust.
func Reasons(cfg *config.Config) []string {
	var out []string
	for _, a := range cfg.Agents {
		b := a.Backend
		add := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("agent %s: ", a.ID)+fmt.Sprintf(format, args...))
		}
		bt := config.BackendTypes[b.Type]
		if bt.Protocol == config.ProtocolCLI {
			add("runs the %s coding-agent CLI, with its own tools", b.Type)
		}
		if b.BaseURL != "" && b.BaseURL != bt.DefaultBaseURL {
			add("sends its requests and API key to %s (base_url)", redact.URL(b.BaseURL))
		}
		for _, s := range b.Tools.MCPServers {
			if s.Command != "" {
				add("starts MCP server %s: %s", s.Name, clip(strings.Join(append([]string{s.Command}, s.Args...), " ")))
			} else {
				add("connects to MCP server %s at %s", s.Name, redact.URL(s.URL))
			}
		}
		for _, c := range b.Tools.CustomTools {
			switch {
			case len(c.Command) > 0:
				add("runs custom tool %s: %s", c.Label(), clip(strings.Join(c.Command, " ")))
			case c.Path != "":
				add("runs custom tool %s from %s", c.Label(), c.Path)
			default:
				add("runs custom tool %s", c.Label())
			}
		}
		if b.Tools.CommandLine {
			mode := "unsandboxed"
			if command.Sandboxed(b.Tools.ExecutionMode) {
				mode = "sandboxed"
			}
			add("runs shell commands (enable_mcp_command_line, %s)", mode)
		}
	}
	return out
}

// clip keeps a listed command readable.
func clip(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "..."
	}
	return s
}
