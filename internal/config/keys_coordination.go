package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"massgen/internal/criteria"
	"massgen/internal/taskplan"
)

// orchestrator.coordination: MassGen's CoordinationConfig (agent_config.py,
// yaml_coordination_keys), and persona_generator inside it.

const (
	needsBroadcast = "broadcast"
	needsSubagents = "enable_subagents"
	needsEvaluator = "orchestrator_managed_round_evaluator"
	needsCriteria  = "evolving_criteria"
	needsPlanning  = "enable_agent_task_planning"
	needsSkills    = "use_skills"
	needsMemory    = "enable_memory_filesystem_mode"
	needsCheckpt   = "checkpoint_enabled"
)

var lowMediumHigh = []string{"low", "medium", "high"}

func coordinationKeys() []Key {
	return []Key{
		{Section: secCoord, Name: "enable_planning_mode", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "Hold back irreversible MCP tools until the winner presents; agents describe what they would do.",
			set: orch(func(o *Orchestrator, v value) { o.PlanningMode = v.b })},
		{Section: secCoord, Name: "planning_mode_instruction", Type: TypeString, Status: Implemented, Since: "0.1.12",
			Doc: "Replaces the built-in planning-mode instruction.",
			set: orch(func(o *Orchestrator, v value) { o.PlanningInstruction = v.s })},
		{Section: secCoord, Name: "max_orchestration_restarts", Type: TypeInt, Default: "0", Status: Implemented, Since: "0.1.12",
			Doc:  "After the final answer the presenter evaluates it (submit, or restart_orchestration with a reason and instructions); a restart runs the whole coordination again, at most this many times (attempt_<k>/ logs).",
			hint: "use 0 (no post-evaluation) or a small number of restarts", check: atLeast(0),
			set: func(_ *walker, t *target, v value) {
				t.cfg.Orchestrator.MaxOrchestrationRestarts, t.restartsF = v.n, &v.f
			}},
		{Section: secCoord, Name: "enable_agent_task_planning", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "Every agent keeps a task plan of its own with MassGen's planning tools (create_task_plan, update_task_status, ...), built in.",
			set: orch(func(o *Orchestrator, v value) { o.TaskPlanning.Enabled = v.b })},
		{Section: secCoord, Name: "max_tasks_per_plan", Type: TypeInt, Default: "10", Status: Implemented, Since: "0.1.12", Needs: needsPlanning,
			check: between(1, taskplan.MaxTasksCeiling), Doc: "Task planning: most tasks in an agent's plan; a call that would pass it is refused.",
			set: orch(func(o *Orchestrator, v value) { o.TaskPlanning.MaxTasks = v.n })},
		{Section: secCoord, Name: "task_planning_filesystem_mode", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Needs: needsPlanning, Doc: "Task planning: an agent with a workspace also finds its plan in tasks/plan.json there.",
			set: orch(func(o *Orchestrator, v value) { o.TaskPlanning.FilesystemMode = v.b })},
		{Section: secCoord, Name: "plan_depth", Type: TypeEnum, Enum: []string{"dynamic", "shallow", "medium", "deep"}, Default: "dynamic", Status: Implemented,
			Since: "0.1.38", Doc: "--plan: how many tasks the plan has (shallow 5-10, medium 20-50, deep 100-200; --plan-depth wins).",
			set: orch(func(o *Orchestrator, v value) { o.TaskPlanning.Depth = v.s })},
		{Section: secCoord, Name: "plan_target_steps", Type: TypeInt, Status: Implemented, Since: "0.1.50",
			check: between(1, taskplan.MaxTasksCeiling), Doc: "--plan: about how many tasks the plan has, instead of plan_depth's range.",
			set: orch(func(o *Orchestrator, v value) { o.TaskPlanning.TargetSteps = v.n })},
		{Section: secCoord, Name: "plan_target_chunks", Type: TypeInt, Status: OffOnly, Accept: []string{"1"}, Since: "0.1.50",
			check: atLeast(1), Doc: "--plan: how many chunks the plan is executed in.", hint: "use 1 (one execution run)",
			Why: "chunked plans, executed one chunk per run, are not built; --execute-plan runs the whole plan in one session"},
		{Section: secCoord, Name: "broadcast", Type: TypeAny, Default: "false", Status: Implemented, Since: "0.1.18", ex: "agents",
			Doc:   "ask_others: agents ask the other agents (agents; each answers through a side call on a copy of its conversation) or the person (human).",
			check: broadcastCheck, set: orch(func(o *Orchestrator, v value) { o.Broadcast.Mode = v.s })},
		{Section: secCoord, Name: "broadcast_sensitivity", Type: TypeEnum, Enum: lowMediumHigh, Default: "medium", Status: Implemented,
			Since: "0.1.18", Needs: needsBroadcast, Doc: "Broadcast: how often the tool's description tells agents to ask.",
			set: orch(func(o *Orchestrator, v value) { o.Broadcast.Sensitivity = v.s })},
		{Section: secCoord, Name: "response_depth", Type: TypeEnum, Enum: lowMediumHigh, Default: "medium", Status: Implemented,
			Since: "0.1.22", Needs: needsBroadcast, Doc: "Broadcast: how thorough the answering agents' side-call answers are.",
			set: orch(func(o *Orchestrator, v value) { o.Broadcast.ResponseDepth = v.s })},
		{Section: secCoord, Name: "broadcast_timeout", Type: TypeSeconds, Default: "300", Status: Implemented, Since: "0.1.18",
			Needs: needsBroadcast, Doc: "Broadcast: how long a question waits for its answers; then it ends with those that came.",
			set: orch(func(o *Orchestrator, v value) { o.Broadcast.Timeout = v.d })},
		{Section: secCoord, Name: "broadcast_wait_by_default", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.18",
			Needs: needsBroadcast, Doc: "Broadcast: ask_others waits for the answers; false returns a request id to collect them later.",
			set: orch(func(o *Orchestrator, v value) { o.Broadcast.WaitByDefault = v.b })},
		{Section: secCoord, Name: "max_broadcasts_per_agent", Type: TypeInt, Default: "10", Status: Implemented, Since: "0.1.18",
			Needs: needsBroadcast, check: atLeast(1), Doc: "Broadcast: questions one agent may ask in a turn.",
			set: orch(func(o *Orchestrator, v value) { o.Broadcast.MaxPerAgent = v.n })},
		{Section: secCoord, Name: "enable_memory_filesystem_mode", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "Two-tier filesystem memory: agents with a workspace keep memories under memory/short_term and memory/long_term (create_memory, update_memory, remove_memory, load_memory); every agent reads all of them, kept across turns.",
			set: orch(func(o *Orchestrator, v value) { o.MemoryFiles = v.b })},
		{Section: secCoord, Name: "learning_capture_mode", Type: TypeEnum, Enum: []string{"round", "verification_and_final_only", "final_only"},
			Default: "verification_and_final_only", Status: OffOnly, Since: "0.1.9x", Needs: needsMemory,
			Doc: "Memory and skills: when learnings are captured.", Why: "learnings are not captured automatically",
			Instead: "remove it: agents keep what they learn with create_memory"},
		{Section: secCoord, Name: "disable_final_only_round_capture_fallback", Type: TypeBool, Default: "false", Status: OffOnly,
			Since: "0.1.9x", Needs: needsMemory, Doc: "Memory and skills: capture fallback.", Why: "learnings are not captured automatically"},
		{Section: secCoord, Name: "compression_target_ratio", Type: TypeNumber, Default: "0.2", Status: Ignored, Since: "0.1.33", warn: true,
			Doc: "Reactive context compression: share of messages kept.", check: between01,
			Why: "compression is set by filesystem_memory.compression (or memory.compression); move the ratio there"},
		{Section: secCoord, Name: "use_skills", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "Agent Skills: the skills of skills_directory (folders with a SKILL.md) are listed to every agent, loaded with read_skill, and readable (scripts runnable) read-only.",
			set: orch(func(o *Orchestrator, v value) { o.UseSkills = v.b })},
		{Section: secCoord, Name: "massgen_skills", Type: TypeStrings, Status: EmptyOnly, Since: "0.1.12", Needs: needsSkills,
			Doc: "MassGen's built-in skills to enable.", Why: "MassGen's built-in skills (file_search, serena, semtools) are not shipped",
			Instead: "remove it, and put the skills you want in skills_directory"},
		{Section: secCoord, Name: "skills_directory", Type: TypeString, Default: ".agent/skills", Status: Implemented, Since: "0.1.12",
			Needs: needsSkills, Doc: "Where the skills are: one folder per skill (relative to where massgen runs).",
			set: orch(func(o *Orchestrator, v value) { o.SkillsDirectory = v.s })},
		{Section: secCoord, Name: "load_previous_session_skills", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.50",
			Needs: needsSkills, Doc: "Skills agents wrote in earlier sessions.", Why: "skills written by agents come from task planning, which is not built",
			Instead: "remove it, and copy the skills you want into skills_directory"},
		{Section: secCoord, Name: "persona_generator", Type: TypeMapping, Status: Implemented, Since: "0.1.15", ex: "{enabled: true}",
			Doc: "Diverse personas written into the agents' system messages before the run (see its section).",
			raw: coordSub(secPersona)},
		{Section: secCoord, Name: "evaluation_criteria_generator", Type: TypeSwitch, Status: OffOnly, Since: "0.1.55",
			Doc: "Task-specific evaluation criteria.", Why: "criteria generation is not built"},
		{Section: secCoord, Name: "prompt_improver", Type: TypeSwitch, Status: OffOnly, Since: "0.1.9x",
			Doc: "Rewrite the task prompt before coordination.", Why: "prompt improvement is not built"},
		{Section: secCoord, Name: "pre_collab_voting_threshold", Type: TypeInt, Status: Refused, Since: "0.1.9x",
			Doc: "Checklist gate of pre-collaboration runs.",
			Why: "it sets the checklist gate of pre-collaboration runs, which this build does not have"},
		{Section: secCoord, Name: "enable_subagents", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.29",
			Doc: "The spawn_subagents tool: an agent hands subtasks to nested teams whose answers come back as its result.",
			set: subagents(func(s *Subagents, v value) { s.Enabled = v.b })},
		{Section: secCoord, Name: "subagent_default_timeout", Type: TypeSeconds, Default: "300", Status: Implemented, Since: "0.1.29",
			Needs: needsSubagents, Doc: "Subagents: how long each may run (clamped to the min and max).",
			set: subagents(func(s *Subagents, v value) { s.DefaultTimeout = v.d })},
		{Section: secCoord, Name: "subagent_min_timeout", Type: TypeSeconds, Default: "60", Status: Implemented, Since: "0.1.29",
			Needs: needsSubagents, Doc: "Subagents: shortest timeout.", set: subagents(func(s *Subagents, v value) { s.MinTimeout = v.d })},
		{Section: secCoord, Name: "subagent_max_timeout", Type: TypeSeconds, Default: "600", Status: Implemented, Since: "0.1.29",
			Needs: needsSubagents, Doc: "Subagents: longest timeout.", set: subagents(func(s *Subagents, v value) { s.MaxTimeout = v.d })},
		{Section: secCoord, Name: "subagent_max_concurrent", Type: TypeInt, Default: "3", Status: Implemented, Since: "0.1.29",
			Needs: needsSubagents, check: between(1, 8), Doc: "Subagents: tasks per call and running at once per agent (at most 8).",
			set: subagents(func(s *Subagents, v value) { s.MaxConcurrent = v.n })},
		{Section: secCoord, Name: "subagent_round_timeouts", Type: TypeMapping, Status: EmptyOnly, Since: "0.1.9x", Needs: needsSubagents,
			Doc: "Subagents: round timeouts.", Instead: "remove it; subagents take timeout_settings' round timeouts"},
		{Section: secCoord, Name: "subagent_runtime_mode", Type: TypeEnum, Enum: []string{"isolated", "inherited", "delegated"},
			Accept: []string{"isolated", "inherited"}, Default: "isolated", Status: Implemented, Since: "0.1.9x", Needs: needsSubagents,
			Doc: "Subagents: runtime boundary. Both isolated and inherited run a nested session in this process, each subagent with its own workspace, tools and log folder.",
			Why: "delegated launches subagents from a container on its host, which this build does not do",
			set: subagents(func(s *Subagents, v value) { s.RuntimeMode = v.s })},
		{Section: secCoord, Name: "subagent_runtime_fallback_mode", Type: TypeEnum, Enum: []string{"inherited"}, Status: Ignored,
			Since: "0.1.9x", Needs: needsSubagents, Doc: "Subagents: fallback when isolation is unavailable (it is always available here)."},
		{Section: secCoord, Name: "subagent_host_launch_prefix", Type: TypeStrings, Status: EmptyOnly, Since: "0.1.9x", Needs: needsSubagents,
			Doc: "Subagents: launch prefix inside containers.", Instead: "remove it; subagents run inside this process, not through a launcher"},
		{Section: secCoord, Name: "subagent_orchestrator", Type: TypeSwitch, Status: OffOnly, Since: "0.1.29", Needs: needsSubagents,
			Doc: "Subagents: a separate team for subagents.", Why: "a separate subagent team is not built; subagents are teams of the parent's agents"},
		{Section: secCoord, Name: "background_subagents", Type: TypeSwitch, Default: "on", Status: Implemented, Since: "0.1.41", Needs: needsSubagents,
			Doc: "Subagents: allow background: true (the result reaches the agent at its next step).",
			set: subagents(func(s *Subagents, v value) { s.NoBackground = !v.b })},
		{Section: secCoord, Name: "subagent_types", Type: TypeStrings, Status: Implemented, Since: "0.1.55", Needs: needsSubagents, ex: "[explorer]",
			check: subagentTypesCheck, Doc: "Subagents: types offered (evaluator, explorer, researcher by default; novelty, critic, builder too).",
			set: subagents(func(s *Subagents, v value) { s.Types = append([]string{}, v.list...) })},
		{Section: secCoord, Name: "async_subagents", Type: TypeAny, Status: Refused, Since: "0.1.41",
			msg: "`async_subagents` is not supported: MassGen removed it", Instead: "remove it; MassGen renamed it background_subagents",
			Doc: "Removed; MassGen rejects it too."},
		{Section: secCoord, Name: "use_two_tier_workspace", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x",
			Doc: "Deprecated scratch/deliverable workspaces.", Instead: "remove it; MassGen replaced it with write_mode"},
		{Section: secCoord, Name: "task_decomposer", Type: TypeMapping, Status: Implemented, Since: "0.1.48", ex: "{enabled: true}",
			Doc: "Decomposition mode: how agents without a subtask get one (see its section).",
			raw: coordSub(secDecomposer)},
		{Section: secCoord, Name: "write_mode", Type: TypeEnum, Enum: []string{"auto", "worktree", "isolated", "legacy"},
			Default: "legacy", Status: Implemented, Since: "0.1.48",
			Doc: "How writable context paths are changed: legacy (the final presenter writes them directly), or each agent changes its own copy " +
				"(worktree: a git worktree, a copy outside a repository; isolated: a copy; auto: worktree in a repository, else a copy) and " +
				"the presenter's changes are applied at the end. Unset means legacy, as MassGen's docstring says (its dataclass says auto).",
			set: orch(func(o *Orchestrator, v value) { o.WriteMode = v.s })},
		{Section: secCoord, Name: "enable_changedoc", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.51",
			Doc: "Agents with a workspace keep a decision journal, tasks/changedoc.md, shown with their answers in <changedoc> tags " +
				"([SELF] becomes the answer's label); the presenter leaves the definitive one, saved as final/<winner>/changedoc.md.",
			set: orch(func(o *Orchestrator, v value) { o.Changedoc = v.b })},
		{Section: secCoord, Name: "drift_conflict_policy", Type: TypeEnum, Enum: []string{"skip", "prefer_presenter", "fail"},
			Default: "skip", Status: Implemented, Since: "0.1.51", Needs: "write_mode",
			Doc: "Isolated writes: a file changed in the folder during the run is skipped (skip), overwritten (prefer_presenter), " +
				"or stops the whole apply (fail, exit code 2).",
			set: orch(func(o *Orchestrator, v value) { o.DriftPolicy = v.s })},
		{Section: secCoord, Name: "round_evaluator_before_checklist", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.61",
			Doc: "With orchestrator_managed_round_evaluator: before each round after the agent's first answer, a round_evaluator subagent " +
				"reviews the current answers, and its critique opens that round as the basis of the agent's checklist and next answer. " +
				"MassGen's constraints hold: one agent, voting_sensitivity: checklist_gated, enable_subagents, round_evaluator in subagent_types.",
			set: func(_ *walker, t *target, v value) {
				t.cfg.Orchestrator.RoundEvaluator.BeforeChecklist, t.evaluatorF = v.b, &v.f
			}},
		{Section: secCoord, Name: "orchestrator_managed_round_evaluator", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.61",
			Doc: "The orchestrator launches the round evaluator (required with round_evaluator_before_checklist); round_evaluator is then " +
				"reserved, not offered to spawn_subagents.",
			set: orch(func(o *Orchestrator, v value) { o.RoundEvaluator.Managed = v.b })},
		{Section: secCoord, Name: "round_evaluator_skip_synthesis", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.61",
			Needs: needsEvaluator, Doc: "Round evaluator: pass the evaluators' raw critiques instead of one synthesized report.",
			Why:     "a subagent here returns its team's one final answer; the raw critiques stay in its log folder",
			Instead: "remove it; read the evaluator's agents' answers in its log folder (subagents/<id>/turn_1)"},
		{Section: secCoord, Name: "round_evaluator_refine", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.61",
			Needs: needsEvaluator, Doc: "Round evaluator: its team iterates and votes (slower, dearer) instead of answering once each.",
			set: orch(func(o *Orchestrator, v value) { o.RoundEvaluator.Refine = v.b })},
		{Section: secCoord, Name: "round_evaluator_transformation_pressure", Type: TypeEnum, Enum: []string{"gentle", "balanced", "aggressive"},
			Default: "balanced", Status: Implemented, Since: "0.1.61", Needs: needsEvaluator,
			Doc: "Round evaluator: how hard it looks for a bolder direction (gentle: deepen the current one; aggressive: search for a better one).",
			set: orch(func(o *Orchestrator, v value) { o.RoundEvaluator.Pressure = v.s })},
		{Section: secCoord, Name: "enable_quality_rethink_on_iteration", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.61",
			Doc: "Quality-rethinking subagent from round 2.", Why: "the quality_rethinking subagent type is not built"},
		{Section: secCoord, Name: "enable_novelty_on_iteration", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.61",
			Doc: "Novelty subagent from round 2.", Why: "orchestrator-launched novelty subagents are not built (agents can spawn the novelty type themselves)"},
		{Section: secCoord, Name: "enable_execution_trace_analyzer", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.61",
			Doc: "Execution-trace analyzer beside the round evaluator.", Why: "the execution_trace_analyzer subagent type is not built"},
		{Section: secCoord, Name: "auto_trace_analysis", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x",
			Doc: "Background trace analyzer from round 2.", Why: "trace analysis is not built"},
		{Section: secCoord, Name: "evolving_criteria", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.70",
			Doc: "Evolve the evaluation criteria between rounds.", Why: "evaluation criteria are not built"},
		{Section: secCoord, Name: "evolving_criteria_score_threshold", Type: TypeInt, Default: "8", Status: Ignored, Since: "0.1.70",
			Needs: needsCriteria, Doc: "Evolving criteria: score of an easy criterion."},
		{Section: secCoord, Name: "evolving_criteria_max_evolutions", Type: TypeInt, Default: "2", Status: Ignored, Since: "0.1.70",
			Needs: needsCriteria, Doc: "Evolving criteria: most evolutions."},
		{Section: secCoord, Name: "evolving_criteria_min_high_score_count", Type: TypeInt, Default: "2", Status: Ignored, Since: "0.1.70",
			Needs: needsCriteria, Doc: "Evolving criteria: criteria at threshold that trigger it."},
		{Section: secCoord, Name: "evolving_criteria_timeout", Type: TypeSeconds, Default: "300", Status: Ignored, Since: "0.1.70",
			Needs: needsCriteria, Doc: "Evolving criteria: time for an evolution."},
		{Section: secCoord, Name: "enable_evaluator_personas", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x",
			Doc: "set_evaluator_personas tool.", Why: "evaluator personas are not built"},
		{Section: secCoord, Name: "novelty_injection", Type: TypeEnum, Enum: []string{"none", "gentle", "moderate", "aggressive"},
			Accept: []string{"none"}, Default: "none", Status: OffOnly, Since: "0.1.52",
			Doc: "Pressure towards novel answers.", Why: "novelty injection is not built"},
		{Section: secCoord, Name: "improvements", Type: TypeMapping, Status: Ignored, Since: "0.1.9x", Needs: needsChecklist,
			Doc: "Checklist voting: quality gate of draft approaches."},
		{Section: secCoord, Name: "checklist_criteria_preset", Type: TypeEnum, Enum: criteria.Presets(), Status: Implemented, Since: "0.1.55",
			Doc: "Checklist voting: a named set of criteria instead of the default (correctness first).",
			set: checklist(func(c *Checklist, v value) { c.CriteriaPreset = v.s })},
		{Section: secCoord, Name: "checklist_criteria_inline", Type: TypeList, Status: Implemented, Since: "0.1.70", ex: "[{text: Correct., category: primary}]",
			Doc: "Checklist voting: the criteria written out, each {text, category: primary|standard|stretch}; wins over the preset.",
			raw: func(w *walker, t *target, f field) {
				t.cfg.Orchestrator.Checklist.CriteriaInline = w.inlineCriteria(f, t)
			}},
		{Section: secCoord, Name: "criteria_mode", Type: TypeEnum, Enum: []string{"static", "bootstrap_inline", "bootstrap_subagent"},
			Default: "static", Status: Implemented, Since: "0.1.85", Needs: needsChecklist,
			Doc: "Checklist voting: criteria emerge during the run, appended to the configured ones and scored from each agent's next round: " +
				"static (none), bootstrap_inline (agents propose them with submit_checklist's proposed_criteria), bootstrap_subagent " +
				"(a critic subagent reads each new answer set and writes them; a reply it cannot read adds none and says so). " +
				"The list is saved as bootstrap_criteria_accumulator.json in the turn's log folder.",
			set: func(_ *walker, t *target, v value) {
				t.cfg.Orchestrator.Checklist.CriteriaMode, t.criteriaModeF = v.s, &v.f
			}},
		{Section: secCoord, Name: "bootstrap_max_per_agent_per_round", Type: TypeInt, Default: "3", Status: Implemented, Since: "0.1.85",
			Needs: "criteria_mode", check: atLeast(0), Doc: "Emerging criteria: proposals taken from one agent in one round (0: 10, the hard cap).",
			set: checklist(func(c *Checklist, v value) { n := v.n; c.BootstrapMaxPerAgentPerRound = &n })},
		{Section: secCoord, Name: "bootstrap_max_total", Type: TypeInt, Default: "30", Status: Implemented, Since: "0.1.85",
			Needs: "criteria_mode", check: atLeast(0), Doc: "Emerging criteria kept, the oldest dropped first (0, MassGen's unlimited: 30, the hard cap).",
			set: checklist(func(c *Checklist, v value) { n := v.n; c.BootstrapMaxTotal = &n })},
		{Section: secCoord, Name: "resume_from_log", Type: TypeMapping, Status: EmptyOnly, Since: "0.1.9x",
			Doc: "Resume a run from a previous log.", Instead: "remove it; this build cannot resume a run from its logs"},
		{Section: secCoord, Name: "checkpoint_enabled", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.68",
			Doc: "Checkpoint coordination.", Why: "checkpoint mode is not built"},
		{Section: secCoord, Name: "checkpoint_mode", Type: TypeEnum, Enum: []string{"conversation", "task"}, Default: "conversation",
			Status: Ignored, Since: "0.1.68", Needs: needsCheckpt, Doc: "Checkpoints: mode."},
		{Section: secCoord, Name: "checkpoint_guidance", Type: TypeString, Status: Ignored, Since: "0.1.68", Needs: needsCheckpt,
			Doc: "Checkpoints: guidance for the main agent."},
		{Section: secCoord, Name: "checkpoint_gated_patterns", Type: TypeStrings, Status: Ignored, Since: "0.1.68", Needs: needsCheckpt,
			Doc: "Checkpoints: gated tools."},
		{Section: secCoord, Name: "standalone_checkpoint", Type: TypeSwitch, Status: OffOnly, Since: "0.1.9x",
			Doc: "Standalone checkpoint MCP server.", Why: "checkpoint mode is not built"},
		{Section: secCoord, Name: "web_review", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.9x",
			Doc: "Change review in MassGen's Web UI.", Why: "it needs MassGen's Web UI"},
		{Section: secCoord, Name: "fast_iteration_mode", Type: TypeBool, Default: "false", Status: Ignored, Since: "0.1.70",
			Needs: needsChecklist, Doc: "Speed: submit sooner and iterate (checklist voting)."},
		{Section: secCoord, Name: "max_verifications_per_round", Type: TypeInt, Status: Ignored, Since: "0.1.79", Needs: needsChecklist,
			check: atLeast(0), Doc: "Speed: verification passes per round."},
		{Section: secCoord, Name: "max_internal_fix_loops", Type: TypeInt, Status: Ignored, Since: "0.1.79", Needs: needsChecklist,
			check: atLeast(0), Doc: "Speed: fix loops per round."},
		{Section: secCoord, Name: "skip_redundant_scaffolding", Type: TypeBool, Default: "false", Status: Ignored, Since: "0.1.79",
			Needs: needsChecklist, Doc: "Speed: continue existing scaffolding."},
	}
}

