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
	// Warnings are problems that do not stop a run (unknown top-level keys, ...).
	Warnings []Issue
}

// Agent is one configured participant. Its anonymous label is agent<i> by position.
type Agent struct {
	ID            string
	SystemMessage string
	Backend       Backend
}

// Backend says which model serves an agent.
type Backend struct {
	Type    string
	Model   string
	APIKey  string // secret: never log, print or put into an event
	BaseURL string
	// Params holds every backend key this package does not interpret, passed through to the
	// provider request body as MassGen does (temperature, reasoning, extra_body, ...).
	Params map[string]any
	// Script is set for type "scripted" only.
	Script *Script
	// Tools are the agent's MCP servers, workspace and command line.
	Tools Tools
	// Hosted are the tools the provider itself runs, switched on by MassGen's enable_* keys.
	Hosted HostedTools
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
	// Final is the presentation text; the latest answer when empty.
	Final string
	// Thinking is streamed as reasoning before each coordination call's action, if set.
	Thinking string
	// Planning is the reply to planning mode's check (default "IRREVERSIBLE: NO").
	Planning string
	// Latency is the wait before the first chunk of each call; ChunkDelay the wait between
	// streamed words.
	Latency    time.Duration
	ChunkDelay time.Duration
	// Faults make the agent misbehave on chosen calls.
	Faults []Fault
	// ToolCalls are made in order, one per model call, before the first answer; a string
	// argument "{{result}}" stands for the previous tool result's text.
	ToolCalls []ScriptedToolCall
}

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
	// FinalPresentation is "regenerate" (default: the winner writes the final answer seeing
	// all answers and votes) or "verbatim" (the winner's answer as is).
	FinalPresentation string
	// FailureBudget is how many consecutive failed turns make an agent dead (default 3).
	FailureBudget int
	// MaxCostUSD stops coordination once spent (0: no limit).
	MaxCostUSD             float64
	SkipCoordinationRounds bool
	// PlanningMode (coordination.enable_planning_mode): before coordination one agent judges
	// whether the task needs irreversible MCP actions; if so those MCP tools are held back until
	// the winner presents, and the agents describe what they would do instead.
	PlanningMode bool
	// PlanningInstruction replaces the built-in planning-mode instruction when set.
	PlanningInstruction string
	// ContextPaths are shared with every agent (orchestrator.context_paths).
	ContextPaths []ContextPath
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
