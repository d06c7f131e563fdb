package config

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

var permissionModes = []string{"default", "acceptEdits", "bypassPermissions", "plan"}

// commonBackendKeys are the backend keys this package interprets for network types; every
// other key is passed through to the provider in Backend.Params.
var commonBackendKeys = []string{"type", "model", "api_key", "base_url", "enable_web_search",
	"enable_code_execution", "enable_code_interpreter", "allowed_tools", "exclude_tools", "disallowed_tools",
	"permission_mode", "system_prompt", "append_system_prompt", "custom_tools", "mcp_servers", "cwd",
	"upload_files", "enable_mcp_command_line", "context_paths"}

// typeHint is the suggestion for a missing or unknown type.
func typeHint() string {
	return "add type: scripted, openai, claude, ..."
}

// backend reads an agent's backend block. voteF is the scripted vote key when it names a
// label, for the cross-agent check.
func (w *walker) backend(f field) (b Backend, voteF *field) {
	if _, ok := f.val.(*ast.MappingNode); !ok {
		what := "empty"
		if f.val != nil {
			what = kind(f.val)
		}
		w.errf(f, typeHint(), "backend must be a mapping, not %s", what)
		return b, nil
	}
	fields, _ := w.mapping(f, 1)
	bt, known := w.backendType(f, fields)
	b.Type = bt.Name
	if known && bt.Protocol == ProtocolScripted {
		voteF = w.scripted(f, fields, &b)
		return b, voteF
	}
	w.networkBackend(f, fields, bt, known, &b)
	return b, nil
}

// backendType finds and checks backend.type. known is false when it is missing or unknown.
func (w *walker) backendType(f field, fields []field) (BackendType, bool) {
	var tf *field
	for _, e := range fields {
		if e.key == "type" {
			g := child(f.loc, e)
			tf = &g
		}
	}
	if tf == nil {
		w.errAt(f.loc, `missing required key "type"`, typeHint(), f.keyN, f.raw)
		return BackendType{}, false
	}
	if tf.val == nil {
		w.errf(*tf, typeHint(), "type must be a string, not empty")
		return BackendType{}, false
	}
	name, ok := w.str(*tf)
	if !ok {
		return BackendType{}, false
	}
	bt, ok := BackendTypes[name]
	if !ok {
		names := BackendTypeNames()
		sugg := "valid types: " + strings.Join(names, ", ")
		if c := closest(name, names); c != "" {
			sugg = fmt.Sprintf("did you mean `%s`? %s", c, sugg)
			if strings.EqualFold(c, name) {
				sugg = fmt.Sprintf("did you mean `%s`? types are case-sensitive; %s", c, "valid types: "+strings.Join(names, ", "))
			}
		}
		w.errf(*tf, sugg, "unknown backend type '%s'", clip(name))
		return BackendType{Name: name}, false
	}
	switch {
	case bt.Refused:
		w.errf(*tf, "use type: scripted", "backend type `%s` is not supported yet", name)
	case !bt.Implemented:
		w.errf(*tf, "use type: scripted for offline agents", "backend type `%s` is not supported yet in this build", name)
	}
	return bt, true
}

// networkBackend reads the keys of a non-scripted backend.
func (w *walker) networkBackend(f field, fields []field, bt BackendType, known bool, b *Backend) {
	var allowedF, excludeF, webSearchF *field
	for _, e := range fields {
		g := child(f.loc, e)
		switch g.key {
		case "type":
		case "model":
			b.Model, _ = w.str(g)
		case "api_key":
			// Never echo the value: it is a secret.
			switch g.val.(type) {
			case nil, *ast.StringNode, *ast.LiteralNode:
				b.APIKey, _ = w.str(g)
			default:
				w.errAt(g.loc, "api_key must be a string",
					"quote the key, or leave api_key out to read it from the environment", g.raw, g.keyN)
			}
		case "base_url":
			b.BaseURL, _ = w.str(g)
		case "enable_web_search":
			b.Hosted.WebSearch = w.capability(g, bt, known, bt.WebSearch) || b.Hosted.WebSearch
			webSearchF = &g
		case "enable_code_execution":
			b.Hosted.CodeExecution = w.capability(g, bt, known, bt.CodeExecution) || b.Hosted.CodeExecution
		case "enable_code_interpreter":
			b.Hosted.CodeExecution = w.capability(g, bt, known, bt.CodeInterpreter) || b.Hosted.CodeExecution
		case "disallowed_tools":
			w.strList(g) // claude_code's native-tool filter: checked, unused
		case "allowed_tools", "exclude_tools":
			w.toolKey(g, &b.Tools)
			if g.key == "allowed_tools" {
				allowedF = &g
			} else {
				excludeF = &g
			}
		case "permission_mode":
			w.enum(g, permissionModes)
		case "system_prompt", "append_system_prompt":
			w.errKey(g, "use the agent-level system_message instead", "`%s` is not allowed inside backend", g.key)
		case "custom_tools", "upload_files":
			w.emptyOnly(g)
		default:
			if w.toolKey(g, &b.Tools) {
				continue
			}
			if c := closest(g.key, commonBackendKeys); c != "" && editDistance(strings.ToLower(g.key), c) <= 2 {
				w.warnAt(g.loc, fmt.Sprintf("`%s` is passed to the provider as a request parameter", clip(g.key)),
					fmt.Sprintf("did you mean `%s`?", c), g.keyN)
			}
			if b.Params == nil {
				b.Params = map[string]any{}
			}
			b.Params[g.key] = w.decode(g, g.raw, 0)
		}
	}
	if allowedF != nil && excludeF != nil && !empty(allowedF.val) && !empty(excludeF.val) {
		w.warnAt(excludeF.loc, "both allowed_tools and exclude_tools are set",
			"allowed_tools already limits the tools; exclude_tools only removes from that list", excludeF.keyN)
	}
	if b.Hosted.WebSearch && bt.Protocol == ProtocolChat && hasSearchParameters(b.Params) {
		// Grok's search is the search_parameters body field; MassGen refuses both at once too.
		w.errKey(*webSearchF, "remove search_parameters, or enable_web_search to keep your own",
			"enable_web_search sets search_parameters, which the backend already sets")
	}
	if !known {
		return
	}
	if b.Model == "" {
		switch bt.DefaultModel {
		case CustomModel:
			w.errAt(f.loc, `missing required key "model"`,
				fmt.Sprintf("backend type `%s` has no default model; add model: with the model name to use", bt.Name),
				f.keyN, f.raw)
		default:
			b.Model = bt.DefaultModel
		}
	}
	if b.BaseURL == "" {
		b.BaseURL = bt.DefaultBaseURL
	}
}

// hasSearchParameters reports whether params set search_parameters, at the top or in extra_body.
func hasSearchParameters(params map[string]any) bool {
	if _, ok := params["search_parameters"]; ok {
		return true
	}
	eb, _ := params["extra_body"].(map[string]any)
	_, ok := eb["search_parameters"]
	return ok
}

// capability checks an enable_* switch: a real boolean, and when on, supported by the type. It
// reports whether the switch turns a hosted tool on.
func (w *walker) capability(f field, bt BackendType, known, supported bool) bool {
	on, ok := w.boolean(f)
	switch {
	case !ok || !on || !known:
		return false
	case !supported:
		w.errKey(f, "remove it or set it to false; MCP tools (mcp_servers) can stand in", "backend type `%s` does not support %s", bt.Name, f.key)
		return false
	}
	return true
}
