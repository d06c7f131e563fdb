package cliagent

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"massgen/internal/mcptool"
)

// codexSettings is a Codex config as top-level keys, each a dotted path with a TOML value
// (tables inline). One list renders both ways Codex takes it: as config.toml, whose dotted
// keys TOML reads as the nested tables, and as `-c path=value` flags, which Codex splits on
// the dots and whose values it parses as TOML. Paths are bare keys: server names are
// letters, digits, _ and - (the config checks).
type codexSettings []tomlKV

type tomlKV struct {
	key   string
	value any // string, int, bool, []string, map[string]string or []tomlKV
}

func (c codexSettings) file() string {
	var b strings.Builder
	for _, kv := range c {
		fmt.Fprintf(&b, "%s = %s\n", kv.key, tomlValue(kv.value))
	}
	return b.String()
}

func (c codexSettings) flags() []string {
	out := make([]string, 0, 2*len(c))
	for _, kv := range c {
		out = append(out, "-c", kv.key+"="+tomlValue(kv.value))
	}
	return out
}

// codexConfig is the config of a run: massgen's provider when a base_url is set, no
// approvals (nobody is there to give them), writes confined to the workspace and the
// writable context paths by Codex's sandbox, massgen's MCP server and the user's.
func codexConfig(a *Agent, instructions string) codexSettings {
	mode := "workspace-write"
	if a.sandbox != nil {
		// massgen's sandbox bounds what the commands write; Codex's own, nested in it, could
		// not start (it allows no further user namespaces).
		mode = "danger-full-access"
	}
	c := codexSettings{
		{"approval_policy", "never"},
		{"sandbox_mode", mode},
		{"model_instructions_file", instructions},
	}
	if a.o.ReasoningEffort != "" {
		c = append(c, tomlKV{"model_reasoning_effort", a.o.ReasoningEffort})
	}
	if a.o.BaseURL != "" {
		p := []tomlKV{{"name", "massgen"}, {"base_url", a.o.BaseURL}, {"wire_api", "responses"}}
		if a.o.APIKey != "" {
			// Without a key (a local server), Codex would refuse to start for want of the variable.
			p = append(p, tomlKV{"env_key", codexKeyEnv})
		}
		c = append(c, tomlKV{"model_provider", "massgen"}, tomlKV{"model_providers.massgen", p})
	}
	c = append(c, tomlKV{"check_for_update_on_startup", false}, tomlKV{"mcp_servers." + ServerName, []tomlKV{
		{"url", a.tools.url}, {"http_headers", map[string]string{secretHeader: a.tools.secret}},
		{"tool_timeout_sec", 86400}, {"startup_timeout_sec", 30}, {"default_tools_approval_mode", "approve"},
	}})
	for _, s := range a.mcp {
		c = append(c, tomlKV{"mcp_servers." + s.Name, codexMCP(s)})
	}
	sandbox := []tomlKV{{"network_access", false}, {"exclude_slash_tmp", true}}
	if len(a.ws.Write) > 0 {
		sandbox = append(sandbox, tomlKV{"writable_roots", a.ws.Write})
	}
	return append(c, tomlKV{"sandbox_workspace_write", sandbox})
}

// codexMCP is a server's table in Codex's config.
func codexMCP(s mcptool.Server) []tomlKV {
	var t []tomlKV
	if isHTTP(s) {
		t = append(t, tomlKV{"url", s.URL})
		if len(s.Headers) > 0 {
			t = append(t, tomlKV{"http_headers", s.Headers})
		}
	} else {
		t = append(t, tomlKV{"command", s.Command}, tomlKV{"args", orEmpty(s).Args})
		if len(s.Env) > 0 {
			t = append(t, tomlKV{"env", s.Env})
		}
		if s.Cwd != "" {
			t = append(t, tomlKV{"cwd", s.Cwd})
		}
	}
	t = append(t, tomlKV{"tool_timeout_sec", int(s.CallTimeout().Seconds())}, tomlKV{"startup_timeout_sec", 30},
		tomlKV{"default_tools_approval_mode", "approve"})
	if len(s.AllowedTools) > 0 {
		t = append(t, tomlKV{"enabled_tools", serverTools(s, s.AllowedTools)})
	}
	if ex := serverTools(s, s.ExcludeTools); len(ex) > 0 {
		t = append(t, tomlKV{"disabled_tools", ex})
	}
	return t
}

// tomlValue is v in TOML, on one line.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case int, bool:
		return fmt.Sprint(v)
	case []string:
		q := make([]string, len(v))
		for k, s := range v {
			q[k] = tomlString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string]string:
		kvs := make([]tomlKV, 0, len(v))
		for _, k := range sortedKeys(v) {
			kvs = append(kvs, tomlKV{tomlString(k), v[k]})
		}
		return tomlValue(kvs)
	case []tomlKV:
		parts := make([]string, len(v))
		for k, kv := range v {
			parts[k] = kv.key + " = " + tomlValue(kv.value)
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return tomlString(fmt.Sprint(v)) // not built above; a string keeps the config valid
}

// tomlString is s as a TOML basic string. TOML has fewer escapes than Go: control
// characters go as \uXXXX, and invalid UTF-8 (which TOML cannot hold) as U+FFFD.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, string(utf8.RuneError)) {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
