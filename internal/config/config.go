// Package config loads MassGen YAML (or JSON) configuration into typed, validated settings.
// Every problem it finds names the file, line and column and says what to do about it.
package config

import "time"

// Config is a loaded, validated configuration with defaults applied.
type Config struct {
	// Path is the file the config came from ("" when built in memory).
	Path         string
	Agents       []Agent
	Orchestrator Orchestrator
	UI           UI
	Timeouts     Timeouts
	// SessionID is the top-level session_id: the session to resume ("" for a new one).
	SessionID string
	// Permissions is the top-level permissions: block (nil without one); PermissionsFor
	// merges it with an agent's own.
	Permissions *Permissions
	// Memory is the top-level memory: block (every agent's, unless it has its own: see
	// Agent.Memory); FilesystemMemory the filesystem_memory: block.
	Memory           Memory
	FilesystemMemory FilesystemMemory
	// Warnings are problems that do not stop a run (unknown top-level keys, ...).
	Warnings []Issue
}

// Agent is one configured participant. Its anonymous label is agent<i> by position.
type Agent struct {
	ID            string
	SystemMessage string
	Backend       Backend
	// VotingSensitivity overrides Orchestrator.VotingSensitivity for this agent's votes
	// ("" inherits it; MassGen v0.1.47 per-agent voting sensitivity).
	VotingSensitivity string
	// Subtask is the agent's part of the task in decomposition mode ("": the task decomposer
	// assigns one).
	Subtask string
	// Memory is the agent's own memory: block over the top-level one (nil: Config.Memory).
	Memory *Memory
}

// MemoryOf is agent a's memory settings.
func (c *Config) MemoryOf(a Agent) Memory {
	if a.Memory != nil {
		return *a.Memory
	}
	return c.Memory
}

// Backend says which model serves an agent.
type Backend struct {
	Type    string
	Model   string
	APIKey  string // secret: never log, print or put into an event
	BaseURL string
	// APIVersion is the azure_openai api_version ("" when the config sets none: the
	// environment's or the type's default is filled in when the run starts).
	APIVersion string
	// Params holds every backend key this package does not interpret, passed through to the
	// provider request body as MassGen does (temperature, reasoning, extra_body, ...).
	Params map[string]any
	// Script is set for type "scripted" only.
	Script *Script
	// Tools are the agent's MCP servers, workspace and command line.
	Tools Tools
	// Hosted are the tools the provider itself runs, switched on by MassGen's enable_* keys.
	Hosted HostedTools
	// Permissions is the agent's own permissions: block (nil without one).
	Permissions *Permissions
	// CLI holds the settings of the coding-agent CLI types (claude_code, codex, gemini_cli, copilot).
	CLI CLISettings
	// Uploads are the files sent with the task (upload_files, uploads.go); UploadMaxMB caps
	// each (media_max_file_size_mb; 0 means DefaultUploadMB).
	Uploads     []Upload
	UploadMaxMB int
}

// CLISettings are MassGen's backend keys of the coding-agent CLI types. The CLI's native
// allowed tools are Tools.AllowedTools (allowed_tools).
type CLISettings struct {
	// SystemPrompt replaces the CLI's own system prompt (claude_code). The backend's
	// append_system_prompt is not here: it joins the agent's SystemMessage.
	SystemPrompt      string
	DisallowedTools   []string
	PermissionMode    string
	MaxThinkingTokens int
	ReasoningEffort   string
	PermissionPolicy  string // copilot: approve or deny
}

// HostedTools are tools a provider runs on its own side; their calls and results come back
// in the response stream. Only the types whose BackendType lists them accept them.
type HostedTools struct {
	WebSearch bool // enable_web_search
	// CodeExecution is enable_code_execution, or enable_code_interpreter (OpenAI's name for
	// the same thing).
	CodeExecution bool
}