func decomposerKeys() []Key {
	return []Key{
		{Section: secDecomposer, Name: "enabled", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.48",
			Doc: "Assign a subtask to each agent without one, in one call to the first agent's model before coordination (false: those agents split the work among themselves).",
			set: orch(func(o *Orchestrator, v value) { o.TaskDecomposer.Disabled = !v.b })},
		{Section: secDecomposer, Name: "decomposition_guidelines", Type: TypeString, Status: Implemented, Since: "0.1.48",
			Doc: "Guidelines added to the decomposer's request.",
			set: orch(func(o *Orchestrator, v value) { o.TaskDecomposer.Guidelines = v.s })},
		{Section: secDecomposer, Name: "timeout_seconds", Type: TypeSeconds, Default: "300", Status: Implemented, Since: "0.1.48",
			Doc: "Bounds the decomposer's call; past it every agent without a subtask gets a built-in one.",
			set: orch(func(o *Orchestrator, v value) { o.TaskDecomposer.Timeout = v.d })},
	}
}

func personaKeys() []Key {
	return []Key{
		{Section: secPersona, Name: "enabled", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.15",
			Doc: "Write personas before the run.",
			set: orch(func(o *Orchestrator, v value) { o.PersonaGenerator.Enabled = v.b })},
		{Section: secPersona, Name: "diversity_mode", Type: TypeEnum, Enum: []string{"perspective", "implementation", "methodology"},
			Default: "perspective", Status: Implemented, Since: "0.1.30", Doc: "What the personas differ in.",
			set: orch(func(o *Orchestrator, v value) { o.PersonaGenerator.DiversityMode = v.s })},
		{Section: secPersona, Name: "persona_guidelines", Type: TypeString, Status: EmptyOnly, Since: "0.1.15",
			Doc: "Custom guidelines for the persona writer.", Instead: "remove it; diversity_mode sets what the personas differ in"},
		{Section: secPersona, Name: "persist_across_turns", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.9x",
			Doc: "Later turns of a session keep the personas of the turn that wrote them instead of writing new ones.",
			set: orch(func(o *Orchestrator, v value) { o.PersonaGenerator.PersistAcrossTurns = v.b })},
		{Section: secPersona, Name: "after_first_answer", Type: TypeEnum, Enum: []string{"drop", "soften", "keep"}, Accept: []string{"drop"},
			Default: "drop", Status: OffOnly, Since: "0.1.9x", Doc: "What happens to a persona after the agent's first answer.",
			Why: "the persona is dropped after the first answer, MassGen's default"},
	}
}

