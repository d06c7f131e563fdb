package config

// The top level, agents, ui and timeout_settings, and how every section treats keys it does
// not know.

func rootKeys() []Key {
	return []Key{
		{Section: secRoot, Name: "agents", Type: TypeList, Status: Implemented, Since: "0.1.12", Doc: "The agents (each with an id and a backend).",
			raw: func(_ *walker, t *target, f field) { t.agentsF = &f }},
		{Section: secRoot, Name: "agent", Type: TypeMapping, Status: Implemented, Since: "0.1.12",
			Doc: "A single agent (its id defaults to agent1).", raw: func(_ *walker, t *target, f field) { t.agentF = &f }},
		{Section: secRoot, Name: "orchestrator", Type: TypeMapping, Status: Implemented, Since: "0.1.12", ex: "{}",
			Doc: "Coordination settings (see orchestrator).", raw: coordSub(secOrch)},
		{Section: secRoot, Name: "ui", Type: TypeMapping, Status: Implemented, Since: "0.1.12", ex: "{}",
			Doc: "Display settings (see ui).", raw: coordSub(secUI)},
		{Section: secRoot, Name: "timeout_settings", Type: TypeMapping, Status: Implemented, Since: "0.1.12", ex: "{}",
			Doc: "Timeouts (see timeout_settings).", raw: coordSub(secTimeouts)},
		{Section: secRoot, Name: "session_id", Type: TypeString, Status: Implemented, Since: "0.1.12",
			Doc: "The session to resume.", set: func(_ *walker, t *target, v value) { t.cfg.SessionID = v.s }},
		{Section: secRoot, Name: "memory", Type: TypeMapping, Status: Implemented, Since: "0.1.12", ex: "{enabled: false}",
			Doc: "Persistent semantic memory and compression (see memory); an agent's own memory: block goes over it.", raw: memoryBlock},
		{Section: secRoot, Name: "filesystem_memory", Type: TypeMapping, Default: "on", Status: Implemented, Since: "0.1.33", ex: "{enabled: false}",
			Doc: "Compression near the context window, the dropped messages saved in the workspace; on when the block is present (see filesystem_memory).",
			raw: filesystemMemoryBlock},
		{Section: secRoot, Name: "permissions", Type: TypeMapping, Status: Implemented, Since: "0.1.97", ex: "{rules: {deny: [command(rm *)]}}",
			Doc: "Permission rules (allow, ask, deny), a role and automation_default for every agent (see permissions); an agent's own block adds to it.",
			raw: permissionsBlock(func(t *target) **Permissions { return &t.cfg.Permissions })},
		{Section: secRoot, Name: "hooks", Type: TypeMapping, Status: EmptyOnly, Since: "0.1.36",
			Doc: "Global PreToolUse and PostToolUse hooks.", Why: "hooks are not built; their checks would not run"},
		{Section: secRoot, Name: "checkpoint", Type: TypeSwitch, Status: OffOnly, Since: "0.1.68",
			Doc: "Checkpoint settings.", Why: "checkpoint mode is not built"},
	}
}

