package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	"massgen/internal/config"
)

// The config travels to the workers as a config file in MassGen's schema (JSON, which the
// YAML loader reads), never as a parsed struct: anyone who can start workflows on the task
// queue writes that input, so a worker reads it through config.Parse, with every check a
// config file from the command line gets.

// wireName is the file name configs received from Temporal carry in their errors.
const wireName = "session.json"

// encodeConfig writes cfg (as ForWorkers made it) as a config file. It checks that the file
// reads back as cfg, so a setting the encoder does not know is refused here, by name, instead
// of being lost on the way.
func encodeConfig(cfg *config.Config) (string, error) {
	b, err := json.Marshal(configDoc(cfg))
	if err != nil {
		return "", fmt.Errorf("encode the config for the workers: %w", err)
	}
	back, err := DecodeConfig(string(b))
	if err != nil {
		return "", fmt.Errorf("the config as sent to the workers does not load: %w", err)
	}
	if d := firstDifference(comparable(cfg), comparable(back)); d != "" {
		return "", fmt.Errorf("%s cannot be sent to Temporal workers yet; run without --temporal", d)
	}
	return string(b), nil
}

// DecodeConfig reads a config received from Temporal, as the CLI reads a file.
func DecodeConfig(doc string) (*config.Config, error) {
	if doc == "" {
		return nil, errors.New("the session carries no config")
	}
	cfg, rep := config.ParseReceived(wireName, []byte(doc))
	if !rep.OK() {
		return nil, rep.Err()
	}
	return cfg, nil
}

// comparable is cfg without what does not travel: where it was read from and its warnings.
func comparable(cfg *config.Config) *config.Config {
	out := *cfg
	out.Path, out.Warnings = "", nil
	out.Orchestrator.VoteWeightsFile = "" // its weights travel as agent_weights
	// A verifier is its settings: where the config wrote them is the loader's.
	out.Orchestrator.Verifiers = nil
	for _, v := range cfg.Orchestrator.Verifiers {
		out.Orchestrator.Verifiers = append(out.Orchestrator.Verifiers, config.Verifier{Aspect: v.Aspect, Agent: v.Agent, Subagent: v.Subagent, Instructions: v.Instructions})
	}
	out.Agents = make([]config.Agent, len(cfg.Agents))
	for i, a := range cfg.Agents {
		// A custom tool's file travels as the path found for it.
		cts := make([]config.CustomTool, len(a.Backend.Tools.CustomTools))
		for k, c := range a.Backend.Tools.CustomTools {
			c.Path = cmpOr(c.File, c.Path)
			cts[k] = c
		}
		a.Backend.Tools.CustomTools = cts
		a.Backend.Uploads = sentUploads(a.Backend.Uploads, cfg.Path)
		out.Agents[i] = a
	}
	return &out
}

// firstDifference names the first field where a and b differ ("" when they are equal).
func firstDifference(a, b *config.Config) string {
	if len(a.Agents) == len(b.Agents) {
		for i := range a.Agents {
			if f := diffField(reflect.ValueOf(a.Agents[i]), reflect.ValueOf(b.Agents[i])); f != "" {
				return fmt.Sprintf("agent %s: %s", a.Agents[i].ID, f)
			}
		}
	}
	if f := diffField(reflect.ValueOf(*a), reflect.ValueOf(*b)); f != "" {
		return "the setting " + f
	}
	return ""
}

// diffField names the first exported field of two structs that differs.
func diffField(a, b reflect.Value) string {
	for i := range a.NumField() {
		f := a.Type().Field(i)
		x, y := a.Field(i), b.Field(i)
		if reflect.DeepEqual(x.Interface(), y.Interface()) {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			if sub := diffField(x, y); sub != "" {
				return f.Name + "." + sub
			}
		}
		return f.Name
	}
	return ""
}

type obj = map[string]any

