package trust

import (
	"fmt"
	"strings"

	"massgen/internal/command"
	"massgen/internal/config"
	"massgen/internal/redact"
)

// Reasons lists what cfg would start on this machine or reach besides the providers' own
// endpoints, one line each, in config order: folders it opens to every agent, then per
// agent coding-agent CLIs, base_url endpoints that receive an API key, local files sent to
// the provider, folders opened to it, MCP servers (their command, or their URL), custom
// tools, the browser and desktop, and shell commands with what their sandbox shows. A
// config with none runs nothing a model reply could not, and needs no trust.
func Reasons(cfg *config.Config) []string { return reasons(cfg, true) }

// OnMachine is Reasons without the endpoints that receive a key: what cfg would start on
// this machine, or open or send of its files.
func OnMachine(cfg *config.Config) []string { return reasons(cfg, false) }

func reasons(cfg *config.Config, endpoints bool) []string {
	var out []string
	for _, p := range cfg.Orchestrator.ContextPaths {
		out = append(out, "every agent: "+contextPath(p))
	}
	for _, a := range cfg.Agents {
		b := a.Backend
		add := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("agent %s: ", a.ID)+fmt.Sprintf(format, args...))
		}
		bt := config.BackendTypes[b.Type]
		if bt.Protocol == config.ProtocolCLI {
			add("runs the %s coding-agent CLI, with its own tools", b.Type)
		}
		if endpoints && b.BaseURL != "" && b.BaseURL != bt.DefaultBaseURL {
			add("sends its requests and API key to %s (base_url)", redact.URL(b.BaseURL))
		}
		for _, u := range b.Uploads {
			if !u.IsURL() {
				add("sends the local file %s to its provider (upload_files)", clip(u.Path))
			}
		}
		for _, p := range b.Tools.ContextPaths {
			add("%s", contextPath(p))
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
			case c.ComputerTool() == config.ToolBrowserAutomation:
				add("drives a web browser (%s)", c.ComputerTool())
			case c.ComputerTool() != "":
				add("drives a browser or a virtual desktop (%s)", c.ComputerTool())
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
			if command.Sandboxed(b.Tools.ExecutionMode) {
				if b.Tools.SrtReadMode == "open" {
					add("lets its sandboxed commands read every file of this user (command_line_srt_read_mode: open)")
				}
				for _, p := range b.Tools.SrtAllowRead {
					add("lets its sandboxed commands read %s (command_line_srt_allow_read)", clip(p))
				}
			}
		}
	}
	return out
}

// contextPath says what a context_paths entry opens: a folder outside the agents' own
// workspaces, to read, and to write for the final presenter.
func contextPath(p config.ContextPath) string {
	if p.Write {
		return fmt.Sprintf("reads and may change %s (context_paths, write)", clip(p.Path))
	}
	return fmt.Sprintf("reads %s (context_paths)", clip(p.Path))
}

// clip keeps a listed command readable.
func clip(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "..."
	}
	return s
}
