package permission

import (
	"massgen/internal/permission/rule"

	"encoding/json"
	"path/filepath"
	"strings"
)

// Target is one thing a call acts on: an action and its target (a path, a command line, a
// URL, server/tool). A call may have several (move_file writes its source and destination).
type Target struct {
	Action string `json:"action"`
	Target string `json:"target"`
	// path marks a file target, matched against rules resolved in the workspace.
	path bool
}

// MaxTargets caps the targets one call is checked for (read_multiple_files lists paths).
const MaxTargets = 64

// workspaceTools maps massgen's own tools to what they do to which argument.
var workspaceTools = map[string][]struct{ action, arg string }{
	"read_file":              {{rule.ActionRead, "path"}},
	"read_multiple_files":    {{rule.ActionRead, "paths"}},
	"list_directory":         {{rule.ActionRead, "path"}},
	"search_files":           {{rule.ActionRead, "path"}},
	"compare_files":          {{rule.ActionRead, "path1"}, {rule.ActionRead, "path2"}},
	"compare_directories":    {{rule.ActionRead, "path1"}, {rule.ActionRead, "path2"}},
	"write_file":             {{rule.ActionWrite, "path"}},
	"edit_file":              {{rule.ActionWrite, "path"}},
	"create_directory":       {{rule.ActionWrite, "path"}},
	"delete_file":            {{rule.ActionWrite, "path"}},
	"move_file":              {{rule.ActionWrite, "source"}, {rule.ActionWrite, "destination"}},
	"copy_file":              {{rule.ActionRead, "source"}, {rule.ActionWrite, "destination"}},
	"execute_command":        {{rule.ActionCommand, "command"}},
	"start_background_shell": {{rule.ActionCommand, "command"}},
}

// shellControls act on background shells a checked start_background_shell started; they run
// nothing new, so no rule applies to them.
var shellControls = map[string]bool{
	"get_background_shell_output": true, "get_background_shell_status": true,
	"kill_background_shell": true, "list_background_shells": true,
}

// MassGen's name hints (rules.py) for tools it does not know: MCP tools of other servers and
// custom tools are classified by words in their names.
var (
	commandHints = []string{"execute_command", "bash", "shell", "exec", "run_command", "terminal"}
	networkHints = []string{"fetch", "read_url", "websearch", "web_search", "browse"}
	writeHints   = []string{"write", "edit", "create", "move", "copy", "apply_patch", "notebook", "delete", "remove"}
	readHints    = []string{"read", "grep", "glob", "list", "view", "search", "cat"}
	pathKeys     = []string{"path", "file_path", "destination", "destination_path", "target", "notebook_path"}
	// The MCP servers whose tools are file operations (MassGen's framework servers).
	filesystemServers = map[string]bool{"filesystem": true, "workspace_tools": true, "workspace_copy": true}
)

// Classify returns what the call of tool with args (the model's JSON) acts on; checked is
// false for calls no rule applies to. dir is the agent's workspace: relative paths resolve
// there, as the file tools resolve them. Arguments that are not JSON leave the targets empty;
// the tool itself refuses them.
func Classify(tool, args, dir string) (targets []Target, checked bool) {
	if shellControls[tool] {
		return nil, false
	}
	var params map[string]any
	_ = json.Unmarshal([]byte(args), &params)
	if uses, ok := workspaceTools[tool]; ok {
		for _, u := range uses {
			if u.action == rule.ActionCommand {
				targets = append(targets, Target{Action: rule.ActionCommand, Target: str(params, u.arg)})
				continue
			}
			vals := strs(params, u.arg)
			if len(vals) == 0 {
				vals = []string{"."} // the tools default to the workspace
			}
			for _, v := range vals {
				targets = append(targets, fileTarget(u.action, v, dir))
			}
		}
		return capTargets(targets), true
	}
	lower := strings.ToLower(tool)
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		server, name, found := strings.Cut(rest, "__")
		if !found {
			name = server
		}
		nameLower := strings.ToLower(name)
		if hasAny(lower, commandHints) {
			return []Target{{Action: rule.ActionCommand, Target: commandArg(params)}}, true
		}
		if filesystemServers[server] {
			if a := fsAction(nameLower); a != "" {
				return []Target{fileTarget(a, firstPath(params), dir)}, true
			}
		}
		if hasAny(nameLower, networkHints) {
			return []Target{{Action: rule.ActionURL, Target: urlArg(params)}}, true
		}
		return []Target{{Action: rule.ActionMCP, Target: server + "/" + name}}, true
	}
	switch {
	case hasAny(lower, commandHints):
		return []Target{{Action: rule.ActionCommand, Target: commandArg(params)}}, true
	case hasAny(lower, networkHints):
		return []Target{{Action: rule.ActionURL, Target: urlArg(params)}}, true
	case hasAny(lower, writeHints):
		return []Target{fileTarget(rule.ActionWrite, firstPath(params), dir)}, true
	case hasAny(lower, readHints):
		return []Target{fileTarget(rule.ActionRead, firstPath(params), dir)}, true
	}
	return []Target{{Action: rule.ActionMCP, Target: tool}}, true
}

func fsAction(name string) string {
	switch {
	case hasAny(name, writeHints):
		return rule.ActionWrite
	case hasAny(name, readHints):
		return rule.ActionRead
	}
	return ""
}

// fileTarget resolves p as the file tools do: relative to the workspace, cleaned.
func fileTarget(action, p, dir string) Target {
	if p == "" {
		return Target{Action: action, Target: "", path: true}
	}
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	return Target{Action: action, Target: filepath.Clean(p), path: true}
}

func capTargets(ts []Target) []Target {
	if len(ts) > MaxTargets {
		return ts[:MaxTargets]
	}
	return ts
}

func hasAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func str(params map[string]any, key string) string {
	s, _ := params[key].(string)
	return s
}

// strs reads a string or a list of strings.
func strs(params map[string]any, key string) []string {
	switch v := params[key].(type) {
	case string:
		if v != "" {
			return []string{v}
		}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func commandArg(params map[string]any) string {
	if s := str(params, "command"); s != "" {
		return s
	}
	return str(params, "cmd")
}

func urlArg(params map[string]any) string {
	if s := str(params, "url"); s != "" {
		return s
	}
	return str(params, "domain")
}

func firstPath(params map[string]any) string {
	for _, k := range pathKeys {
		if s := str(params, k); s != "" {
			return s
		}
	}
	return ""
}