// Script describes a deterministic offline agent (backend type "scripted").
type Script struct {
	// Answers are submitted in order: the first on the first turn, each next one as an
	// improvement once ImproveAfter agents (itself included) have answers.
	Answers      []string
	ImproveAfter int
	// Vote picks among the labels the agent is shown: "longest" (default), "first", "last",
	// "self", or a fixed label such as "agent2" (falls back to longest when not shown).
	Vote string
	// Reason is the vote reason; a default is derived when empty.
	Reason string
	// ChecklistCorrect is what the agent checks answers against when it scores a checklist
	// (checklist_gated): answers containing it pass the primary criterion (correctness).
	ChecklistCorrect string
	// Final is the presentation text; the latest answer when empty. "{{parts}}" in it stands
	// for every answer block shown, in label order.
	Final string
	// StopStatus and StopSummary are the agent's stop in decomposition mode, made once it has
	// no next answer ("" : complete, and a derived summary).
	StopStatus, StopSummary string
	// Thinking is streamed as reasoning before each coordination call's action, if set.
	Thinking string
	// Planning is the reply to planning mode's check (default "IRREVERSIBLE: NO").
	Planning string
	// BroadcastReply answers the ask_others questions of other agents (default: the agent's
	// latest accepted answer, or its first).
	BroadcastReply string
	// CriteriaReply and EvaluationReply are its answers when it plays a member of the
	// criteria critic's team (criteria_mode: bootstrap_subagent) or of the round evaluator's;
	// "" gives a default of the expected shape.
	CriteriaReply, EvaluationReply string
	// Latency is the wait before the first chunk of each call; ChunkDelay the wait between
	// streamed words.
	Latency    time.Duration
	ChunkDelay time.Duration
	// Faults make the agent misbehave on chosen calls.
	Faults []Fault
	// ToolCalls are made in order, one per model call, before the first answer; a string
	// argument "{{result}}" stands for the previous tool result's text.
	ToolCalls []ScriptedToolCall
	// PostEvaluation are the agent's decisions when it checks a final answer it presented
	// (orchestration restarts), one per post-evaluation call in order, the last one repeated:
	// PostSubmit (also the default), PostRestart with RestartReason and RestartInstructions,
	// PostIgnore (text, no call) or PostBadRestart (restart_orchestration without instructions).
	PostEvaluation                     []string
	RestartReason, RestartInstructions string
	// Verdicts are its replies when it verifies an answer (orchestrator.verifiers), one per
	// check in order, the last one repeated: VerdictPass (also the default), VerdictFail, or
	// VerdictGarbage (a reply that is not the verdict JSON).
	Verdicts []string
}

// Scripted verifier replies (Script.Verdicts).
const (
	VerdictPass    = "pass"
	VerdictFail    = "fail"
	VerdictGarbage = "garbage"
)

// VerdictReplies are the values Script.Verdicts takes.
var VerdictReplies = []string{VerdictPass, VerdictFail, VerdictGarbage}

// Scripted post-evaluation decisions (Script.PostEvaluation).
const (
	PostSubmit     = "submit"
	PostRestart    = "restart"
	PostIgnore     = "ignore"
	PostBadRestart = "bad_restart"
)

// PostEvaluationDecisions are the values Script.PostEvaluation takes.
var PostEvaluationDecisions = []string{PostSubmit, PostRestart, PostIgnore, PostBadRestart}

// ScriptedToolCall is one tool call a scripted agent makes.
type ScriptedToolCall struct {
	Name string
	Args map[string]any
}

// FaultKind is a way a scripted agent misbehaves.
type FaultKind string

const (
	FaultNoTool        FaultKind = "no_tool"         // answers in plain text, no tool call
	FaultBadVote       FaultKind = "bad_vote"        // votes for a label that does not exist
	FaultDoubleVote    FaultKind = "double_vote"     // two vote calls in one response
	FaultVoteAndAnswer FaultKind = "vote_and_answer" // both workflow tools in one response
	FaultBadArgs       FaultKind = "bad_args"        // tool arguments that are not JSON
	FaultDuplicate     FaultKind = "duplicate"       // resubmits an answer already given
	FaultFail          FaultKind = "fail"            // the call fails with an error
	FaultFatal         FaultKind = "fatal"           // the call fails as with a rejected API key
	FaultHang          FaultKind = "hang"            // the call never returns until cancelled
	// FaultTruncated cuts the response off at the token limit: half its text, its calls'
	// arguments cut in half, stop reason "length" (presentation included).
	FaultTruncated FaultKind = "truncated"
)