// broadcastCheck reads broadcast: false, agents or human.
func broadcastCheck(w *walker, v *value) bool {
	switch n := v.f.val.(type) {
	case *ast.BoolNode:
		if !n.Value {
			return true
		}
	case *ast.StringNode:
		if n.Value == "agents" || n.Value == "human" {
			v.s = n.Value
			return true
		}
	}
	w.errf(v.f, "use `false`, `agents` or `human`", "invalid broadcast `%s`", clip(scalarText(v.f.val)))
	return false
}

// between01 checks a ratio.
func between01(w *walker, v *value) bool {
	if v.x < 0 || v.x > 1 {
		w.errf(v.f, "use a number from 0 to 1", "%s must be between 0 and 1", v.f.key)
		return false
	}
	return true
}

// secCriterion is one entry of checklist_criteria_inline.
const secCriterion = "orchestrator.coordination.checklist_criteria_inline[]"

func criterionKeys() []Key {
	return []Key{
		{Section: secCriterion, Name: "text", Type: TypeString, Status: Implemented, Since: "0.1.70", Doc: "What the criterion asks of an answer.",
			set: func(_ *walker, t *target, v value) { t.crit.Text = v.s }},
		{Section: secCriterion, Name: "description", Type: TypeString, Status: Implemented, Since: "0.1.70", Doc: "MassGen's alias of text.",
			set: func(_ *walker, t *target, v value) { t.crit.Text = cmpOr(t.crit.Text, v.s) }},
		{Section: secCriterion, Name: "name", Type: TypeString, Status: Implemented, Since: "0.1.70", Doc: "MassGen's second alias of text.",
			set: func(_ *walker, t *target, v value) { t.crit.Text = cmpOr(t.crit.Text, v.s) }},
		{Section: secCriterion, Name: "category", Type: TypeEnum, Enum: []string{"primary", "standard", "stretch", "must", "should", "could", "core"},
			Default: "standard", Status: Implemented, Since: "0.1.70", Doc: "primary (at most one: ranks answers first), standard or stretch.",
			set: func(_ *walker, t *target, v value) { t.crit.Category = criteria.NormalizeCategory(v.s) }},
		{Section: secCriterion, Name: "verify_by", Type: TypeString, Status: Ignored, Since: "0.1.70", Doc: "How to gather evidence; not shown to agents by this build."},
		{Section: secCriterion, Name: "anti_patterns", Type: TypeStrings, Status: Ignored, Since: "0.1.85", Doc: "Failure modes that tank the score; not shown to agents by this build."},
		{Section: secCriterion, Name: "score_anchors", Type: TypeStringMap, Status: Ignored, Since: "0.1.85", Doc: "What scores 3, 5, 7, 9 look like; not shown to agents by this build."},
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// inlineCriteria reads checklist_criteria_inline: a list of {text, category} mappings, or of
// plain strings (standard criteria).
func (w *walker) inlineCriteria(f field, t *target) []ChecklistCriterion {
	items, _ := w.list(f)
	var out []ChecklistCriterion
	for _, it := range items {
		if isScalar(it.val) {
			if s, ok := w.str(it); ok && s != "" {
				out = append(out, ChecklistCriterion{Text: s, Category: criteria.Standard})
			}
			continue
		}
		var c ChecklistCriterion
		sub := *t
		sub.crit = &c
		w.walk(secCriterion, it, &sub)
		if c.Text == "" {
			w.errAt(it.loc, "a checklist criterion needs its text", "add text: with what the criterion asks of an answer", it.raw)
			continue
		}
		if n := len([]rune(c.Text)); n > criteria.MaxTextChars {
			w.errAt(it.loc, fmt.Sprintf("a checklist criterion is %d characters long, over the limit of %d", n, criteria.MaxTextChars),
				"shorten it: every checklist repeats it", it.raw)
			continue
		}
		if c.Category == "" {
			c.Category = criteria.Standard
		}
		out = append(out, c)
	}
	if len(out) > criteria.MaxItems {
		w.errf(f, fmt.Sprintf("keep at most %d", criteria.MaxItems), "%d checklist criteria, over the limit of %d: each is scored for every answer", len(out), criteria.MaxItems)
		return nil
	}
	return out
}