func agentKeys() []Key {
	return []Key{
		{Section: secAgent, Name: "id", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "b",
			Doc: "Unique agent name; it names folders.",
			raw: func(w *walker, t *target, f field) { t.agent.agent.ID, t.agent.idN = w.agentID(f) }},
		{Section: secAgent, Name: "backend", Type: TypeMapping, Status: Implemented, Since: "0.1.12", ex: "{type: scripted, answers: [hi]}",
			Doc: "The model serving the agent (see agents[].backend).", raw: backend},
		{Section: secAgent, Name: "system_message", Type: TypeString, Status: Implemented, Since: "0.1.12",
			Doc: "The agent's own instructions.", set: func(_ *walker, t *target, v value) { t.agent.agent.SystemMessage = v.s }},
		{Section: secAgent, Name: "append_system_prompt", Type: TypeString, Status: Implemented, Since: "0.1.12",
			Doc: "More instructions, appended to system_message (MassGen's claude_code custom-tool examples write them here; MassGen itself never reads this key).",
			set: func(_ *walker, t *target, v value) { t.agent.appendAgent = v.s }},
		{Section: secAgent, Name: "voting_sensitivity", Type: TypeEnum, Enum: allSensitivity, Accept: agentSensitivity, Status: Implemented,
			Since: "0.1.47", Doc: "This agent's voting sensitivity (default: orchestrator.voting_sensitivity).",
			Why: "ROI, sequential and adversarial voting are not built, and checklist_gated is set for the whole session (orchestrator.voting_sensitivity)",
			set: func(_ *walker, t *target, v value) { t.agent.agent.VotingSensitivity = v.s }},
		{Section: secAgent, Name: "memory", Type: TypeMapping, Status: Implemented, Since: "0.1.12", ex: "{enabled: false}",
			Doc: "This agent's memory settings, over the top-level memory: block.", raw: memoryBlock},
		{Section: secAgent, Name: "subtask", Type: TypeString, Status: Implemented, Since: "0.1.48",
			Doc: "Decomposition mode: this agent's part of the task (without one, the task decomposer assigns it).",
			set: func(_ *walker, t *target, v value) { t.agent.agent.Subtask, t.agent.subtaskF = v.s, &v.f }},
		{Section: secAgent, Name: "subagent_agents", Type: TypeList, Status: Ignored, Since: "0.1.9x", Needs: "orchestrator.coordination.enable_subagents",
			Doc: "Subagents: the agents a subagent team is made of."},
		{Section: secAgent, Name: "main_agent", Type: TypeBool, Status: Ignored, Since: "0.1.68", Needs: "orchestrator.coordination.checkpoint_enabled",
			Doc: "Checkpoints: the main agent."},
		{Section: secAgent, Name: "enable_nlip", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.13",
			Doc: "Route this agent's tool calls through NLIP.", Why: "NLIP is not built"},
		{Section: secAgent, Name: "nlip", Type: TypeSwitch, Status: OffOnly, Since: "0.1.13", Doc: "This agent's NLIP settings.",
			Why: "NLIP is not built"},
	}
}

var uiDisplays = map[string]string{"textual_terminal": "rich_terminal", "none": "silent"}

func uiKeys() []Key {
	return []Key{
		{Section: secUI, Name: "display_type", Type: TypeEnum, Default: "rich_terminal", Status: Implemented, Since: "0.1.12",
			Enum:   []string{"rich_terminal", "simple", "terminal", "silent", "textual_terminal", "none", "web"},
			Accept: []string{"rich_terminal", "simple", "terminal", "silent", "textual_terminal", "none"},
			Doc:    "rich_terminal (the live view; textual_terminal, MassGen's default since v0.1.45, is the same view here), simple, terminal, or silent (none).",
			Why:    "the web display runs only inside MassGen's Web UI", Instead: "use `massgen serve` for the web dashboard, or `rich_terminal`",
			set: func(_ *walker, t *target, v value) {
				t.cfg.UI.DisplayType = v.s
				if to, ok := uiDisplays[v.s]; ok {
					t.cfg.UI.DisplayType = to
				}
			}},
		{Section: secUI, Name: "logging_enabled", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.12",
			Doc: "Write the session logs.", set: func(_ *walker, t *target, v value) { t.cfg.UI.LoggingEnabled = v.b }},
		{Section: secUI, Name: "use_orchestrator_for_single_agent", Type: TypeBool, Default: "true", Accept: []string{"true"},
			Status: OffOnly, Since: "0.1.12", Doc: "false streams a single agent directly, without voting.",
			Instead: "remove it; a single agent always runs through the orchestrator"},
	}
}