// configDoc is cfg in MassGen's schema: every setting the workers use, defaults included.
func configDoc(cfg *config.Config) obj {
	agents := make([]any, len(cfg.Agents))
	for i, a := range cfg.Agents {
		ag := obj{"id": a.ID, "backend": backendDoc(a.Backend, cfg.Path)}
		putStr(ag, "system_message", a.SystemMessage)
		putStr(ag, "voting_sensitivity", a.VotingSensitivity)
		putStr(ag, "subtask", a.Subtask)
		agents[i] = ag
	}
	t := cfg.Timeouts
	timeouts := obj{}
	for k, d := range map[string]time.Duration{"orchestrator_timeout_seconds": t.Orchestrator, "agent_timeout_seconds": t.Agent,
		"presentation_timeout_seconds": t.Presentation, "initial_round_timeout_seconds": t.InitialRound,
		"subsequent_round_timeout_seconds": t.SubsequentRound, "round_timeout_grace_seconds": t.RoundGrace} {
		if d > 0 {
			timeouts[k] = json.Number(strconv.FormatFloat(d.Seconds(), 'g', -1, 64))
		}
	}
	doc := obj{"agents": agents, "orchestrator": orchestratorDoc(cfg.Orchestrator), "timeout_settings": timeouts}
	if cfg.Permissions != nil {
		doc["permissions"] = permissionsDoc(*cfg.Permissions)
	}
	ui := obj{"logging_enabled": cfg.UI.LoggingEnabled}
	putStr(ui, "display_type", cfg.UI.DisplayType)
	doc["ui"] = ui
	putStr(doc, "session_id", cfg.SessionID)
	memoryDocs(doc, agents, cfg)
	return doc
}

func backendDoc(b config.Backend, configFile string) obj {
	out := obj{}
	for k, v := range b.Params {
		out[k] = keepFloats(v)
	}
	out["type"] = b.Type
	putStr(out, "model", b.Model)
	putStr(out, "base_url", b.BaseURL)
	putStr(out, "api_version", b.APIVersion)
	if b.Hosted.WebSearch {
		out["enable_web_search"] = true
	}
	if b.Hosted.CodeExecution {
		out["enable_code_execution"] = true
	}
	putInt(out, "media_max_file_size_mb", b.UploadMaxMB)
	uploadsDoc(out, b, configFile)
	toolsDoc(out, b)
	if s := b.Script; s != nil {
		for k, v := range scriptDoc(*s) {
			out[k] = v
		}
	}
	return out
}

func scriptDoc(s config.Script) obj {
	out := obj{}
	if len(s.Answers) > 0 {
		out["answers"] = s.Answers
	}
	putInt(out, "improve_after", s.ImproveAfter)
	for k, v := range map[string]string{"vote": s.Vote, "reason": s.Reason, "checklist_correct": s.ChecklistCorrect,
		"final": s.Final, "thinking": s.Thinking, "planning": s.Planning, "stop_status": s.StopStatus, "stop_summary": s.StopSummary,
		"broadcast_reply": s.BroadcastReply, "criteria_reply": s.CriteriaReply, "evaluation_reply": s.EvaluationReply,
		"restart_reason": s.RestartReason, "restart_instructions": s.RestartInstructions} {
		putStr(out, k, v)
	}
	for k, v := range map[string][]string{"verdicts": s.Verdicts, "post_evaluation": s.PostEvaluation} {
		if len(v) > 0 {
			out[k] = v
		}
	}
	if s.Latency > 0 {
		out["latency"] = s.Latency.String()
	}
	if s.ChunkDelay > 0 {
		out["chunk_delay"] = s.ChunkDelay.String()
	}
	if len(s.Faults) > 0 {
		fs := make([]any, len(s.Faults))
		for i, f := range s.Faults {
			fs[i] = obj{"kind": string(f.Kind), "call": f.Call}
		}
		out["faults"] = fs
	}
	if len(s.ToolCalls) > 0 {
		cs := make([]any, len(s.ToolCalls))
		for i, c := range s.ToolCalls {
			cs[i] = obj{"name": c.Name, "args": c.Args}
		}
		out["tool_calls"] = cs
	}
	return out
}