// FaultKinds lists every kind, for validation messages.
var FaultKinds = []FaultKind{FaultNoTool, FaultBadVote, FaultDoubleVote, FaultVoteAndAnswer,
	FaultBadArgs, FaultDuplicate, FaultFail, FaultFatal, FaultHang, FaultTruncated}

// Fault applies Kind on the agent's Call-th model call (1-based, counting every call the agent
// makes in the session, presentation included), or on every call when Call is 0.
type Fault struct {
	Kind FaultKind
	Call int
}

// Orchestrator holds the coordination settings.
type Orchestrator struct {
	VotingSensitivity     string // lenient (default) | balanced | strict
	AnswerNovelty         string // lenient (default) | balanced | strict
	MaxNewAnswersPerAgent int    // 0 means unlimited
	// FailureBudget is how many consecutive failed turns make an agent dead (default 3).
	FailureBudget int
	// MaxCostUSD stops coordination once spent (0: no limit).
	MaxCostUSD float64
	// MaxTokensPerAgent stops an agent, alone, once its coordination calls have used this
	// many input plus output tokens (0: no limit).
	MaxTokensPerAgent      int
	SkipCoordinationRounds bool
	// MaxOrchestrationRestarts (coordination.max_orchestration_restarts, or the orchestrator-level
	// spelling): after the final answer the presenter evaluates it and may restart the whole
	// coordination with a reason and instructions, at most this many times (0: no evaluation).
	MaxOrchestrationRestarts int
	// DebugFinalAnswer (debug_final_answer) replaces the answer the first post-evaluation reads,
	// to test restarts; "" means the real one.
	DebugFinalAnswer string
	// DeferPeerUpdatesUntilRestart (defer_peer_updates_until_restart): peers' new answers are
	// not delivered to a busy agent mid-turn; it sees them when its next turn starts. Unlike
	// DisableInjection, the fairness pause and the other mid-turn messages stay.
	DeferPeerUpdatesUntilRestart bool
	// PlanningMode (coordination.enable_planning_mode): before coordination one agent judges
	// whether the task needs irreversible MCP actions; if so those MCP tools are held back until
	// the winner presents, and the agents describe what they would do instead.
	PlanningMode bool
	// PlanningInstruction replaces the built-in planning-mode instruction when set.
	PlanningInstruction string
	// UseSkills (coordination.use_skills) gives every agent the skills of SkillsDirectory
	// (skills_directory; "" means .agent/skills).
	UseSkills       bool
	SkillsDirectory string
	// MemoryFiles (coordination.enable_memory_filesystem_mode): agents with a workspace keep
	// memories as files there (internal/memfiles), which every agent reads.
	MemoryFiles bool
	// ContextPaths are shared with every agent (orchestrator.context_paths).
	ContextPaths []ContextPath
	// WriteMode (coordination.write_mode): "" or legacy, the final presenter writes the
	// writable context paths; auto, worktree or isolated, every agent changes its own copy
	// and the presenter's changes are applied at the end, drifted files as DriftPolicy
	// (skip, prefer_presenter, fail; "" is skip) says.
	WriteMode   string
	DriftPolicy string
	// Changedoc (coordination.enable_changedoc, on by default from a config; the zero value is
	// off) has agents with a workspace keep a decision journal, tasks/changedoc.md, that
	// travels with their answers.
	Changedoc bool
	// Media are the media tool settings every agent inherits unless it sets its own.
	Media Media
	// MaxResponseChars caps what one model response may stream: its text and tool-call
	// arguments together, and its reasoning separately. Past it the call is cut off and the
	// turn retried. 0 means DefaultMaxResponseChars.
	MaxResponseChars int
	// MaxToolCallsPerResponse caps the tool calls of one response; later ones are not run.
	// 0 means DefaultMaxToolCallsPerResponse.
	MaxToolCallsPerResponse int
	// MaxAnswerChars caps a new_answer's content; a longer one is rejected. 0 means
	// DefaultMaxAnswerChars.
	MaxAnswerChars int

	// MassGen v0.1.9x coordination settings (latest.md section 3).

	// FinalAnswerStrategy is how the final answer is made: StrategyWinnerPresent (the
	// presenter writes it seeing all answers and votes), StrategyWinnerReuse (the winner's
	// answer as is, no model call) or StrategySynthesize (the presenter merges the best of all
	// answers). final_presentation (regenerate|verbatim) and skip_final_presentation are the
	// older spellings of the first two; "" means StrategyWinnerPresent.
	FinalAnswerStrategy string
	// PresenterAgent is the id of the agent that writes the final answer ("": the winner).
	PresenterAgent string
	// MaxNewAnswersGlobal caps accepted answers over all agents together (0: unlimited).
	MaxNewAnswersGlobal int
	// DeferVotingUntilAllAnswered: no vote is accepted until every live agent has an answer.
	DeferVotingUntilAllAnswered bool
	// DisableInjection: new answers are not delivered to a busy agent mid-turn; it sees them
	// on its next turn only.
	DisableInjection bool
	// SkipVoting: no vote round; the winner is chosen without votes (single agent, --quick).
	SkipVoting bool
	// Fairness keeps fast agents from lapping slow ones.
	Fairness Fairness
	// VotingThreshold is voting_threshold on MassGen's 0-10 strictness scale, for the
	// checklist voting sensitivities; nil means MassGen's default, DefaultVotingThreshold.
	VotingThreshold *int
	// Checklist tunes checklist voting (voting_sensitivity checklist, checklist_scored,
	// checklist_gated).
	Checklist Checklist
	// EndWhenDecided ends coordination as soon as the votes cast settle the winner: no way the
	// agents still to vote could vote changes it (coord.Machine.Decided). It saves their rounds
	// at the price of the improvements they might still have written. On by default: voting
	// beats further discussion (Kaesberg et al. 2025), so those improvements rarely pay.
	EndWhenDecided bool
	// LazyStartAgents, when above 0, starts only that many agents; the others join one at a
	// time while the agents in play disagree (coord.LazySettings). LazyStartAgreement is how
	// many agents must back one answer before the rest are given up.
	LazyStartAgents, LazyStartAgreement int
	// VoteWeighting is WeightPlain (also ""), WeightWeighted or WeightConfidence: what a vote
	// is worth (coord/weights.go). AgentWeights are the agents' weights by id, those of
	// VoteWeightsFile (resolved against the config's folder) filled in at load; see VoteWeights.
	VoteWeighting   string
	AgentWeights    map[string]float64
	VoteWeightsFile string
	// PersonaGenerator writes diverse personas into the agents' system messages before the run.
	PersonaGenerator PersonaGenerator
	// TaskPlanning gives the agents task plans (coordination.enable_agent_task_planning).
	TaskPlanning TaskPlanning
	// CoordinationMode is ModeVoting ("" too) or ModeDecomposition: each agent owns a subtask
	// and signals it done with stop; the presenter integrates the parts.
	CoordinationMode string
	// TaskDecomposer assigns subtasks to agents without one (decomposition mode).
	TaskDecomposer TaskDecomposer
	// Broadcast lets agents ask questions with ask_others (coordination.broadcast).
	Broadcast Broadcast
	// DSPy is orchestrator.dspy: each agent reads a checked paraphrase of the question.
	DSPy DSPy

	// This port's request layout and peer view (keys_protocol.go); "" and 0 mean the defaults.

	// TurnContext is TurnShared or TurnContinue.
	TurnContext string
	// PresentationContext is PresentContinue or PresentFresh.
	PresentationContext string
	// PeerView is PeerViewAuto, PeerViewAll or PeerViewBounded; PeerViewSize bounds it.
	PeerView     string
	PeerViewSize int

	// Subagents are the spawn_subagents settings (coordination.enable_subagents and its keys).
	Subagents Subagents
	// RoundEvaluator is the orchestrator-managed round evaluator (a round_evaluator subagent).
	RoundEvaluator RoundEvaluator
	// Verifiers judge the leading answer, one aspect each, before it can win (this port's
	// orchestrator.verifiers; verifiers.go).
	Verifiers []Verifier
}