func timeout(set func(t *Timeouts, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { set(&t.cfg.Timeouts, v) }
}

func timeoutKeys() []Key {
	return []Key{
		{Section: secTimeouts, Name: "orchestrator_timeout_seconds", Type: TypeSeconds, Default: "1800", Status: Implemented, Since: "0.1.12",
			Doc: "Bounds coordination.", set: timeout(func(t *Timeouts, v value) { t.Orchestrator = v.d })},
		{Section: secTimeouts, Name: "agent_timeout_seconds", Type: TypeSeconds, Default: "300", Status: Implemented, Since: "port",
			Doc: "Bounds one model call.", set: timeout(func(t *Timeouts, v value) { t.Agent = v.d })},
		{Section: secTimeouts, Name: "presentation_timeout_seconds", Type: TypeSeconds, Default: "600", Status: Implemented, Since: "port",
			Doc: "Bounds the final presentation.", set: timeout(func(t *Timeouts, v value) { t.Presentation = v.d })},
		{Section: secTimeouts, Name: "initial_round_timeout_seconds", Type: TypeSeconds, Status: Implemented, Since: "0.1.9x",
			Doc: "Bounds an agent's first round (null: no bound).", set: timeout(func(t *Timeouts, v value) { t.InitialRound = v.d })},
		{Section: secTimeouts, Name: "subsequent_round_timeout_seconds", Type: TypeSeconds, Status: Implemented, Since: "0.1.9x",
			Doc: "Bounds each later round (null: no bound).", set: timeout(func(t *Timeouts, v value) { t.SubsequentRound = v.d })},
		{Section: secTimeouts, Name: "round_timeout_grace_seconds", Type: TypeSeconds, Default: "120", Status: Implemented, Since: "0.1.9x",
			zero: true, Doc: "Extra time a cut-off round gets to submit new_answer or vote.",
			set: func(_ *walker, t *target, v value) { t.cfg.Timeouts.RoundGrace, t.graceF = v.d, &v.f }},
	}
}

// sectionRules are how each section treats keys the schema does not list, and the checks that
// run once a section is read.
func sectionRules() map[string]section {
	return map[string]section{
		secRoot: {what: "top-level key", warn: true, // MassGen ignores unknown top-level keys
			hints: map[string]string{"display": "display settings live under ui: display_type, logging_enabled"}},
		secAgent: {what: "agent key", after: agentAfter,
			hints: map[string]string{"system_prompt": "did you mean `system_message`?", "instructions": "did you mean `system_message`?"}},
		secBackend:     {what: "backend key", unknown: passThrough, after: backendAfter},
		secScripted:    {what: "scripted backend key", also: secBackend, unknown: scriptedUnknown, after: scriptedAfter},
		secMCP:         {what: "mcp server key", after: mcpAfter},
		secCustomTool:  {what: "custom tool key", after: customToolAfter},
		secFault:       {what: "fault key", after: faultAfter},
		secToolCall:    {what: "tool call key", after: toolCallAfter},
		secContextPath: {what: "context path key", after: contextPathAfter},
		secVerifier:    {what: "verifier key", after: verifierAfter},
		secUpload: {what: "upload_files key", after: uploadAfter,
			hints: map[string]string{"image_url": "use image_path, which takes an http(s) URL too"}},
		secOrch:        {what: "orchestrator key", after: orchestratorAfter},
		secCoord:       {what: "coordination key"},
		secPersona:     {what: "persona_generator key"},
		secDecomposer:  {what: "task_decomposer key"},
		secDSPy:        {what: "dspy key", after: dspyAfter},
		secCriterion:   {what: "checklist criterion key"},
		secOrchTimeout: {what: "orchestrator.timeout key"},
		secTimeouts:    {what: "timeout_settings key", after: timeoutsAfter},
		secPerm: {what: "permissions key", hints: map[string]string{ // the README's allow/ask/deny, one level too high
			"allow": "did you mean `rules: {allow: [...]}`? the allow, ask and deny lists go under rules:",
			"ask":   "did you mean `rules: {ask: [...]}`? the allow, ask and deny lists go under rules:",
			"deny":  "did you mean `rules: {deny: [...]}`? the allow, ask and deny lists go under rules:",
		}},
		secPermRules:   {what: "permissions.rules key"},
		secMemory:      {what: "memory key"},
		secMemPersist:  {what: "memory.persistent_memory key"},
		secMemEmbed:    {what: "memory.persistent_memory.embedding key"},
		secMemQdrant:   {what: "memory.persistent_memory.qdrant key"},
		secMemCompress: {what: "memory.compression key", after: compressionAfter},
		secMemRetrieve: {what: "memory.retrieval key"},
		secMemRecord:   {what: "memory.recording key"},
		secFSMemory:    {what: "filesystem_memory key"},
		secFSCompress:  {what: "filesystem_memory.compression key", after: compressionAfter},
		secUI: {what: "ui key", warn: true,
			hints: map[string]string{"type": "did you mean `display_type`?"}},
	}
}

// timeoutsAfter warns about a grace period without a round timeout it could extend.
func timeoutsAfter(w *walker, t *target, _ field, _ map[string]field) {
	if g := t.graceF; g != nil && t.cfg.Timeouts.InitialRound == 0 && t.cfg.Timeouts.SubsequentRound == 0 {
		w.warnAt(g.loc, "`round_timeout_grace_seconds` has no effect without a round timeout",
			"set initial_round_timeout_seconds or subsequent_round_timeout_seconds too", g.keyN)
	}
}
