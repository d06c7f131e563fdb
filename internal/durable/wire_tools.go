package durable

import (
	"maps"

	"massgen/internal/config"
)

// The agents' tools as they travel to the workers (wire.go): the backend keys of MassGen's
// schema that set them, and the permissions: blocks that guard them.

// toolsDoc adds b's tools to its backend document out.
func toolsDoc(out obj, b config.Backend) {
	t := b.Tools
	putStr(out, "cwd", t.Cwd)
	if len(t.MCPServers) > 0 {
		ss := make([]any, len(t.MCPServers))
		for i, s := range t.MCPServers {
			ss[i] = mcpServerDoc(s)
		}
		out["mcp_servers"] = ss
	}
	putList(out, "allowed_tools", t.AllowedTools)
	putList(out, "exclude_tools", t.ExcludeTools)
	if len(t.ContextPaths) > 0 {
		out["context_paths"] = contextPathsDoc(t.ContextPaths)
	}
	putBool(out, "enable_mcp_command_line", t.CommandLine)
	putList(out, "command_line_allowed_commands", t.AllowedCommands)
	putList(out, "command_line_blocked_commands", t.BlockedCommands)
	putBool(out, "enforce_read_before_delete", t.EnforceReadBeforeDelete)
	putList(out, "command_line_env_passthrough", t.CommandEnv)
	putStr(out, "command_line_execution_mode", t.ExecutionMode)
	putStr(out, "command_line_srt_read_mode", t.SrtReadMode)
	putList(out, "command_line_srt_allow_read", t.SrtAllowRead)
	putList(out, "command_line_srt_deny_read", t.SrtDenyRead)
	putList(out, "command_line_srt_network_allowed_domains", t.SrtAllowedDomains)
	putBool(out, "enable_code_based_tools", t.CodeTools)
	putStr(out, "custom_tools_path", t.CustomToolsPath)
	putStr(out, "shared_tools_directory", t.SharedToolsDir)
	putList(out, "exclude_custom_tools", t.ExcludeCustomTools)
	putList(out, "direct_mcp_servers", t.DirectMCPServers)
	if len(t.CustomTools) > 0 {
		// One entry as written per Entry: an entry that names several functions is one
		// process for a command tool, and its messages name it by its index.
		var cs []any
		for k := 0; k < len(t.CustomTools); {
			n := 1
			for k+n < len(t.CustomTools) && t.CustomTools[k+n].Entry == t.CustomTools[k].Entry {
				n++
			}
			cs = append(cs, customToolDoc(t.CustomTools[k:k+n]))
			k += n
		}
		out["custom_tools"] = cs
	}
	if b.Permissions != nil {
		out["permissions"] = permissionsDoc(*b.Permissions)
	}
	mediaDoc(out, t.Media, true)
	cliDoc(out, b.CLI)
}

func mcpServerDoc(s config.MCPServer) obj {
	out := obj{"name": s.Name}
	putStr(out, "type", s.Type)
	putStr(out, "command", s.Command)
	putList(out, "args", s.Args)
	putMap(out, "env", s.Env)
	putStr(out, "cwd", s.Cwd)
	putStr(out, "url", s.URL)
	putMap(out, "headers", s.Headers)
	putSeconds(out, "timeout", s.Timeout.Seconds())
	putList(out, "allowed_tools", s.AllowedTools)
	putList(out, "exclude_tools", s.ExcludeTools)
	putBool(out, "read_only", s.ReadOnly)
	putList(out, "read_only_tools", s.ReadOnlyTools)
	return out
}

func contextPathsDoc(cps []config.ContextPath) []any {
	out := make([]any, len(cps))
	for i, c := range cps {
		d := obj{"path": c.Path, "permission": "read"}
		if c.Write {
			d["permission"] = "write"
		}
		putList(d, "protected_paths", c.Protected)
		out[i] = d
	}
	return out
}

// customToolDoc is one custom_tools entry: the tools it expanded to share everything but
// their names and functions.
func customToolDoc(entry []config.CustomTool) obj {
	c := entry[0]
	out := obj{}
	if len(entry) == 1 {
		putStr(out, "name", c.Name)
		putStr(out, "function", c.Function)
	} else {
		names, funcs := make([]string, len(entry)), make([]string, len(entry))
		for i, e := range entry {
			names[i], funcs[i] = e.Name, e.Function
		}
		out["name"], out["function"] = names, funcs
	}
	// The file found for it, as an absolute path: the config's folder is not the worker's.
	putStr(out, "path", cmpOr(c.File, c.Path))
	putList(out, "command", c.Command)
	putStr(out, "description", c.Description)
	if len(c.PresetArgs) > 0 {
		out["preset_args"] = maps.Clone(c.PresetArgs)
	}
	if len(c.DefaultParams) > 0 {
		out["default_params"] = maps.Clone(c.DefaultParams)
	}
	putSeconds(out, "timeout", c.Timeout.Seconds())
	putList(out, "env_passthrough", c.PassEnv)
	return out
}

func permissionsDoc(p config.Permissions) obj {
	out := obj{"enabled": p.Enabled, "audit": !p.NoAudit}
	putStr(out, "automation_default", p.AutomationDefault)
	putStr(out, "role", p.Role)
	putInt(out, "max_consecutive_auto", p.MaxConsecutiveAuto)
	rules := obj{}
	putList(rules, "allow", p.Allow)
	putList(rules, "ask", p.Ask)
	putList(rules, "deny", p.Deny)
	if len(rules) > 0 {
		out["rules"] = rules
	}
	return out
}

func putList(m obj, k string, v []string) {
	if len(v) > 0 {
		m[k] = v
	}
}

func putMap(m obj, k string, v map[string]string) {
	if len(v) > 0 {
		m[k] = v
	}
}

func putBool(m obj, k string, v bool) {
	if v {
		m[k] = true
	}
}

func putSeconds(m obj, k string, s float64) {
	if s > 0 {
		m[k] = s
	}
}

// mediaDoc adds the media tool settings m to out (a backend or the orchestrator).
func mediaDoc(out obj, m config.Media, backend bool) {
	if m.Multimodal != nil {
		out["enable_multimodal_tools"] = *m.Multimodal
	}
	if backend {
		putBool(out, "enable_image_generation", m.ImageGeneration)
		putBool(out, "enable_audio_generation", m.AudioGeneration)
		putBool(out, "enable_video_generation", m.VideoGeneration)
		putBool(out, "enable_file_generation", m.FileGeneration)
	}
	if len(m.Understand) > 0 {
		mc := obj{}
		for kind, c := range m.Understand {
			d := obj{}
			putStr(d, "backend", c.Backend)
			putStr(d, "model", c.Model)
			putInt(d, "num_frames", c.NumFrames)
			mc[kind] = d
		}
		out["multimodal_config"] = mc
	}
	for mode, c := range m.Generate {
		putStr(out, mode+"_generation_backend", c.Backend)
		putStr(out, mode+"_generation_model", c.Model)
	}
}

// cliDoc adds the coding-agent CLI settings of b to out.
func cliDoc(out obj, c config.CLISettings) {
	putStr(out, "system_prompt", c.SystemPrompt)
	putList(out, "disallowed_tools", c.DisallowedTools)
	putStr(out, "permission_mode", c.PermissionMode)
	putInt(out, "max_thinking_tokens", c.MaxThinkingTokens)
	putStr(out, "model_reasoning_effort", c.ReasoningEffort)
	putStr(out, "copilot_permission_policy", c.PermissionPolicy)
}