// Broadcast is coordination.broadcast and the keys that tune it (MassGen's ask_others).
type Broadcast struct {
	// Mode is "" (off), BroadcastAgents (the other agents answer, each through a side call on
	// a copy of its conversation) or BroadcastHuman (the person answers).
	Mode string
	// Sensitivity (low|medium|high) says in the tool's description how often to ask;
	// ResponseDepth (low|medium|high) how thorough the agents' answers are.
	Sensitivity, ResponseDepth string
	// Timeout bounds the wait for the answers (broadcast_timeout; 0 means 300 s).
	Timeout time.Duration
	// WaitByDefault: ask_others waits for the answers; when false it returns a request id and
	// the asker collects them with check_broadcast_status and get_broadcast_responses.
	WaitByDefault bool
	// MaxPerAgent caps the questions one agent asks in a turn (0 means 10).
	MaxPerAgent int
}

// The broadcast modes.
const (
	BroadcastAgents = "agents"
	BroadcastHuman  = "human"
)

// DefaultVotingThreshold is voting_threshold when unset, as in MassGen.
const DefaultVotingThreshold = 5

// Checklist holds the checklist voting settings of orchestrator and orchestrator.coordination.
type Checklist struct {
	// RequireGapReport (checklist_require_gap_report, default true) asks for a gap report with
	// every checklist_gated checklist, unless GapReportMode is none.
	RequireGapReport bool
	GapReportMode    string // changedoc (default) | separate | none
	// MaxCallsPerRound is max_checklist_calls_per_round (default 1).
	MaxCallsPerRound int
	// FirstAnswer (checklist_first_answer) allows a checklist before the agent's first answer.
	FirstAnswer bool
	// CriteriaPreset (coordination.checklist_criteria_preset) names a preset of package
	// criteria; CriteriaInline (coordination.checklist_criteria_inline) lists criteria and
	// wins over the preset, as in MassGen.
	CriteriaPreset string
	CriteriaInline []ChecklistCriterion
	// CriteriaMode (coordination.criteria_mode) is static (or ""), or a way criteria emerge
	// during the run: CriteriaBootstrapInline, CriteriaBootstrapSubagent.
	CriteriaMode string
	// BootstrapMaxPerAgentPerRound and BootstrapMaxTotal cap emerged criteria: proposals of
	// one agent in one round (nil: 3), and the criteria kept (nil: 30; 0: no cap of its own).
	BootstrapMaxPerAgentPerRound, BootstrapMaxTotal *int
}

