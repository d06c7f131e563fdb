package config

import (
	"fmt"
	"massgen/internal/lazy"
	"os"
	"regexp"
	"strings"
	"time"
)

// MCPServer is one entry of backend.mcp_servers (reference/features.md 3.4).
type MCPServer struct {
	Name    string
	Type    string // stdio (default) | streamable-http
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	URL     string
	Headers map[string]string
	// Timeout bounds one tool call (0: the engine's per-call timeout).
	Timeout                    time.Duration
	AllowedTools, ExcludeTools []string
	// ReadOnly (read_only) and ReadOnlyTools (read_only_tools, the server's own tool names)
	// mark the server's tools that only read: the only ones permissions.role: read-only runs.
	ReadOnly      bool
	ReadOnlyTools []string
}

// ContextPath is an entry of context_paths: a file or folder agents may read, which the final
// presenter may also write when Write is set, except below Protected.
type ContextPath struct {
	Path      string
	Write     bool
	Protected []string
}

// Tools are an agent's tools besides the workflow ones.
type Tools struct {
	// Cwd gives the agent a private workspace with file tools (the value names it).
	Cwd        string
	MCPServers []MCPServer
	// AllowedTools and ExcludeTools filter MCP tools by the server's own names.
	AllowedTools, ExcludeTools []string
	ContextPaths               []ContextPath
	// CommandLine enables execute_command in the workspace.
	CommandLine             bool
	AllowedCommands         []string
	BlockedCommands         []string
	EnforceReadBeforeDelete bool
	// CommandEnv (command_line_env_passthrough, massgen's own key) names the environment
	// variables commands get besides the default allow-list; NAME_* is a prefix.
	CommandEnv []string
	// CustomTools (custom_tools) are functions offered as tools, one per function.
	CustomTools []CustomTool
	// ExecutionMode (command_line_execution_mode) is where commands run: "local" (or "") on
	// this machine, "srt" in a bubblewrap sandbox that the Srt* fields tune.
	ExecutionMode string
	// SrtReadMode (command_line_srt_read_mode): confined (""), strict or open.
	SrtReadMode string
	// SrtAllowRead and SrtDenyRead (command_line_srt_allow_read, _deny_read) are paths the
	// sandbox shows read-only, and hides; ~ is the home directory.
	SrtAllowRead, SrtDenyRead []string
	// SrtAllowedDomains (command_line_srt_network_allowed_domains) are the hosts a sandboxed
	// command may reach, through a filtering proxy: example.com, or *.example.com for its
	// subdomains.
	SrtAllowedDomains []string
	// CodeTools (enable_code_based_tools) offers the MCP tools as code the agent's commands
	// call, except those of DirectMCPServers; CustomToolsPath is copied in without
	// ExcludeCustomTools; SharedToolsDir, when set, holds the generated code instead of the
	// workspace.
	CodeTools                            bool
	CustomToolsPath, SharedToolsDir      string
	ExcludeCustomTools, DirectMCPServers []string
	// Media are the media tools (enable_multimodal_tools and friends, keys_media.go); the
	// orchestrator's settings apply through Media.Over.
	Media Media
}