func orchestratorDoc(o config.Orchestrator) obj {
	out := obj{
		"skip_coordination_rounds": o.SkipCoordinationRounds, "defer_voting_until_all_answered": o.DeferVotingUntilAllAnswered,
		"disable_injection": o.DisableInjection, "skip_voting": o.SkipVoting, "end_when_decided": o.EndWhenDecided,
		"fairness_enabled": o.Fairness.Enabled, "checklist_require_gap_report": o.Checklist.RequireGapReport,
		"checklist_first_answer": o.Checklist.FirstAnswer, "defer_peer_updates_until_restart": o.DeferPeerUpdatesUntilRestart,
	}
	for k, v := range map[string]string{"voting_sensitivity": o.VotingSensitivity, "answer_novelty_requirement": o.AnswerNovelty,
		"final_answer_strategy": o.FinalAnswerStrategy, "presenter_agent": o.PresenterAgent, "gap_report_mode": o.Checklist.GapReportMode,
		"turn_context": o.TurnContext, "presentation_context": o.PresentationContext, "peer_view": o.PeerView,
		"vote_weighting": o.VoteWeighting, "coordination_mode": o.CoordinationMode} {
		putStr(out, k, v)
	}
	for k, v := range map[string]int{"max_new_answers_per_agent": o.MaxNewAnswersPerAgent, "max_new_answers_global": o.MaxNewAnswersGlobal,
		"failure_budget": o.FailureBudget, "max_response_chars": o.MaxResponseChars, "max_tool_calls_per_response": o.MaxToolCallsPerResponse,
		"max_answer_chars": o.MaxAnswerChars, "fairness_lead_cap_answers": o.Fairness.LeadCapAnswers,
		"max_midstream_injections_per_round": o.Fairness.MaxMidstreamInjectionsPerRound, "max_checklist_calls_per_round": o.Checklist.MaxCallsPerRound,
		"peer_view_size": o.PeerViewSize, "max_tokens_per_agent": o.MaxTokensPerAgent, "lazy_start_agents": o.LazyStartAgents, "lazy_start_agreement": o.LazyStartAgreement} {
		putInt(out, k, v)
	}
	if o.MaxCostUSD > 0 {
		out["max_cost_usd"] = o.MaxCostUSD
	}
	if o.VotingThreshold != nil {
		out["voting_threshold"] = *o.VotingThreshold
	}
	if len(o.AgentWeights) > 0 {
		// The weights a vote_weights_file gave travel as agent_weights: the worker has no file.
		w := obj{}
		for id, x := range o.AgentWeights {
			w[id] = x
		}
		out["agent_weights"] = w
	}
	if len(o.ContextPaths) > 0 {
		out["context_paths"] = contextPathsDoc(o.ContextPaths)
	}
	mediaDoc(out, o.Media, false)
	coord := obj{}
	putStr(coord, "write_mode", o.WriteMode)
	putStr(coord, "drift_conflict_policy", o.DriftPolicy)
	if o.UseSkills {
		// The skills travel through the store (temporalrun); the worker sets where it put them.
		coord["use_skills"] = true
		putStr(coord, "skills_directory", o.SkillsDirectory)
	}
	if o.PlanningMode {
		coord["enable_planning_mode"] = true
	}
	putStr(coord, "planning_mode_instruction", o.PlanningInstruction)
	if pg := o.PersonaGenerator; pg.Enabled || pg.DiversityMode != "" || pg.PersistAcrossTurns {
		p := obj{"enabled": pg.Enabled, "persist_across_turns": pg.PersistAcrossTurns}
		putStr(p, "diversity_mode", pg.DiversityMode)
		coord["persona_generator"] = p
	}
	if td := o.TaskDecomposer; td != (config.TaskDecomposer{}) {
		d := obj{"enabled": !td.Disabled}
		putStr(d, "decomposition_guidelines", td.Guidelines)
		if td.Timeout > 0 {
			d["timeout_seconds"] = json.Number(strconv.FormatFloat(td.Timeout.Seconds(), 'g', -1, 64))
		}
		coord["task_decomposer"] = d
	}
	if b := o.Broadcast; b.Mode != "" {
		coord["broadcast"] = b.Mode
		putStr(coord, "broadcast_sensitivity", b.Sensitivity)
		putStr(coord, "response_depth", b.ResponseDepth)
		if b.Timeout > 0 {
			coord["broadcast_timeout"] = json.Number(strconv.FormatFloat(b.Timeout.Seconds(), 'g', -1, 64))
		}
		coord["broadcast_wait_by_default"] = b.WaitByDefault
		putInt(coord, "max_broadcasts_per_agent", b.MaxPerAgent)
	}
	putStr(coord, "checklist_criteria_preset", o.Checklist.CriteriaPreset)
	if o.MemoryFiles {
		coord["enable_memory_filesystem_mode"] = true // the memories are files in the holder's workspaces
	}
	taskPlanningDoc(coord, o.TaskPlanning)
	if len(o.Checklist.CriteriaInline) > 0 {
		cs := make([]any, len(o.Checklist.CriteriaInline))
		for i, c := range o.Checklist.CriteriaInline {
			cs[i] = obj{"text": c.Text, "category": c.Category}
		}
		coord["checklist_criteria_inline"] = cs
	}
	subagentsDoc(coord, o.Subagents)
	bootstrapDoc(coord, o)
	restartsDoc(out, coord, o)
	if len(coord) > 0 {
		out["coordination"] = coord
	}
	if len(o.Verifiers) > 0 {
		vs := make([]any, len(o.Verifiers))
		for i, v := range o.Verifiers {
			d := obj{"aspect": v.Aspect}
			putStr(d, "agent", v.Agent)
			putStr(d, "instructions", v.Instructions)
			if v.Subagent {
				d["subagent"] = true
			}
			vs[i] = d
		}
		out["verifiers"] = vs
	}
	if d := o.DSPy; d.Enabled || !reflect.DeepEqual(d, config.DefaultDSPy()) {
		out["dspy"] = dspyDoc(d)
	}
	return out
}