// The criteria modes (coordination.criteria_mode) in which criteria emerge during the run.
const (
	CriteriaBootstrapInline   = "bootstrap_inline"
	CriteriaBootstrapSubagent = "bootstrap_subagent"
)

// Bootstrapping reports whether criteria emerge during the run.
func (c Checklist) Bootstrapping() bool {
	return c.CriteriaMode == CriteriaBootstrapInline || c.CriteriaMode == CriteriaBootstrapSubagent
}

// RoundEvaluator is MassGen's orchestrator-managed round evaluator
// (coordination.round_evaluator_before_checklist with orchestrator_managed_round_evaluator):
// before each round of the agent after its first answer, a round_evaluator subagent reviews
// the current answers and its report opens that round.
type RoundEvaluator struct {
	Enabled bool // both keys true
	// BeforeChecklist and Managed are the two keys as written.
	BeforeChecklist, Managed bool
	// Refine (round_evaluator_refine) lets the evaluator's team iterate and vote.
	Refine bool
	// Pressure (round_evaluator_transformation_pressure): gentle, balanced (""), aggressive.
	Pressure string
}

// ChecklistCriterion is one criterion of checklist_criteria_inline.
type ChecklistCriterion struct {
	Text     string
	Category string // primary | standard | stretch (must, should, could, core too)
}

// Final answer strategies (orchestrator.final_answer_strategy).
const (
	StrategyWinnerPresent = "winner_present"
	StrategyWinnerReuse   = "winner_reuse"
	StrategySynthesize    = "synthesize"
)

// PresentationMode is the final_presentation word (regenerate|verbatim) the logs and events
// use for a strategy; synthesize keeps its own name.
func PresentationMode(strategy string) string {
	switch strategy {
	case StrategyWinnerReuse:
		return "verbatim"
	case StrategySynthesize:
		return StrategySynthesize
	}
	return "regenerate"
}

