package config

import (
	"fmt"
	"strings"
	"testing"
)

// okAgents is a valid three-line agents block for cases that test other sections.
const okAgents = "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n"

// scripted wraps backend keys (indented 6 spaces) in a one-agent config; they start on line 5.
func scripted(lines string) string {
	return "agents:\n  - id: a\n    backend:\n      type: scripted\n" + lines
}

// wantIssue is "E|W LINE:COL LOCATION | MESSAGE-FRAGMENT [| SUGGESTION-FRAGMENT]".
func checkIssues(t *testing.T, rep Report, wants []string) {
	t.Helper()
	got := append(append([]Issue{}, rep.Errors...), rep.Warnings...)
	if len(got) != len(wants) {
		t.Fatalf("got %d issues, want %d:\n%s", len(got), len(wants), rep.Text())
	}
	for i, w := range wants {
		parts := strings.Split(w, " | ")
		head := strings.SplitN(parts[0], " ", 3)
		is := got[i]
		sev := "E"
		if is.Severity == SeverityWarning {
			sev = "W"
		}
		loc := ""
		if len(head) == 3 {
			loc = head[2]
		}
		if sev != head[0] || fmt.Sprintf("%d:%d", is.Line, is.Column) != head[1] || is.Location != loc ||
			!strings.Contains(is.Message, parts[1]) ||
			(len(parts) > 2 && !strings.Contains(is.Suggestion, parts[2])) {
			t.Errorf("issue %d:\n got  %s %d:%d %s | %s | %s\n want %s", i, sev, is.Line, is.Column, is.Location,
				is.Message, is.Suggestion, w)
		}
	}
}