var (
	mcpName = lazy.Regexp(`^[A-Za-z0-9_-]{1,100}$`)
	envName = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]{0,200}\*?$`)
)

func mcp(f func(s *MCPServer, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { f(t.mcp, v) }
}

func mcpKeys() []Key {
	return []Key{
		{Section: secMCP, Name: "name", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "s",
			Doc: "Letters, digits, _ or - (at most 100); the key in the mapping form.", set: mcp(func(s *MCPServer, v value) { s.Name = v.s })},
		{Section: secMCP, Name: "type", Type: TypeString, Default: "stdio", Status: Implemented, Since: "0.1.12", ex: "stdio",
			Doc: "stdio or streamable-http (sse is refused).", raw: mcpType},
		{Section: secMCP, Name: "command", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "x",
			Doc: "stdio: the program that runs the server.", set: mcp(func(s *MCPServer, v value) { s.Command = v.s })},
		{Section: secMCP, Name: "args", Type: TypeStrings, Status: Implemented, Since: "0.1.12",
			Doc: "stdio: its arguments (${VAR} expanded).", set: mcp(func(s *MCPServer, v value) { s.Args = v.list })},
		{Section: secMCP, Name: "env", Type: TypeStringMap, Status: Implemented, Since: "0.1.12", ex: "{K: v}",
			Doc: "stdio: its environment (${VAR} expanded).", set: mcp(func(s *MCPServer, v value) { s.Env = v.m })},
		{Section: secMCP, Name: "cwd", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "d",
			Doc: "stdio: its working folder.", set: mcp(func(s *MCPServer, v value) { s.Cwd = v.s })},
		{Section: secMCP, Name: "url", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "http://localhost:1/mcp",
			Doc: "streamable-http: the server's URL.", set: mcp(func(s *MCPServer, v value) { s.URL = v.s })},
		{Section: secMCP, Name: "headers", Type: TypeStringMap, Status: Implemented, Since: "0.1.12", ex: "{K: v}",
			Doc: "streamable-http: request headers (${VAR} expanded).", set: mcp(func(s *MCPServer, v value) { s.Headers = v.m })},
		{Section: secMCP, Name: "timeout", Type: TypeSeconds, Status: Implemented, Since: "0.1.12",
			Doc: "Bounds one tool call.", set: mcp(func(s *MCPServer, v value) { s.Timeout = v.d })},
		{Section: secMCP, Name: "http_read_timeout", Type: TypeSeconds, Default: "300", Status: Ignored, Since: "0.1.12",
			Doc: "The per-call timeout already bounds every read."},
		// MassGen's executable allow-list and URL checks guard against configs from strangers; here
		// the config's author chooses what runs. Say so rather than let a reader believe the
		// policy holds.
		{Section: secMCP, Name: "security", Type: TypeMapping, Status: Ignored, Since: "0.1.12", warn: true, ex: "{level: high}",
			msg:     "`security` is not enforced: the server runs as configured (command, url)",
			Instead: "remove it, and only run configs whose mcp_servers you trust", Doc: "MassGen's executable and URL policy."},
		{Section: secMCP, Name: "allowed_tools", Type: TypeStrings, Status: Implemented, Since: "0.1.12",
			Doc: "Only these tools of the server.", set: mcp(func(s *MCPServer, v value) { s.AllowedTools = v.list })},
		{Section: secMCP, Name: "exclude_tools", Type: TypeStrings, Status: Implemented, Since: "0.1.12",
			Doc: "Tools of the server to leave out.", set: mcp(func(s *MCPServer, v value) { s.ExcludeTools = v.list })},
		{Section: secMCP, Name: "read_only", Type: TypeBool, Default: "false", Status: Implemented, Since: "port",
			Doc: "Every tool of the server only reads: permissions.role: read-only runs them (otherwise it refuses MCP tools it cannot tell are reads). The server's own readOnlyHint does not count.",
			set: mcp(func(s *MCPServer, v value) { s.ReadOnly = v.b })},
		{Section: secMCP, Name: "read_only_tools", Type: TypeStrings, Status: Implemented, Since: "port", ex: "[get_issue, search_*]",
			Doc: "These tools of the server (its own names; * matches any run of characters) only read: permissions.role: read-only runs them.",
			set: mcp(func(s *MCPServer, v value) { s.ReadOnlyTools = v.list })},
	}
}

func contextPathKeys() []Key {
	return []Key{
		{Section: secContextPath, Name: "path", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: ".",
			Doc: "A file or folder; it must exist when massgen runs.", set: func(_ *walker, t *target, v value) { t.cp.Path = v.s }},
		{Section: secContextPath, Name: "permission", Type: TypeEnum, Enum: []string{"read", "write"}, Default: "read", Status: Implemented,
			Since: "0.1.12", Doc: "write lets the final presenter write there.",
			set: func(_ *walker, t *target, v value) { t.cp.Write = v.s == "write" }},
		{Section: secContextPath, Name: "protected_paths", Type: TypeStrings, Status: Implemented, Since: "0.1.12",
			Doc: "Paths below it that stay read-only.", set: func(_ *walker, t *target, v value) { t.cp.Protected = v.list }},
	}
}

// envPassthrough reads command_line_env_passthrough: variable names and NAME_* prefixes.
func envPassthrough(w *walker, t *target, g field) {
	items, _ := w.list(g)
	for _, it := range items {
		if s, ok := w.str(it); ok && !envName().MatchString(s) {
			w.errf(it, "write a variable name such as GITHUB_TOKEN, or a prefix such as NPM_CONFIG_*", "`%s` is not an environment variable name", clip(s))
		} else if ok {
			t.backend.Tools.CommandEnv = append(t.backend.Tools.CommandEnv, s)
		}
	}
}

func (w *walker) regexList(f field) []string {
	items, _ := w.list(f)
	var out []string
	for _, it := range items {
		s, ok := w.str(it)
		if !ok {
			continue
		}
		if _, err := regexp.Compile(s); err != nil {
			w.errf(it, "write a Go regular expression", "%s is not a valid regular expression: %v", it.key, err)
			continue
		}
		out = append(out, s)
	}
	return out
}

// mcpServers reads mcp_servers in list form ([{name: x, ...}]) or map form ({x: {...}}).
func (w *walker) mcpServers(f field, t *target) []MCPServer {
	var out []MCPServer
	seen := map[string]bool{}
	add := func(s MCPServer, at field) {
		if s.Name == "" {
			return
		}
		if seen[s.Name] {
			w.errf(at, "give each server its own name", "mcp server `%s` is declared twice", clip(s.Name))
			return
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	if kind(f.val) == "a mapping" {
		fields, _ := w.mapping(f, 2)
		for _, e := range fields {
			g := child(f.loc, e)
			add(w.mcpServer(g, g.key, t), g)
		}
		return out
	}
	items, ok := w.list(f)
	if !ok {
		return nil
	}
	for _, it := range items {
		add(w.mcpServer(it, "", t), it)
	}
	return out
}

func (w *walker) mcpServer(f field, name string, t *target) MCPServer {
	s := MCPServer{Name: name, Type: "stdio"}
	switch {
	case f.val == nil:
		w.errf(f, "write {name: ..., command: ...} or {name: ..., type: streamable-http, url: ...}", "%s must be a mapping, not empty", f.key)
		return MCPServer{}
	case kind(f.val) != "a mapping":
		w.mapping(f, 2)
		return MCPServer{}
	}
	sub := *t
	sub.mcp = &s
	w.walk(secMCP, f, &sub)
	return s
}

func mcpType(w *walker, t *target, g field) {
	typ, ok := w.str(g)
	if !ok {
		return
	}
	switch typ {
	case "stdio", "streamable-http":
		t.mcp.Type = typ
	case "sse":
		t.mcp.Type = ""
		w.errf(g, "use `type: streamable-http`", "the sse transport is deprecated and not supported")
	default:
		t.mcp.Type = ""
		w.errf(g, "use `stdio` or `streamable-http`", "unknown mcp server type `%s`", clip(typ))
	}
}

// mcpAfter checks a server's required keys once it is read.
func mcpAfter(w *walker, t *target, f field, _ map[string]field) {
	s := t.mcp
	w.checkVars(f, *s)
	switch {
	case s.Name == "":
		w.errAt(f.loc, "missing required key `name`", "add name: with letters, digits, _ or -", f.raw)
	case !mcpName().MatchString(s.Name):
		w.errAt(f.loc, fmt.Sprintf("invalid mcp server name `%s`", clip(s.Name)), "use letters, digits, _ or - (at most 100)", f.raw)
	}
	switch {
	case s.Type == "stdio" && s.Command == "":
		w.errAt(f.loc, "missing required key `command`", "add command: with the program that runs the server", f.raw)
	case s.Type == "streamable-http" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
		w.errAt(f.loc, "streamable-http needs an http(s) url", "add url: http://host:port/mcp", f.raw)
	case strings.Contains(s.Cwd, ".."):
		w.errAt(f.loc+".cwd", "cwd must not contain ..", "name a folder without ..", f.raw)
	}
}

func (w *walker) contextPaths(f field, t *target) []ContextPath {
	return walkEach(w, f, t, secContextPath, "", func(t *target, x *ContextPath) { t.cp = x },
		func(x *ContextPath) bool { return x.Path != "" })
}

// contextPathAfter checks that a context path names a path, and warns when it does not exist
// here: the file is checked, not the machine, so a missing path fails the run, not validation.
func contextPathAfter(w *walker, t *target, f field, _ map[string]field) {
	if t.cp.Path == "" {
		w.errAt(f.loc, "missing required key `path`", "add path: with a file or folder", f.raw)
		return
	}
	if _, err := os.Stat(t.cp.Path); err != nil {
		w.warnAt(f.loc, fmt.Sprintf("context path `%s` does not exist here", clip(t.cp.Path)), "it must exist when massgen runs", f.raw)
	}
}

var envRef = lazy.Regexp(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// checkVars warns about ${VAR}s that are not set here: validation runs without secrets, so it
// is not an error until massgen runs.
func (w *walker) checkVars(f field, s MCPServer) {
	texts := append([]string{}, s.Args...)
	for _, m := range []map[string]string{s.Env, s.Headers} {
		for _, v := range m {
			texts = append(texts, v)
		}
	}
	seen := map[string]bool{}
	for _, t := range texts {
		for _, m := range envRef().FindAllStringSubmatch(t, -1) {
			if v, ok := os.LookupEnv(m[1]); (!ok || v == "") && !seen[m[1]] {
				seen[m[1]] = true
				w.warnAt(f.loc, fmt.Sprintf("${%s} is not set here", m[1]), "set it before massgen runs this server", f.raw)
			}
		}
	}
}
