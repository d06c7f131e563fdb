package cliagent

import (
	"slices"
	"strings"

	"massgen/internal/mcptool"
)

// UseMCPServers gives the CLI the user's own MCP servers (the backend's mcp_servers, ${VAR}s
// expanded): the CLI starts and calls them itself, as MassGen's CLI backends do, from its own
// MCP config. exclude is the backend-level exclude_tools, added to each server's own; the
// backend-level allowed_tools' mcp__<server>__<tool> names limit a server that has no
// allowed_tools of its own (a server-level list wins, as in MassGen).
func (a *Agent) UseMCPServers(servers []mcptool.Server, exclude []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mcp = nil
	for _, s := range servers {
		s.ExcludeTools = append(append([]string{}, s.ExcludeTools...), exclude...)
		if len(s.AllowedTools) == 0 {
			s.AllowedTools = serverTools(s, mcpNames(a.o.AllowedTools))
		}
		a.mcp = append(a.mcp, s)
	}
}

// nativeTools are the names of a CLI's own tools in a tool list: all but mcp__ names.
func nativeTools(names []string) []string {
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, "mcp__") {
			out = append(out, n)
		}
	}
	return out
}

// mcpNames are the mcp__<server>__<tool> names of a tool list.
func mcpNames(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "mcp__") {
			out = append(out, n)
		}
	}
	return out
}

// serverTools is the server's own names of a tool list that may use the exposed form
// mcp__<server>__<tool>; names of other servers' tools are left out.
func serverTools(s mcptool.Server, names []string) []string {
	var out []string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "mcp__"); ok {
			srv, tool, found := strings.Cut(rest, "__")
			if !found || srv != s.Name {
				continue
			}
			n = tool
		}
		out = append(out, n)
	}
	return out
}

func isHTTP(s mcptool.Server) bool { return s.Type == mcptool.TypeStreamableHTTP }

// orEmpty keeps JSON configs from saying null where the CLIs expect an object or a list.
func orEmpty(s mcptool.Server) mcptool.Server {
	if s.Args == nil {
		s.Args = []string{}
	}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	if s.Headers == nil {
		s.Headers = map[string]string{}
	}
	return s
}

// claudeMCP is a server's entry in Claude Code's --mcp-config.
func claudeMCP(s mcptool.Server) map[string]any {
	s = orEmpty(s)
	if isHTTP(s) {
		return map[string]any{"type": "http", "url": s.URL, "headers": s.Headers}
	}
	return map[string]any{"type": "stdio", "command": s.Command, "args": s.Args, "env": s.Env}
}

// geminiMCP is a server's entry in Gemini CLI's settings.json mcpServers.
func geminiMCP(s mcptool.Server) map[string]any {
	s = orEmpty(s)
	m := map[string]any{"trust": true, "timeout": s.CallTimeout().Milliseconds()}
	if isHTTP(s) {
		m["httpUrl"], m["headers"] = s.URL, s.Headers
	} else {
		m["command"], m["args"], m["env"] = s.Command, s.Args, s.Env
		if s.Cwd != "" {
			m["cwd"] = s.Cwd
		}
	}
	if len(s.AllowedTools) > 0 {
		m["includeTools"] = serverTools(s, s.AllowedTools)
	}
	if ex := serverTools(s, s.ExcludeTools); len(ex) > 0 {
		m["excludeTools"] = ex
	}
	return m
}

// copilotMCP is a server's entry in Copilot CLI's --additional-mcp-config.
func copilotMCP(s mcptool.Server) map[string]any {
	s = orEmpty(s)
	tools := []string{"*"}
	if len(s.AllowedTools) > 0 {
		tools = serverTools(s, s.AllowedTools)
	}
	m := map[string]any{"tools": tools, "timeout": s.CallTimeout().Milliseconds()}
	if isHTTP(s) {
		m["type"], m["url"], m["headers"] = "http", s.URL, s.Headers
	} else {
		m["type"], m["command"], m["args"], m["env"] = "local", s.Command, s.Args, s.Env
		if s.Cwd != "" {
			m["cwd"] = s.Cwd
		}
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