func TestParse_Rules(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		// Root.
		{"root list", "- a\n- b\n", []string{"E 1:1  | must be a mapping"}},
		{"root scalar", "hello\n", []string{"E 1:1  | must be a mapping"}},
		{"v1 keys one error", "models: [gpt-4o]\nnum_agents: 3\nmax_rounds: 2\n",
			[]string{"E 1:1 models | MassGen v1 config (models, num_agents, max_rounds)"}},
		{"neither agent nor agents", "ui: {display_type: simple}\n", []string{"E 1:1  | missing `agents`"}},
		{"both agent and agents", "agent: {id: x, backend: {type: scripted, answers: [hi]}}\n" + okAgents,
			[]string{"E 2:1 agents | both `agent` and `agents`"}},
		{"agents empty", "agents: []\n", []string{"E 1:9 agents | agents must not be empty"}},
		{"agents null", "agents:\n", []string{"E 1:9 agents | non-empty list of agents, not empty"}},
		{"agents mapping", "agents:\n  a: 1\n", []string{"E 2:3 agents | non-empty list of agents, not a mapping"}},
		{"agent list", "agent:\n  - id: a\n", []string{"E 2:3 agent | agent must be a mapping, not a list"}},
		{"agent item scalar", "agents:\n  - hello\n", []string{"E 2:5 agents[0] | agents[0] must be a mapping, not a string"}},
		{"single agent ok", "agent:\n  id: solo\n  backend: {type: scripted, answers: [hi]}\n", nil},
		{"unknown top-level warns", okAgents + "agnets: []\n",
			[]string{"W 4:1 agnets | unknown top-level key `agnets` is ignored | did you mean `agents`?"}},
		{"display block warns", okAgents + "display:\n  type: rich\n",
			[]string{"W 4:1 display | unknown top-level key `display` | display settings live under ui"}},
		{"orchestrator not mapping", okAgents + "orchestrator: 3\n",
			[]string{"E 4:15 orchestrator | orchestrator must be a mapping (key: value lines), not a number"}},
		{"session_id", okAgents + "session_id: [x]\n", []string{"E 4:13 session_id | session_id must be a string, not a list"}},
		{"memory enabled", okAgents + "memory:\n  enabled: true\n  persistent_memory: {embedding: {provider: openai}}\n", nil},
		{"memory qdrant server", okAgents + "memory:\n  enabled: true\n  persistent_memory:\n    embedding: {provider: gemini}\n    qdrant: {mode: server, host: localhost}\n",
			[]string{"E 8:14 memory.persistent_memory.qdrant.mode | `mode: server` is not supported yet: a Qdrant server is not supported",
				"E 8:28 memory.persistent_memory.qdrant.host | it tunes `mode`"}},
		{"memory mem0 cloud", okAgents + "memory:\n  enabled: true\n  persistent_memory: {api_key: k, embedding: {provider: openai}}\n",
			[]string{"E 6:23 memory.persistent_memory.api_key | `api_key` is not supported yet: the mem0 cloud platform"}},
		{"memory compression target over trigger", okAgents + "memory:\n  compression: {trigger_threshold: 0.5, target_ratio: 0.6}\n",
			[]string{"E 5:55 memory.compression.target_ratio | target_ratio 0.6 must be below trigger_threshold 0.5"}},
		{"memory disabled ok", okAgents + "memory:\n  enabled: false\n  persistent_memory: {enabled: true}\n", nil},
		{"memory enabled string", okAgents + "memory: {enabled: \"yes\"}\n",
			[]string{"E 4:19 memory.enabled | enabled must be a boolean | without quotes"}},

		// Agents.
		{"missing id", "agents:\n  - backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 2:5 agents[0] | missing required key `id`"}},
		{"id not string", "agents:\n  - id: 7\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 2:9 agents[0].id | id must be a string, not a number"}},
		{"id empty", "agents:\n  - id: \"\"\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 2:9 agents[0].id | id must not be empty"}},
		{"id path", "agents:\n  - id: a/b\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 2:9 agents[0].id | cannot be used as a directory name"}},
		{"duplicate id", "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n" +
			"  - id: a\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 4:9 agents[1].id | duplicate agent id `a`: agents[0] at line 2:9 has it too"}},
		{"missing backend", "agents:\n  - id: a\n", []string{"E 2:5 agents[0] | missing required key `backend`"}},
		{"backend not mapping", "agents:\n  - id: a\n    backend: scripted\n",
			[]string{"E 3:14 agents[0].backend | backend must be a mapping, not a string"}},
		{"system_message not string", "agents:\n  - id: a\n    system_message: [x]\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 3:21 agents[0].system_message | system_message must be a string, not a list"}},
		{"unknown agent key", "agents:\n  - id: a\n    sytem_message: x\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 3:5 agents[0].sytem_message | unknown agent key `sytem_message` | did you mean `system_message`?"}},
		{"agent memory enabled", "agents:\n  - id: a\n    memory: {enabled: true}\n    backend: {type: scripted, answers: [hi]}\n",
			nil},

		// Backend type.
		{"missing type", "agents:\n  - id: a\n    backend:\n      model: x\n",
			[]string{"E 3:5 agents[0].backend | missing required key `type` | add type: scripted, openai, claude"}},
		{"unknown type", "agents:\n  - id: a\n    backend: {type: openi}\n",
			[]string{"E 3:21 agents[0].backend.type | unknown backend type `openi` | did you mean `openai`?"}},
		{"type case-sensitive", "agents:\n  - id: a\n    backend: {type: OpenAI}\n",
			[]string{"E 3:21 agents[0].backend.type | unknown backend type `OpenAI` | case-sensitive"}},
		{"type not string", "agents:\n  - id: a\n    backend: {type: 3}\n",
			[]string{"E 3:21 agents[0].backend.type | type must be a string, not a number"}},
		{"type refused ag2", "agents:\n  - id: a\n    backend: {type: ag2}\n",
			[]string{"E 3:21 agents[0].backend.type | backend type `ag2` is not supported yet"}},
		{"copilot replace refused", "agents:\n  - id: a\n    backend: {type: copilot, copilot_system_message_mode: replace}\n",
			[]string{"E 3:59 agents[0].backend.copilot_system_message_mode | copilot_system_message_mode `replace` is not supported: Copilot CLI has no way to replace its own system message | leave it out"}},
		{"copilot permission policy", "agents:\n  - id: a\n    backend: {type: copilot, copilot_permission_policy: ask}\n",
			[]string{"E 3:57 agents[0].backend.copilot_permission_policy | invalid copilot_permission_policy `ask`"}},
		{"codex own tools allow-list", "agents:\n  - id: a\n    backend: {type: codex, allowed_tools: [mcp__s__t, shell]}\n",
			[]string{"E 3:28 agents[0].backend.allowed_tools | codex: allowed_tools cannot limit Codex's own tools (`shell`) | mcp__SERVER__TOOL"}},
		{"codex MCP allow-list", "agents:\n  - id: a\n    backend: {type: codex, allowed_tools: [mcp__s__t]}\n", nil},
		{"CLI request parameters", "agents:\n  - id: a\n    backend: {type: gemini_cli, temperature: 0.7, timeout: 300}\n",
			[]string{"W 3:33 agents[0].backend.temperature | `temperature` has no effect on backend type `gemini_cli` | the CLI's own settings",
				"W 3:51 agents[0].backend.timeout | `timeout` has no effect on backend type `gemini_cli`"}},
		{"codex deny-list", "agents:\n  - id: a\n    backend: {type: codex, disallowed_tools: [shell]}\n",
			[]string{"E 3:28 agents[0].backend.disallowed_tools | `disallowed_tools` is not supported on backend type `codex` | the codex CLI has no such setting"}},
		{"model required", "agents:\n  - id: a\n    backend:\n      type: chatcompletion\n",
			[]string{"E 3:5 agents[0].backend | missing required key `model`"}},
		{"model not string", "agents:\n  - id: a\n    backend: {type: openai, model: 5}\n",
			[]string{"E 3:36 agents[0].backend.model | model must be a string, not a number"}},

		// Backend keys (type openai).
		{"web search string", net("      enable_web_search: \"true\"\n"),
			[]string{"E 5:26 agents[0].backend.enable_web_search | enable_web_search must be a boolean | true or false, without quotes"}},
		{"capability", "agents:\n  - id: a\n    backend:\n      type: lmstudio\n      model: m\n      enable_web_search: true\n",
			[]string{"E 6:7 agents[0].backend.enable_web_search | backend type `lmstudio` does not support `enable_web_search`"}},
		{"api_key list", net("      api_key: [sk-x]\n"),
			[]string{"E 5:16 agents[0].backend.api_key | api_key must be a string"}},
		{"allowed_tools item", net("      allowed_tools: [a, 3]\n"),
			[]string{"E 5:26 agents[0].backend.allowed_tools[1] | allowed_tools[1] must be a string, not a number"}},
		{"allowed and exclude", net("      allowed_tools: [a]\n      exclude_tools: [b]\n"),
			[]string{"W 6:7 agents[0].backend.exclude_tools | both allowed_tools and exclude_tools"}},
		{"permission_mode", net("      permission_mode: yolo\n"),
			[]string{"E 5:24 agents[0].backend.permission_mode | invalid permission_mode `yolo`"}},
		{"system_prompt in backend", net("      system_prompt: hi\n      append_system_prompt: more\n"),
			[]string{"E 5:7 agents[0].backend.system_prompt | `system_prompt` is not allowed inside backend | system_message",
				"E 6:7 agents[0].backend.append_system_prompt | `append_system_prompt` is not allowed"}},
		{"refused features", net("      command_line_execution_mode: docker\n"),
			[]string{"E 5:7 agents[0].backend.command_line_execution_mode | `command_line_execution_mode: docker` is not supported yet"}},
		{"grok search twice", "agents:\n  - id: a\n    backend:\n      type: grok\n      enable_web_search: true\n      extra_body: {search_parameters: {mode: \"on\"}}\n",
			[]string{"E 5:7 agents[0].backend.enable_web_search | enable_web_search sets search_parameters | remove search_parameters"}},
		{"hosted tools the type lacks", "agents:\n  - id: a\n    backend:\n      type: groq\n      model: m\n      enable_web_search: true\n      enable_code_interpreter: false\n",
			[]string{"E 6:7 agents[0].backend.enable_web_search | backend type `groq` does not support `enable_web_search` | mcp_servers"}},
		{"tool keys", net("      mcp_servers: {w: {command: npx, args: [-y, srv], env: {K: \"${MASSGEN_UNSET_TEST_VAR}\"}}}\n      cwd: ws\n" +
			"      context_paths: [{path: ., permission: write, protected_paths: [a]}]\n      enable_mcp_command_line: true\n" +
			"      command_line_blocked_commands: [\"^git push\"]\n"),
			[]string{"W 5:24 agents[0].backend.mcp_servers.w | ${MASSGEN_UNSET_TEST_VAR} is not set here | set it before massgen runs"}},
		{"mcp security is not enforced", net("      mcp_servers: {s: {type: streamable-http, url: \"http://localhost:8000/mcp\", security: {level: permissive, allow_localhost: true}}}\n"),
			[]string{"W 5:82 agents[0].backend.mcp_servers.s.security | `security` is not enforced | only run configs whose mcp_servers you trust"}},
		{"mcp server errors", net("      mcp_servers:\n        - {name: a}\n        - {name: \"b c\", command: x}\n" +
			"        - {name: d, type: sse, url: \"http://x\"}\n        - {name: e, type: streamable-http}\n        - {name: f, command: x, comand: y}\n" +
			"        - {name: f, command: x}\n"),
			[]string{"E 6:11 agents[0].backend.mcp_servers[0] | missing required key `command`",
				"E 7:11 agents[0].backend.mcp_servers[1] | invalid mcp server name `b c`",
				"E 8:27 agents[0].backend.mcp_servers[2].type | the sse transport is deprecated | streamable-http",
				"E 9:11 agents[0].backend.mcp_servers[3] | streamable-http needs an http(s) url",
				"E 10:33 agents[0].backend.mcp_servers[4].comand | unknown mcp server key `comand` | did you mean `command`?",
				"E 11:11 agents[0].backend.mcp_servers[5] | mcp server `f` is declared twice"}},
		{"refused features off", net("      custom_tools: []\n      mcp_servers: {}\n      cwd: \"\"\n" +
			"      upload_files:\n      enable_mcp_command_line: false\n"), nil},
		{"params inf", net("      extra_body: {a: [1, .inf]}\n"),
			[]string{"E 5:27 agents[0].backend.extra_body.a[1] | cannot be sent to a provider"}},

		// Scripted backend.
		{"scripted missing answers", scripted("      vote: first\n"),
			[]string{"E 3:5 agents[0].backend | missing required key `answers`"}},
		{"scripted answers empty", scripted("      answers: []\n"),
			[]string{"E 5:16 agents[0].backend.answers | answers must not be empty"}},
		{"scripted answers scalar", scripted("      answers: hi\n"),
			[]string{"E 5:16 agents[0].backend.answers | answers must be a list, not a string"}},
		{"scripted answer items", scripted("      answers: [\"\", 3, [x]]\n"),
			[]string{"E 5:17 agents[0].backend.answers[0] | answers[0] must not be empty",
				"E 5:21 agents[0].backend.answers[1] | answers[1] must be a string, not a number",
				"E 5:24 agents[0].backend.answers[2] | answers[2] must be a string, not a list"}},
		{"scripted unknown key", scripted("      answers: [hi]\n      answer: x\n"),
			[]string{"E 6:7 agents[0].backend.answer | unknown scripted backend key `answer` | did you mean `answers`?"}},
		{"scripted api key", scripted("      answers: [hi]\n      enable_web_search: true\n"),
			[]string{"E 6:7 agents[0].backend.enable_web_search | unknown scripted backend key | a scripted backend takes only"}},
		{"scripted improve_after", scripted("      answers: [hi]\n      improve_after: -1\n"),
			[]string{"E 6:22 agents[0].backend.improve_after | improve_after must not be negative"}},
		{"scripted improve_after float", scripted("      answers: [hi]\n      improve_after: 1.5\n"),
			[]string{"E 6:22 agents[0].backend.improve_after | improve_after must be a whole number, not a number"}},
		{"scripted vote", scripted("      answers: [hi]\n      vote: longst\n"),
			[]string{"E 6:13 agents[0].backend.vote | invalid vote `longst` | did you mean " + "`longest`?"}},
		{"scripted vote label zero", scripted("      answers: [hi]\n      vote: agent0\n"),
			[]string{"E 6:13 agents[0].backend.vote | invalid vote `agent0`"}},
		{"scripted vote label missing", scripted("      answers: [hi]\n      vote: agent2\n"),
			[]string{"W 6:13 agents[0].backend.vote | vote label `agent2` does not exist with 1 agents"}},
		{"scripted latency", scripted("      answers: [hi]\n      latency: soon\n      chunk_delay: -0.5\n"),
			[]string{"E 6:16 agents[0].backend.latency | latency `soon` is not a duration",
				"E 7:20 agents[0].backend.chunk_delay | chunk_delay must not be negative"}},
		{"scripted latency list", scripted("      answers: [hi]\n      latency: [1]\n"),
			[]string{"E 6:16 agents[0].backend.latency | latency must be a duration, not a list"}},
		{"scripted faults", scripted("      answers: [hi]\n      faults:\n        - {kind: fial}\n        - {call: -1, when: 2}\n        - fail\n"),
			[]string{"E 7:18 agents[0].backend.faults[0].kind | unknown fault kind `fial` | did you mean " + "`fail`?",
				"E 8:11 agents[0].backend.faults[1] | missing required key `kind`",
				"E 8:18 agents[0].backend.faults[1].call | call must not be negative",
				"E 8:22 agents[0].backend.faults[1].when | unknown fault key `when`",
				"E 9:11 agents[0].backend.faults[2] | faults[2] must be a mapping (key: value lines), not a string"}},

		// Orchestrator.
		{"orchestrator enums", okAgents + "orchestrator:\n  voting_sensitivity: strictt\n  answer_novelty_requirement: 3\n  final_presentation: copy\n",
			[]string{"E 5:23 orchestrator.voting_sensitivity | invalid voting_sensitivity `strictt` | did you mean " + "`strict`?",
				"E 6:31 orchestrator.answer_novelty_requirement | answer_novelty_requirement must be a string, not a number",
				"E 7:23 orchestrator.final_presentation | invalid final_presentation `copy` | use `regenerate` or `verbatim`"}},
		{"orchestrator numbers", okAgents + "orchestrator:\n  max_new_answers_per_agent: 0\n  failure_budget: 0\n  max_cost_usd: -1\n",
			[]string{"E 5:30 orchestrator.max_new_answers_per_agent | must be at least 1",
				"E 6:19 orchestrator.failure_budget | failure_budget must be at least 1",
				"E 7:17 orchestrator.max_cost_usd | max_cost_usd must not be negative"}},
		{"orchestrator null answers ok", okAgents + "orchestrator:\n  max_new_answers_per_agent: null\n  debug_final_answer: true\n  snapshot_storage: snaps\n  agent_temporary_workspace: tmp\n  context_paths: []\n", nil},
		{"orchestrator bools", okAgents + "orchestrator:\n  skip_coordination_rounds: \"yes\"\n  debug_final_answer: [x]\n",
			[]string{"E 5:29 orchestrator.skip_coordination_rounds | skip_coordination_rounds must be a boolean",
				"E 6:23 orchestrator.debug_final_answer | debug_final_answer must be a string or a boolean, not a list"}},
		{"orchestrator unknown key", okAgents + "orchestrator:\n  voting_sensitivty: strict\n",
			[]string{"E 5:3 orchestrator.voting_sensitivty | unknown orchestrator key `voting_sensitivty` | did you mean `voting_sensitivity`?"}},
		{"orchestrator refused", okAgents + "orchestrator:\n  context_paths: [{path: ./src, permision: write}]\n  enable_nlip: true\n",
			[]string{"E 5:33 orchestrator.context_paths[0].permision | unknown context path key `permision` | did you mean `permission`?",
				"E 6:3 orchestrator.enable_nlip | `enable_nlip: true` is not supported yet",
				"W 5:19 orchestrator.context_paths[0] | context path `./src` does not exist here | it must exist when massgen runs"}},
		{"orchestrator dspy off", okAgents + "orchestrator:\n  dspy: {enabled: false, backend: {type: openai, model: gpt-5-nano}}\n", nil},
		{"orchestrator dspy ok", okAgents + "orchestrator:\n  dspy: {enabled: true, num_variants: 2, strategy: diverse, temperature_range: [0.3, 0.9], use_chain_of_thought: true}\n", nil},
		{"orchestrator dspy bad", okAgents + "orchestrator:\n  dspy:\n    enabled: true\n    strategy: wild\n    num_variants: 0\n    semantic_threshold: 2\n    temperature_range: [0.9, 0.3]\n    model: x\n",
			[]string{"E 7:15 orchestrator.dspy.strategy | invalid strategy `wild` | use `balanced`, `diverse`, `conservative` or `adaptive`",
				"E 8:19 orchestrator.dspy.num_variants | num_variants must be between 1 and 10, not 0 | use 1 to 10",
				"E 9:25 orchestrator.dspy.semantic_threshold | semantic_threshold must be between 0 and 1 | use a number from 0 to 1",
				"E 10:24 orchestrator.dspy.temperature_range | temperature_range [0.9, 0.3] has its low end above its high end | write temperature_range: [0.3, 0.9] (two numbers from 0 to 2, low first)",
				"E 11:5 orchestrator.dspy.model | unknown dspy key `model`"}},
		{"orchestrator dspy backend", okAgents + "orchestrator:\n  dspy:\n    enabled: true\n    backend: {type: claude_code}\n",
			[]string{"E 7:14 orchestrator.dspy.backend | dspy.backend type `claude_code` is a coding-agent CLI, which cannot write paraphrases | use an API backend (openai, claude, gemini, chatcompletion, ...) or remove backend: to use the first agent's"}},
		{"orchestrator session_storage", okAgents + "orchestrator:\n  session_storage: sessions\n",
			[]string{"W 5:3 orchestrator.session_storage | `session_storage` is ignored"}},
		{"orchestrator timeout ok", okAgents + "orchestrator:\n  timeout:\n    orchestrator_timeout_seconds: 60\n",
			[]string{"W 6:5 orchestrator.timeout.orchestrator_timeout_seconds | is ignored | timeout_settings.orchestrator_timeout_seconds"}},
		{"orchestrator timeout bad", okAgents + "orchestrator:\n  timeout:\n    orchestrator_timeout_seconds: -5\n    orchestrator_timeout: 3\n",
			[]string{"E 6:35 orchestrator.timeout.orchestrator_timeout_seconds | must be a positive number",
				"E 7:5 orchestrator.timeout.orchestrator_timeout | unknown orchestrator.timeout key | did you mean `orchestrator_timeout_seconds`?"}},
		{"orchestrator timeout string", okAgents + "orchestrator:\n  timeout: {orchestrator_timeout_seconds: \"60\"}\n",
			[]string{"E 5:43 orchestrator.timeout.orchestrator_timeout_seconds | must be a positive number of seconds, not a string"}},

		// Coordination.
		{"coordination refused", okAgents + "orchestrator:\n  coordination:\n    enable_planning_mode: true\n" +
			"    max_orchestration_restarts: 2\n    plan_target_chunks: 3\n    enable_memory_filesystem_mode: true\n    use_skills: true\n",
			[]string{"E 8:5 orchestrator.coordination.plan_target_chunks | `plan_target_chunks: 3` is not supported yet: chunked plans"}},
		{"planning never carried out", okAgents + "orchestrator:\n  final_presentation: verbatim\n  coordination: {enable_planning_mode: true}\n",
			[]string{"W 4:1 orchestrator | planning mode with `final_presentation: verbatim` never carries the plan out | winner_present"}},
		{"coordination off ok", okAgents + "orchestrator:\n  coordination:\n    enable_planning_mode: false\n" +
			"    max_orchestration_restarts: 0\n    use_skills: false\n    massgen_skills: []\n    max_tasks_per_plan: 10\n", nil},
		{"coordination bad", okAgents + "orchestrator:\n  coordination:\n    max_orchestration_restarts: -1\n    enable_planing_mode: false\n",
			[]string{"E 6:33 orchestrator.coordination.max_orchestration_restarts | must not be negative",
				"E 7:5 orchestrator.coordination.enable_planing_mode | unknown coordination key | did you mean `enable_planning_mode`?"}},
		{"task planning bounds", okAgents + "orchestrator:\n  coordination:\n    enable_agent_task_planning: true\n    max_tasks_per_plan: 500\n    plan_depth: huge\n",
			[]string{"E 7:25 orchestrator.coordination.max_tasks_per_plan | 500",
				"E 8:17 orchestrator.coordination.plan_depth | `huge`"}},
		{"coordination not mapping", okAgents + "orchestrator:\n  coordination: yes\n",
			[]string{"E 5:17 orchestrator.coordination | coordination must be a mapping"}},

		// UI.
		{"ui display_type", okAgents + "ui:\n  display_type: fancy\n",
			[]string{"E 5:17 ui.display_type | invalid display_type `fancy` | use `rich_terminal`, `simple`, `terminal`, `silent`, `textual_terminal` or `none`"}},
		{"ui typo", okAgents + "ui:\n  display_typ: simple\n",
			[]string{"W 5:3 ui.display_typ | unknown ui key `display_typ` is ignored | did you mean `display_type`?"}},
		{"ui type", okAgents + "ui:\n  type: rich_terminal\n",
			[]string{"W 5:3 ui.type | unknown ui key `type` is ignored | did you mean `display_type`?"}},
		{"ui bools", okAgents + "ui:\n  logging_enabled: \"true\"\n  use_orchestrator_for_single_agent: false\n",
			[]string{"E 5:20 ui.logging_enabled | logging_enabled must be a boolean",
				"E 6:3 ui.use_orchestrator_for_single_agent | `use_orchestrator_for_single_agent: false` is not supported yet"}},
		{"ui single agent true", okAgents + "ui:\n  use_orchestrator_for_single_agent: true\n", nil},

		// Timeouts.
		{"timeouts bad", okAgents + "timeout_settings:\n  orchestrator_timeout_seconds: 0\n  agent_timeout_seconds: abc\n  presentation_timeout: 3\n",
			[]string{"E 5:33 timeout_settings.orchestrator_timeout_seconds | must be a positive number of seconds",
				"E 6:26 timeout_settings.agent_timeout_seconds | agent_timeout_seconds must be a positive number of seconds, not a string",
				"E 7:3 timeout_settings.presentation_timeout | unknown timeout_settings key | did you mean `presentation_timeout_seconds`?"}},
		{"timeouts inf", okAgents + "timeout_settings:\n  agent_timeout_seconds: .inf\n",
			[]string{"E 5:26 timeout_settings.agent_timeout_seconds | finite"}},

		// YAML itself.
		{"syntax error", "agents:\n  - id: a\n    backend: {type: scripted\n", []string{"E 3:14  | invalid YAML"}},
		{"duplicate key", "agents: []\nagents: []\n", []string{"E 2:1  | invalid YAML: mapping key \"agents\" already defined"}},
		{"undefined alias", "agents:\n  - id: a\n    backend: *base\n",
			[]string{"E 3:14  | alias `*base` refers to no anchor", "E 3:14 agents[0].backend | backend must be a mapping, not empty"}},
		{"two documents", okAgents + "---\nui: {}\n", []string{"E 4:1  | more than one YAML document"}},
		{"merge key", "base: &b {type: scripted, answers: [hi]}\nagents:\n  - id: a\n    backend:\n      <<: *b\n      vote: frist\n",
			[]string{"E 6:13 agents[0].backend.vote | invalid vote `frist`",
				"W 1:1 base | unknown top-level key `base` is ignored"}},
		{"bad merge", okAgents + "ui:\n  <<: 3\n", []string{"E 5:7 ui | merge key `<<` needs a mapping"}},
		{"complex key", okAgents + "ui:\n  [a]: b\n", []string{"E 5:6  | invalid YAML: found an invalid key for this map"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rep := Parse("c.yaml", []byte(tc.yaml))
			checkIssues(t, rep, tc.want)
		})
	}
}

// buildErr is the first issue of every net() case.

// net wraps backend keys (indented 6 spaces, from line 5) in an openai backend.
func net(lines string) string {
	return "agents:\n  - id: a\n    backend:\n      type: openai\n" + lines
}