// dspyDoc is orchestrator.dspy, every key written (their defaults are not all zero).
func dspyDoc(d config.DSPy) obj {
	out := obj{"enabled": d.Enabled, "num_variants": d.NumVariants, "strategy": d.Strategy, "cache_enabled": d.CacheEnabled,
		"semantic_threshold": d.SemanticThreshold, "validate_semantics": d.ValidateSemantics, "use_chain_of_thought": d.ChainOfThought}
	if len(d.TemperatureRange) > 0 {
		out["temperature_range"] = d.TemperatureRange
	}
	if d.Backend != nil {
		out["backend"] = backendDoc(*d.Backend, "")
	}
	return out
}

// keepFloats is v with every whole float written with a decimal point (1.0, not 1), so that
// it reads back as the float it is (temperature: 1.0), in maps and lists too.
func keepFloats(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) && math.Abs(x) < 1e15 {
			return json.Number(strconv.FormatFloat(x, 'f', 1, 64))
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = keepFloats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = keepFloats(e)
		}
		return out
	}
	return v
}

func putStr(m obj, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func putInt(m obj, k string, v int) {
	if v != 0 {
		m[k] = v
	}
}

// taskPlanningDoc writes enable_agent_task_planning and its keys: each agent's plan travels
// with its conversation (engine.Conversation.Plan), the settings with the config.
func taskPlanningDoc(coord obj, tp config.TaskPlanning) {
	if tp.Enabled {
		coord["enable_agent_task_planning"] = true
	}
	if tp.FilesystemMode {
		coord["task_planning_filesystem_mode"] = true
	}
	putInt(coord, "max_tasks_per_plan", tp.MaxTasks)
	putStr(coord, "plan_depth", tp.Depth)
	putInt(coord, "plan_target_steps", tp.TargetSteps)
}
