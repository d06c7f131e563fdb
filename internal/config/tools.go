package config

import (
	"fmt"
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
}

var (
	mcpKeys = []string{"name", "type", "command", "args", "env", "cwd", "url", "headers", "timeout",
		"http_read_timeout", "allowed_tools", "exclude_tools", "security"}
	contextPathKeys = []string{"path", "permission", "protected_paths"}
	mcpName         = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)
	envName         = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,200}\*?$`)
)

// toolKey reads one of the tool keys of a backend into t; it reports whether key was one.
func (w *walker) toolKey(g field, t *Tools) bool {
	switch g.key {
	case "cwd":
		if s, ok := w.str(g); ok {
			if strings.Contains(s, "..") {
				w.errf(g, "name a folder without ..", "cwd must not contain ..")
			} else {
				t.Cwd = s
			}
		}
	case "mcp_servers":
		t.MCPServers = w.mcpServers(g)
	case "allowed_tools":
		t.AllowedTools, _ = w.strList(g)
	case "exclude_tools":
		t.ExcludeTools, _ = w.strList(g)
	case "context_paths":
		t.ContextPaths = w.contextPaths(g)
	case "enable_mcp_command_line":
		t.CommandLine, _ = w.boolean(g)
	case "command_line_execution_mode":
		if s, ok := w.enum(g, []string{"local", "docker"}); ok && s == "docker" {
			w.errKey(g, "use local (the default)", "`command_line_execution_mode: docker` is not supported yet")
		}
	case "command_line_allowed_commands":
		t.AllowedCommands = w.regexList(g)
	case "command_line_blocked_commands":
		t.BlockedCommands = w.regexList(g)
	case "command_line_env_passthrough":
		items, _ := w.list(g)
		for _, it := range items {
			if s, ok := w.str(it); ok && !envName.MatchString(s) {
				w.errf(it, "write a variable name such as GITHUB_TOKEN, or a prefix such as NPM_CONFIG_*", "%q is not an environment variable name", s)
			} else if ok {
				t.CommandEnv = append(t.CommandEnv, s)
			}
		}
	case "enforce_read_before_delete":
		if on, ok := w.boolean(g); ok {
			t.EnforceReadBeforeDelete = on
		}
	default:
		return false
	}
	return true
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
func (w *walker) mcpServers(f field) []MCPServer {
	var out []MCPServer
	seen := map[string]bool{}
	add := func(s MCPServer, at field) {
		if s.Name == "" {
			return
		}
		if seen[s.Name] {
			w.errf(at, "give each server its own name", "mcp server %q is declared twice", s.Name)
			return
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	if fields, isMap := w.mappingQuiet(f); isMap {
		for _, e := range fields {
			g := child(f.loc, e)
			add(w.mcpServer(g, g.key), g)
		}
		return out
	}
	items, ok := w.list(f)
	if !ok {
		return nil
	}
	for _, it := range items {
		add(w.mcpServer(it, ""), it)
	}
	return out
}

func (w *walker) mcpServer(f field, name string) MCPServer {
	s := MCPServer{Name: name, Type: "stdio"}
	fields, ok := w.mapping(f, 2)
	if !ok {
		if f.val == nil {
			w.errf(f, "write {name: ..., command: ...} or {name: ..., type: streamable-http, url: ...}", "%s must be a mapping, not empty", f.key)
		}
		return MCPServer{}
	}
	for _, e := range fields {
		g := child(f.loc, e)
		switch g.key {
		case "name":
			s.Name, _ = w.str(g)
		case "type":
			if t, ok := w.str(g); ok {
				switch t {
				case "stdio", "streamable-http":
					s.Type = t
				case "sse":
					s.Type = ""
					w.errf(g, "use type: streamable-http", "the sse transport is deprecated and not supported")
				default:
					s.Type = ""
					w.errf(g, "use stdio or streamable-http", "unknown mcp server type %q", clip(t))
				}
			}
		case "command":
			s.Command, _ = w.str(g)
		case "args":
			s.Args, _ = w.strList(g)
		case "env":
			s.Env = w.strMap(g)
		case "cwd":
			s.Cwd, _ = w.str(g)
		case "url":
			s.URL, _ = w.str(g)
		case "headers":
			s.Headers = w.strMap(g)
		case "timeout":
			s.Timeout, _ = w.seconds(g)
		case "http_read_timeout":
			// Accepted for compatibility: the per-call timeout already bounds every read.
		case "security":
			// MassGen's executable allow-list and URL checks guard against configs from
			// strangers; here the config's author chooses what runs. Say so rather than let a
			// reader believe the policy holds.
			w.warnAt(g.loc, "`security` is not enforced: the server runs as configured (command, url)",
				"remove it, and only run configs whose mcp_servers you trust", g.keyN)
		case "allowed_tools":
			s.AllowedTools, _ = w.strList(g)
		case "exclude_tools":
			s.ExcludeTools, _ = w.strList(g)
		default:
			w.errKey(g, didYouMean(g.key, mcpKeys), "unknown mcp server key `%s`", clip(g.key))
		}
	}
	w.checkVars(f, s)
	switch {
	case s.Name == "":
		w.errAt(f.loc, `missing required key "name"`, "add name: with letters, digits, _ or -", f.raw)
	case !mcpName.MatchString(s.Name):
		w.errAt(f.loc, fmt.Sprintf("invalid mcp server name %q", clip(s.Name)), "use letters, digits, _ or - (at most 100)", f.raw)
	}
	switch {
	case s.Type == "stdio" && s.Command == "":
		w.errAt(f.loc, `missing required key "command"`, "add command: with the program that runs the server", f.raw)
	case s.Type == "streamable-http" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
		w.errAt(f.loc, "streamable-http needs an http(s) url", "add url: http://host:port/mcp", f.raw)
	case strings.Contains(s.Cwd, ".."):
		w.errAt(f.loc+".cwd", "cwd must not contain ..", "name a folder without ..", f.raw)
	}
	return s
}

// mappingQuiet reads f as a mapping when it is one, without reporting anything otherwise.
func (w *walker) mappingQuiet(f field) ([]field, bool) {
	if kind(f.val) != "a mapping" {
		return nil, false
	}
	return w.mapping(f, 2)
}

func (w *walker) strMap(f field) map[string]string {
	fields, ok := w.mapping(f, 3)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, e := range fields {
		g := child(f.loc, e)
		if s, ok := w.str(g); ok {
			out[g.key] = s
		}
	}
	return out
}

func (w *walker) contextPaths(f field) []ContextPath {
	items, _ := w.list(f)
	var out []ContextPath
	for _, it := range items {
		fields, ok := w.mapping(it, 2)
		if !ok {
			continue
		}
		var cp ContextPath
		for _, e := range fields {
			g := child(it.loc, e)
			switch g.key {
			case "path":
				cp.Path, _ = w.str(g)
			case "permission":
				if p, ok := w.enum(g, []string{"read", "write"}); ok {
					cp.Write = p == "write"
				}
			case "protected_paths":
				cp.Protected, _ = w.strList(g)
			default:
				w.errKey(g, didYouMean(g.key, contextPathKeys), "unknown context path key `%s`", clip(g.key))
			}
		}
		if cp.Path == "" {
			w.errAt(it.loc, `missing required key "path"`, "add path: with a file or folder", it.raw)
			continue
		}
		// The file is checked, not the machine: a missing path fails the run, not validation.
		if _, err := os.Stat(cp.Path); err != nil {
			w.warnAt(it.loc, fmt.Sprintf("context path %q does not exist here", clip(cp.Path)),
				"it must exist when massgen runs", it.raw)
		}
		out = append(out, cp)
	}
	return out
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

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
		for _, m := range envRef.FindAllStringSubmatch(t, -1) {
			if v, ok := os.LookupEnv(m[1]); (!ok || v == "") && !seen[m[1]] {
				seen[m[1]] = true
				w.warnAt(f.loc, fmt.Sprintf("${%s} is not set here", m[1]), "set it before massgen runs this server", f.raw)
			}
		}
	}
}
