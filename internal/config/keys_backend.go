package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"massgen/internal/lazy"

	"github.com/goccy/go-yaml/ast"

	"massgen/internal/suggest"
)

// agents[].backend: the keys this package interprets. Every other key is a provider request
// parameter, passed through in Backend.Params as MassGen does; the MassGen keys that never
// reach a provider (massgen/backend/_excluded_params.py) are all here, so none of them can.

const (
	needsDocker    = "command_line_execution_mode"
	needsCodeTools = "enable_code_based_tools"
)

var permissionModes = []string{"default", "acceptEdits", "bypassPermissions", "plan"}

// cliString reads a string key of the coding-agent CLIs, and refuses it on every other type
// as MassGen's validator does.
func cliString(set func(*target, string)) func(*walker, *target, field) {
	return func(w *walker, t *target, f field) {
		if f.val == nil {
			return
		}
		if t.known && t.bt.Protocol != ProtocolCLI {
			w.refuse(sections()[secBackend].lookup(f.key), f, nil)
			return
		}
		if s, ok := w.str(f); ok {
			set(t, s)
		}
	}
}

func tools(f func(t *Tools, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { f(&t.backend.Tools, v) }
}

// hosted switches on a provider-side tool the type must support.
func hosted(supported func(BackendType) bool, on func(*HostedTools)) func(*walker, *target, value) {
	return func(w *walker, t *target, v value) {
		switch {
		case !v.b || !t.known:
		case !supported(t.bt):
			w.errKey(v.f, "remove it or set it to `false`; MCP tools (mcp_servers) can stand in",
				"backend type `%s` does not support `%s`", t.bt.Name, v.f.key)
		default:
			on(&t.backend.Hosted)
		}
	}
}

func backendKeys() []Key {
	return append([]Key{
		{Section: secBackend, Name: "type", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "openai",
			Doc: "Backend type; inferred from model when it is missing and the model name is clear (" + strings.Join(modelPrefixes(), ", ") + ").",
			raw: func(*walker, *target, field) {}},
		{Section: secBackend, Name: "model", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "gpt-5-mini",
			Doc: "Model name; the type's default when missing.", set: func(_ *walker, t *target, v value) { t.backend.Model = v.s }},
		{Section: secBackend, Name: "api_key", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "sk-x",
			Doc: "API key; read from the type's environment variable when missing.", raw: apiKey},
		{Section: secBackend, Name: "base_url", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "http://localhost:1/v1",
			Doc: "API endpoint; the type's default when missing.", set: func(_ *walker, t *target, v value) { t.backend.BaseURL = v.s }},
		{Section: secBackend, Name: "enable_web_search", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "The provider's own web search.", ex: "false",
			set: hosted(func(bt BackendType) bool { return bt.WebSearch }, func(h *HostedTools) { h.WebSearch = true })},
		{Section: secBackend, Name: "enable_code_execution", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "The provider's own code execution.",
			set: hosted(func(bt BackendType) bool { return bt.CodeExecution }, func(h *HostedTools) { h.CodeExecution = true })},
		{Section: secBackend, Name: "enable_code_interpreter", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "OpenAI's code interpreter (code execution).",
			set: hosted(func(bt BackendType) bool { return bt.CodeInterpreter }, func(h *HostedTools) { h.CodeExecution = true })},
		{Section: secBackend, Name: "cwd", Type: TypeString, Status: Implemented, Since: "0.1.12", tool: true, ex: "ws",
			Doc: "A private workspace with file tools; the value names it.", check: noDotDot,
			set: tools(func(t *Tools, v value) { t.Cwd = v.s })},
		{Section: secBackend, Name: "mcp_servers", Type: TypeList, Status: Implemented, Since: "0.1.12", tool: true,
			ex: "[{name: s, command: x}]", Doc: "MCP servers (a list, or a mapping by name).",
			raw: func(w *walker, t *target, f field) { t.backend.Tools.MCPServers = w.mcpServers(f, t) }},
		{Section: secBackend, Name: "allowed_tools", Type: TypeStrings, Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "Only these MCP tools (by the server's names). Coding-agent CLIs: only these of the CLI's own tools, and of the user's MCP tools those named mcp__SERVER__TOOL (codex: MCP tools only).", set: tools(func(t *Tools, v value) { t.AllowedTools = v.list })},
		{Section: secBackend, Name: "exclude_tools", Type: TypeStrings, Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "MCP tools to leave out.", set: tools(func(t *Tools, v value) { t.ExcludeTools = v.list })},
		{Section: secBackend, Name: "context_paths", Type: TypeList, Status: Implemented, Since: "0.1.12", tool: true, ex: "[{path: .}]",
			Doc: "Files and folders this agent may read (or write).",
			raw: func(w *walker, t *target, f field) { t.backend.Tools.ContextPaths = w.contextPaths(f, t) }},
		{Section: secBackend, Name: "enable_mcp_command_line", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "execute_command in the workspace.", set: tools(func(t *Tools, v value) { t.CommandLine = v.b })},
		executionModeKey(), // keys_srt.go
		{Section: secBackend, Name: "command_line_allowed_commands", Type: TypeStrings, Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "Regular expressions a command must match.",
			raw: func(w *walker, t *target, f field) { t.backend.Tools.AllowedCommands = w.regexList(f) }},
		{Section: secBackend, Name: "command_line_blocked_commands", Type: TypeStrings, Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "Regular expressions a command must not match.",
			raw: func(w *walker, t *target, f field) { t.backend.Tools.BlockedCommands = w.regexList(f) }},
		{Section: secBackend, Name: "command_line_env_passthrough", Type: TypeStrings, Status: Implemented, Since: "port", tool: true,
			ex: "[GITHUB_TOKEN]", Doc: "Environment variables commands get besides the default allow-list (NAME_* is a prefix).",
			raw: envPassthrough},
		{Section: secBackend, Name: "enforce_read_before_delete", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "A file must be read before it may be deleted.", set: tools(func(t *Tools, v value) { t.EnforceReadBeforeDelete = v.b })},
		{Section: secBackend, Name: "disallowed_tools", Type: TypeStrings, Status: Implemented, Since: "0.1.12", Types: []string{"claude_code", "gemini_cli", "copilot"},
			Doc: "Coding-agent CLIs: native tools the CLI may not use (claude_code's --disallowedTools, gemini_cli's excludeTools, copilot's --deny-tool; Codex CLI has no deny-list).",
			set: func(_ *walker, t *target, v value) { t.backend.CLI.DisallowedTools = v.list }},
		{Section: secBackend, Name: "permission_mode", Type: TypeEnum, Enum: permissionModes, Status: Implemented, Since: "0.1.12", Types: []string{"claude_code"},
			Doc: "Claude Code's permission mode; default and bypassPermissions run as acceptEdits with the allowed tools, since nobody is there to ask.",
			set: func(_ *walker, t *target, v value) { t.backend.CLI.PermissionMode = v.s }},
		{Section: secBackend, Name: "system_prompt", Type: TypeString, Status: Implemented, Since: "0.1.12", Types: typesSpeaking(ProtocolCLI),
			msg: "`system_prompt` is not allowed inside backend", Instead: "use the agent-level system_message instead",
			Doc: "Coding-agent CLIs (claude_code): replaces the CLI's own system prompt; rejected on other types, as in MassGen's validator.",
			raw: cliString(func(t *target, s string) { t.backend.CLI.SystemPrompt = s })},
		{Section: secBackend, Name: "append_system_prompt", Type: TypeString, Status: Implemented, Since: "0.1.12", Types: typesSpeaking(ProtocolCLI),
			msg: "`append_system_prompt` is not allowed inside backend", Instead: "use the agent-level system_message instead",
			Doc: "Coding-agent CLIs: appended to the agent's system_message, as agents[].append_system_prompt is (which every type takes); rejected on other types, as in MassGen's validator.",
			raw: cliString(func(t *target, s string) { t.agent.appendBackend = s })},
		{Section: secBackend, Name: "custom_tools", Type: TypeList, Status: Implemented, Since: "0.1.12", tool: true,
			ex: "[{path: t.py, function: add}]", Doc: "Python functions offered as tools named custom_tool__<name> (see custom_tools[]).",
			raw: func(w *walker, t *target, f field) { t.backend.Tools.CustomTools = w.customTools(f, t) }},
		{Section: secBackend, Name: "max_mcp_message_history", Type: TypeInt, Default: "200", Status: Ignored, Since: "0.1.12",
			Doc: "Messages kept within one tool loop; the engine bounds tool loops with its own caps."},
		{Section: secBackend, Name: "enable_code_based_tools", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.13", tool: true,
			Doc: "The agent's MCP tools as Python code in its workspace (servers/<server>/<tool>.py), which its commands import and call; massgen runs each call (CodeAct). Needs enable_mcp_command_line.",
			set: tools(func(t *Tools, v value) { t.CodeTools = v.b })},
		{Section: secBackend, Name: "custom_tools_path", Type: TypeString, Status: Implemented, Since: "0.1.13", Needs: needsCodeTools, tool: true,
			Doc: "Code-based tools: a folder of your own Python, copied into the workspace as custom_tools/ (relative to where massgen runs).",
			set: tools(func(t *Tools, v value) { t.CustomToolsPath = v.s })},
		{Section: secBackend, Name: "auto_discover_custom_tools", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.13",
			Doc: "Discover MassGen's own tool library.", Why: "MassGen's tool library (massgen/tool/) is not shipped", Instead: "name your tools' folder in custom_tools_path"},
		{Section: secBackend, Name: "exclude_custom_tools", Type: TypeStrings, Status: Implemented, Since: "0.1.13", Needs: needsCodeTools, tool: true,
			Doc: "Code-based tools: entries of custom_tools_path left out of the copy.",
			set: tools(func(t *Tools, v value) { t.ExcludeCustomTools = v.list })},
		{Section: secBackend, Name: "direct_mcp_servers", Type: TypeStrings, Status: Implemented, Since: "0.1.35", Needs: needsCodeTools, tool: true,
			Doc: "Code-based tools: MCP servers whose tools stay direct tools of the model instead of code.",
			set: tools(func(t *Tools, v value) { t.DirectMCPServers = v.list })},
		{Section: secBackend, Name: "shared_tools_directory", Type: TypeString, Status: Implemented, Since: "0.1.13", Needs: needsCodeTools, tool: true,
			Doc: "Code-based tools: generate the code once under this folder (in a subfolder per set of servers), read-only for the agents, instead of in each workspace.",
			set: tools(func(t *Tools, v value) { t.SharedToolsDir = v.s })},
		{Section: secBackend, Name: "concurrent_tool_execution", Type: TypeBool, Default: "false", Status: Ignored, Since: "0.1.14", warn: true,
			Doc: "Run the tool calls of one response in parallel.", Why: "the tool calls of a response run one after another, with the same results"},
		{Section: secBackend, Name: "max_concurrent_tools", Type: TypeInt, Status: Ignored, Since: "0.1.14", Needs: "concurrent_tool_execution",
			Doc: "Parallel tool calls at once."},
		{Section: secBackend, Name: "exclude_file_operation_mcps", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x",
			Doc: "Leave out the file tools; agents use the command line.", Why: "the workspace file tools are always offered"},
		{Section: secBackend, Name: "enable_rate_limit", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x",
			Doc: "Rate-limit requests.", Why: "rate limiting is not built"},
		{Section: secBackend, Name: "enable_nlip", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.13",
			Doc: "Route tool calls through NLIP.", Why: "NLIP is not built"},
		{Section: secBackend, Name: "nlip", Type: TypeSwitch, Status: OffOnly, Since: "0.1.13", Doc: "NLIP settings.", Why: "NLIP is not built"},
		{Section: secBackend, Name: "nlip_config", Type: TypeMapping, Status: Ignored, Since: "0.1.13", Needs: "enable_nlip", Doc: "NLIP router settings."},
		{Section: secBackend, Name: "hooks", Type: TypeMapping, Status: EmptyOnly, Since: "0.1.36", Doc: "PreToolUse and PostToolUse hooks.",
			Why: "hooks are not built; their checks would not run"},
		{Section: secBackend, Name: "permissions", Type: TypeMapping, Status: Implemented, Since: "0.1.97", tool: true, ex: "{role: read-only}",
			Doc: "This agent's permissions block (see permissions), checked before every file tool, command, MCP and custom tool call.",
			raw: permissionsBlock(func(t *target) **Permissions { return &t.backend.Permissions })},
		{Section: secBackend, Name: "websocket_mode", Type: TypeBool, Default: "false", Status: Ignored, Since: "0.1.64", warn: true,
			Doc: "Responses API over WebSocket.", Why: "requests go over HTTP, with the same results"},
		{Section: secBackend, Name: "enable_computer_use", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.12",
			Doc: "OpenAI's hosted computer_use_preview tool on the agent's own requests.",
			Why: "the agent's own model does not run computer actions here; use custom_tools computer_use (the same model and tool, run by massgen), claude_computer_use, gemini_computer_use or browser_automation"},
		{Section: secBackend, Name: "display_width", Type: TypeInt, Status: Ignored, Since: "0.1.12", Needs: "enable_computer_use", Doc: "Computer use: screen width."},
		{Section: secBackend, Name: "display_height", Type: TypeInt, Status: Ignored, Since: "0.1.12", Needs: "enable_computer_use", Doc: "Computer use: screen height."},
		{Section: secBackend, Name: "computer_environment", Type: TypeString, Status: Ignored, Since: "0.1.12", Needs: "enable_computer_use", Doc: "Computer use: environment."},
		{Section: secBackend, Name: "enable_x_search", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x",
			Doc: "Grok's X search.", Why: "X search is not built"},
		{Section: secBackend, Name: "enable_strict_tool_use", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x", Types: []string{"claude"},
			Doc: "Claude strict tool schemas.", Why: "strict tool use is not built"},
		{Section: secBackend, Name: "output_schema", Type: TypeMapping, Status: EmptyOnly, Since: "0.1.9x",
			Doc: "Structured outputs (a JSON schema).", Why: "structured outputs are not built"},
		{Section: secBackend, Name: "enable_programmatic_flow", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x", Types: []string{"claude"},
			Doc: "Claude programmatic tool calling.", Why: "programmatic tool calling is not built"},
		{Section: secBackend, Name: "enable_tool_search", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x", Types: []string{"claude"},
			Doc: "Claude tool search.", Why: "tool search is not built"},
		{Section: secBackend, Name: "tool_search_variant", Type: TypeEnum, Enum: []string{"regex", "bm25"}, Status: Ignored, Since: "0.1.9x",
			Types: []string{"claude"}, Needs: "enable_tool_search", Doc: "Tool search: variant."},
		{Section: secBackend, Name: "model_reasoning_effort", Type: TypeEnum, Enum: []string{"low", "medium", "high", "xhigh"}, Status: Implemented,
			Since: "0.1.47", Types: []string{"codex"}, Doc: "Codex reasoning effort.",
			set: func(_ *walker, t *target, v value) { t.backend.CLI.ReasoningEffort = v.s }},
		{Section: secBackend, Name: "use_default_prompt", Type: TypeBool, Default: "false", Status: Ignored, Since: "0.1.9x",
			Types: []string{"claude_code"}, Doc: "Claude Code's default system prompt: it is always kept, massgen's instructions are appended (system_prompt replaces it)."},
		{Section: secBackend, Name: "max_thinking_tokens", Type: TypeInt, Status: Implemented, Since: "0.1.12", Types: []string{"claude_code"},
			Doc: "Claude Code thinking budget (MAX_THINKING_TOKENS).", set: func(_ *walker, t *target, v value) { t.backend.CLI.MaxThinkingTokens = int(v.n) }},
		{Section: secBackend, Name: "copilot_system_message_mode", Type: TypeEnum, Enum: []string{"append", "replace"}, Status: Implemented,
			Since: "0.1.54", Types: []string{"copilot"}, Default: "append",
			Doc: "Copilot: massgen's instructions are appended (they open the first prompt of a session); replace is refused, as Copilot CLI cannot replace its own system message.",
			set: func(w *walker, _ *target, v value) {
				if v.s == "replace" {
					w.errf(v.f, "leave it out (append is the default)", "copilot_system_message_mode `replace` is not supported: Copilot CLI has no way to replace its own system message")
				}
			}},
		{Section: secBackend, Name: "copilot_permission_policy", Type: TypeEnum, Enum: []string{"approve", "deny"}, Status: Implemented, Since: "0.1.54",
			Types: []string{"copilot"}, Default: "approve",
			Doc: "Copilot: approve lets the CLI's tools run without asking, confined to the workspace and the shared folders; deny refuses its shell, writes, URLs and memory (it may read its workspace and call massgen's tools).",
			set: func(_ *walker, t *target, v value) { t.backend.CLI.PermissionPolicy = v.s }},
		{Section: secBackend, Name: "agent_config", Type: TypeMapping, Status: Ignored, Since: "0.1.12", Types: []string{"ag2"},
			Doc: "AG2 agent settings."},
		{Section: secBackend, Name: "api_version", Type: TypeString, Status: Implemented, Since: "0.1.12", Types: []string{"azure_openai"},
			ex: "2024-10-21", check: apiVersion,
			Doc: "Azure OpenAI API version, sent as ?api-version=; default AZURE_OPENAI_API_VERSION, else 2024-12-01-preview.",
			set: func(_ *walker, t *target, v value) { t.backend.APIVersion = v.s }},
		{Section: secBackend, Name: "azure_endpoint", Type: TypeString, Status: Implemented, Since: "0.1.12", Types: []string{"azure_openai"},
			ex: "https://r.openai.azure.com/", Doc: "Azure OpenAI: the resource's endpoint, as base_url (set one of them); default AZURE_OPENAI_ENDPOINT.",
			set: func(_ *walker, t *target, v value) { t.backend.BaseURL = v.s }},
		{Section: secBackend, Name: "deployment_name", Type: TypeString, Status: Refused, Since: "0.1.12", Types: []string{"azure_openai"},
			Doc: "In MassGen's docs only: its Azure backend sends model as the deployment.", msg: "`deployment_name` is not supported: the deployment is model",
			Instead: "put the deployment's name in model"},
		param("temperature", TypeNumber), param("top_p", TypeNumber), param("top_k", TypeInt), param("max_tokens", TypeInt),
		param("max_output_tokens", TypeInt), param("max_completion_tokens", TypeInt), param("frequency_penalty", TypeNumber),
		param("presence_penalty", TypeNumber), param("seed", TypeInt),
	}, concat(
		dockerKeys("command_line_docker_image", "command_line_docker_memory_limit", "command_line_docker_cpu_limit",
			"command_line_docker_network_mode", "command_line_docker_enable_sudo", "command_line_docker_credentials",
			"command_line_docker_packages"),
		srtKeys(),          // keys_srt.go
		mediaConfigKeys(),  // keys_media.go
		uploadConfigKeys(), // uploads.go
		copied(secRoot, "MassGen sets it at run time", "agent_id", "session_id", "filesystem_session_id", "session_storage_base",
			"instance_id", "vote_only", "agent_temporary_workspace", "agent_temporary_workspace_parent", "context_write_access_enabled",
			"use_mcpwrapped_for_tool_filtering", "use_no_roots_wrapper", "debug_delay_seconds", "debug_delay_after_n_tools"),
		copied(secAgent, "it belongs on the agent", "voting_sensitivity", "subtask", "main_agent"),
		copied(secOrch, "it belongs under orchestrator", "voting_threshold", "checklist_require_gap_report",
			"gap_report_mode", "coordination_mode", "presenter_agent", "final_answer_strategy", "fairness_enabled",
			"fairness_lead_cap_answers", "max_midstream_injections_per_round", "defer_peer_updates_until_restart",
			"allow_midstream_peer_updates_before_checklist_submit", "max_checklist_calls_per_round", "checklist_first_answer"),
		copied(secCoord, "it belongs under orchestrator.coordination", "plan_depth", "plan_thoroughness",
			"plan_target_steps", "plan_target_chunks", "use_two_tier_workspace", "write_mode", "drift_conflict_policy", "subagent_types",
			"round_evaluator_before_checklist", "orchestrator_managed_round_evaluator", "round_evaluator_skip_synthesis",
			"round_evaluator_refine", "round_evaluator_transformation_pressure", "enable_quality_rethink_on_iteration",
			"enable_novelty_on_iteration", "enable_execution_trace_analyzer", "novelty_injection", "improvements",
			"learning_capture_mode", "criteria_mode", "bootstrap_max_per_agent_per_round", "bootstrap_max_total",
			"disable_final_only_round_capture_fallback", "checkpoint_enabled", "checkpoint_mode", "checkpoint_guidance",
			"checkpoint_gated_patterns", "standalone_checkpoint_enabled", "standalone_checkpoint_team_config",
			"standalone_checkpoint_mode", "standalone_checkpoint_single", "standalone_checkpoint_include_workspace_context"),
	)...)
}

// param is a provider request parameter whose type is known: a value of another type warns.
func param(name string, t Type) Key {
	return Key{Section: secBackend, Name: name, Type: t, Status: Implemented, Since: "0.1.12", Param: true, ex: "1",
		Doc: "Passed to the provider as a request parameter."}
}

func dockerKeys(names ...string) []Key {
	return tuning(names, "0.1.12", needsDocker, "Docker execution mode setting.")
}

func tuning(names []string, since, needs, doc string) []Key {
	out := make([]Key, len(names))
	for i, n := range names {
		out[i] = Key{Section: secBackend, Name: n, Type: TypeAny, Status: Ignored, Since: since, Needs: needs, Doc: doc, ex: "x"}
	}
	return out
}

// copied are MassGen keys its orchestrator copies into every backend at run time; written in
// a config they have no effect there, so they warn and never reach the provider.
func copied(home, why string, names ...string) []Key {
	out := make([]Key, len(names))
	for i, n := range names {
		where := "MassGen's own copy of " + sectionTitle(home) + "." + n
		if home == secRoot {
			where = "Set by MassGen at run time."
		}
		out[i] = Key{Section: secBackend, Name: n, Type: TypeAny, Status: Ignored, Since: "0.1.9x", warn: true, ex: "x",
			msg: fmt.Sprintf("`%s` has no effect inside backend: %s", n, why), Doc: where}
	}
	return out
}

func concat(groups ...[]Key) []Key {
	var out []Key
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// apiKey reads api_key, never echoing it: it is a secret.
func apiKey(w *walker, t *target, g field) {
	switch g.val.(type) {
	case nil, *ast.StringNode, *ast.LiteralNode:
		t.backend.APIKey, _ = w.str(g)
	default:
		w.errAt(g.loc, "api_key must be a string", "quote the key, or leave api_key out to read it from the environment", g.raw, g.keyN)
	}
}

func noDotDot(w *walker, v *value) bool {
	if strings.Contains(v.s, "..") {
		w.errf(v.f, "name a folder without ..", "%s must not contain ..", v.f.key)
		return false
	}
	return true
}

// passThrough handles a backend key that is not in the schema: a provider request parameter.
// A near miss of a known key warns, since the provider will likely reject it.
func passThrough(w *walker, t *target, g field) {
	if c := suggest.Closest(g.key, sections()[secBackend].names); c != "" && suggest.Distance(strings.ToLower(g.key), c) <= 2 {
		w.warnAt(g.loc, fmt.Sprintf("`%s` is passed to the provider as a request parameter", clip(g.key)),
			fmt.Sprintf("did you mean `%s`?", c), g.keyN)
	}
	w.setParam(t, g)
}

// backendAfter checks a network backend's keys against each other and fills in its defaults.
func backendAfter(w *walker, t *target, f field, present map[string]field) {
	b := t.backend
	allowed, hasAllowed := present["allowed_tools"]
	exclude, hasExclude := present["exclude_tools"]
	if hasAllowed && hasExclude && !empty(allowed.val) && !empty(exclude.val) {
		w.warnAt(exclude.loc, "both allowed_tools and exclude_tools are set",
			"allowed_tools already limits the tools; exclude_tools only removes from that list", exclude.keyN)
	}
	if g, ok := present["enable_web_search"]; ok && b.Hosted.WebSearch && t.bt.Protocol == ProtocolChat && hasSearchParameters(b.Params) {
		// Grok's search is the search_parameters body field; MassGen refuses both at once too.
		w.errKey(g, "remove search_parameters, or enable_web_search to keep your own",
			"enable_web_search sets search_parameters, which the backend already sets")
	}
	if t.bt.Name == "codex" {
		codexToolLists(w, b, present)
	}
	if t.bt.Name == "azure_openai" {
		azureEndpoint(w, b, present)
	}
	if g, ok := present["enable_web_search"]; ok && b.Hosted.WebSearch && t.bt.Name == "claude_code" &&
		slices.ContainsFunc(b.CLI.DisallowedTools, func(n string) bool { return strings.HasPrefix(n, "WebSearch") }) {
		w.errKey(g, "remove WebSearch from disallowed_tools, or enable_web_search", "enable_web_search allows WebSearch, which disallowed_tools denies")
	}
	w.checkUploads(t)
	codeToolsAfter(w, t, present)
	if !t.known || !t.bt.Implemented {
		return // a refused type is reported as such; its defaults do not matter
	}
	if b.Model == "" {
		switch t.bt.DefaultModel {
		case CustomModel:
			sugg := fmt.Sprintf("backend type `%s` has no default model; add model: with the model name to use", t.bt.Name)
			if t.bt.Name == "azure_openai" {
				sugg = "add model: with the name of your Azure deployment"
			}
			w.errAt(f.loc, "missing required key `model`", sugg, f.keyN, f.raw)
		default:
			b.Model = t.bt.DefaultModel
		}
	}
	if b.BaseURL == "" {
		b.BaseURL = t.bt.DefaultBaseURL
	}
}

// codexToolLists refuses an allow-list of Codex's own tools: Codex CLI has none (its sandbox
// bounds what its commands reach), nor a deny-list (disallowed_tools is not a codex key). Its
// allowed_tools may still name the user's MCP tools, as mcp__SERVER__TOOL.
func codexToolLists(w *walker, b *Backend, present map[string]field) {
	if f, ok := present["allowed_tools"]; ok {
		for _, n := range b.Tools.AllowedTools {
			if !strings.HasPrefix(n, "mcp__") {
				w.errKey(f, "list only MCP tools there, as mcp__SERVER__TOOL (or use the server's own allowed_tools); Codex's sandbox limits its commands to the workspace",
					"codex: allowed_tools cannot limit Codex's own tools (`%s`): Codex CLI has no per-tool allow-list", clip(n))
				break
			}
		}
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

// apiVersion checks an Azure API version: a date with an optional -preview, or a word such as
// preview, sent in the query string.
func apiVersion(w *walker, v *value) bool {
	if !azureVersion().MatchString(v.s) {
		w.errf(v.f, "write a version such as 2024-10-21 or 2024-12-01-preview", "api_version `%s` is not an Azure API version", clip(v.s))
		return false
	}
	return true
}

var azureVersion = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// azureEndpoint checks where an azure_openai agent sends its key: one of base_url and
// azure_endpoint, the resource's endpoint, not the /openai/v1/ base of Azure's newer API,
// which openai-go's deployment routes would double.
func azureEndpoint(w *walker, b *Backend, present map[string]field) {
	g, hasAlias := present["azure_endpoint"]
	if f, ok := present["base_url"]; ok && hasAlias {
		w.errKey(f, "keep one of them", "base_url and azure_endpoint both name the Azure endpoint")
		return
	}
	f, ok := present["base_url"]
	if !ok {
		f, ok = g, hasAlias
	}
	if !ok || b.BaseURL == "" {
		return
	}
	u, err := url.Parse(b.BaseURL)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		w.errKey(f, "write the resource's endpoint, such as https://my-resource.openai.azure.com/",
			"the Azure endpoint must be an https URL")
	case u.Scheme == "http" && !Loopback(u.Hostname()):
		// openai-go refuses to send an Azure key in the clear, except to this machine.
		w.errKey(f, "use https://", "the Azure endpoint must use https (http only for a server on this machine)")
	case strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/openai") || strings.Contains(u.Path, "/openai/"):
		w.errKey(f, "write the endpoint without its path, such as https://my-resource.openai.azure.com/ "+
			"(for Azure's /openai/v1/ API, use type: chatcompletion with that base_url and your key in api_key)",
			"azure_openai adds /openai/deployments/<model>/... to the endpoint itself")
	}
}

// Loopback reports whether host (without port) is this machine: localhost or a loopback IP,
// the only hosts azure_openai sends a key to over plain http.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// codeToolsAfter checks enable_code_based_tools against the keys it needs: the agent runs the
// generated code with its commands, and a coding-agent CLI calls its MCP tools itself.
func codeToolsAfter(w *walker, t *target, present map[string]field) {
	g, ok := present["enable_code_based_tools"]
	b := t.backend
	if !ok || !b.Tools.CodeTools {
		return
	}
	switch {
	case t.known && t.bt.Protocol == ProtocolCLI:
		w.errKey(g, "remove it: the CLI calls the MCP servers of its config itself", "backend type `%s` does not take `enable_code_based_tools`", t.bt.Name)
	case !b.Tools.CommandLine:
		w.warnAt(g.loc, "`enable_code_based_tools` has no effect without commands: the agent runs the generated code with execute_command, so its MCP tools stay its own tools",
			"add enable_mcp_command_line: true, or remove enable_code_based_tools", g.keyN)
	}
	for _, n := range b.Tools.DirectMCPServers {
		if !slices.ContainsFunc(b.Tools.MCPServers, func(s MCPServer) bool { return s.Name == n }) {
			w.errKey(present["direct_mcp_servers"], "name servers of mcp_servers", "direct_mcp_servers: no MCP server is called `%s`", clip(n))
		}
	}
}