// Fairness holds MassGen's fairness caps (v0.1.49).
type Fairness struct {
	// Enabled is fairness_enabled (default true).
	Enabled bool
	// LeadCapAnswers is how many answers an agent may be ahead of the slowest live peer
	// (fairness_lead_cap_answers, default 2).
	LeadCapAnswers int
	// MaxMidstreamInjectionsPerRound caps the peer updates delivered to one agent within one
	// turn (max_midstream_injections_per_round, default 2).
	MaxMidstreamInjectionsPerRound int
}

// Coordination modes (orchestrator.coordination_mode).
const (
	ModeVoting        = "voting"
	ModeDecomposition = "decomposition"
)

// Decomposing reports whether the session runs decomposition mode.
func (o Orchestrator) Decomposing() bool { return o.CoordinationMode == ModeDecomposition }

// TaskDecomposer is orchestrator.coordination.task_decomposer.
type TaskDecomposer struct {
	// Disabled turns automatic assignment off (enabled: false): agents without a subtask
	// then split the work among themselves from the task alone.
	Disabled bool
	// Guidelines are added to the decomposer's request (decomposition_guidelines).
	Guidelines string
	// Timeout bounds the decomposer's call (timeout_seconds; 0 means 300 s).
	Timeout time.Duration
}

// PersonaGenerator is orchestrator.coordination.persona_generator.
type PersonaGenerator struct {
	Enabled bool
	// DiversityMode is perspective (default), implementation or methodology.
	DiversityMode string
	// PersistAcrossTurns (persist_across_turns): a later turn of the session keeps the
	// personas an earlier turn wrote instead of writing new ones.
	PersistAcrossTurns bool
}

// TaskPlanning is MassGen's agent task planning (coordination.enable_agent_task_planning and
// the keys that tune it) and the plan shape a planning run (--plan) asks for.
type TaskPlanning struct {
	// Enabled gives every agent the planning tools and a task plan of its own.
	Enabled bool
	// MaxTasks bounds a plan (max_tasks_per_plan; 0 means taskplan.DefaultMaxTasks).
	MaxTasks int
	// FilesystemMode (task_planning_filesystem_mode) also writes an agent's plan to
	// tasks/plan.json in its workspace, where it and, through its snapshots, its peers read it.
	FilesystemMode bool
	// Depth (plan_depth: dynamic, shallow, medium, deep) and TargetSteps (plan_target_steps)
	// size the plan a planning run asks for.
	Depth       string
	TargetSteps int
}

// Defaults of the output caps: generous for real answers (100,000 characters is some 25,000
// tokens), small enough that a runaway or hostile model cannot fill memory or the logs.
const (
	DefaultMaxResponseChars        = 200_000
	DefaultMaxToolCallsPerResponse = 32
	DefaultMaxAnswerChars          = 100_000
)

// UI holds display settings.
type UI struct {
	DisplayType    string // rich_terminal (default) | simple | silent | terminal
	LoggingEnabled bool   // default true
}

// Timeouts holds timeout_settings.
type Timeouts struct {
	// Orchestrator bounds coordination only (default 1800 s).
	Orchestrator time.Duration
	// Agent bounds one model call (agent_timeout_seconds, default 300 s).
	Agent time.Duration
	// Presentation bounds the final presentation, which the session timeout never cuts
	// (presentation_timeout_seconds, default 600 s).
	Presentation time.Duration
	// InitialRound and SubsequentRound bound an agent's first coordination round and each later
	// one (initial_round_timeout_seconds, subsequent_round_timeout_seconds; 0: no bound);
	// RoundGrace is the extra time a cut-off round gets to submit (round_timeout_grace_seconds).
	InitialRound, SubsequentRound, RoundGrace time.Duration
}

// Severity says whether an Issue stops a run.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Issue is one problem found in a config file.
type Issue struct {
	Severity   Severity `json:"-"`
	File       string   `json:"file,omitempty"`
	Line       int      `json:"line,omitempty"`
	Column     int      `json:"column,omitempty"`
	Location   string   `json:"location"` // key path such as agents[0].backend.type
	Message    string   `json:"message"`
	Suggestion string   `json:"suggestion,omitempty"`
}
