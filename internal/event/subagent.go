package event

// SubagentStarted: an agent's spawn_subagents call started a nested session on a subtask.
// LogDir is the child's own turn folder (under the parent's subagents/), "" without logs.
type SubagentStarted struct {
	Agent          string  `json:"agent"`
	ID             string  `json:"id"`
	Kind           string  `json:"kind,omitempty"` // the subagent type (explorer, ...), "" for a generic one
	Task           string  `json:"task"`
	Background     bool    `json:"background,omitempty"`
	LogDir         string  `json:"log_dir,omitempty"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
}

// SubagentFinished: a subagent's session ended, with one of the Subagent* statuses. Its
// cost is already part of its own log; it reaches the parent agent's cost with the tool's
// result (or, for a background subagent, when the agent is told).
type SubagentFinished struct {
	Agent           string  `json:"agent"`
	ID              string  `json:"id"`
	Status          string  `json:"status"`
	Answer          string  `json:"answer,omitempty"` // clipped, as tool results in events are
	Error           string  `json:"error,omitempty"`
	LogDir          string  `json:"log_dir,omitempty"`
	CostUSD         float64 `json:"cost_usd"`
	CostUnknown     bool    `json:"cost_unknown,omitempty"`
	DurationSeconds float64 `json:"duration_seconds"`
	Background      bool    `json:"background,omitempty"`
}

// The statuses of SubagentFinished; MassGen's names where it has them.
const (
	SubagentCompleted        = "completed"             // the subagent's team gave a final answer
	SubagentCompletedTimeout = "completed_but_timeout" // its time ran out; the best answer so far stands
	SubagentTimeout          = "timeout"               // its time ran out before any answer
	SubagentError            = "error"                 // it could not start, or failed without an answer
	SubagentCancelled        = "cancelled"             // its parent ended first
	SubagentBudget           = "budget"                // max_cost_usd was spent
	SubagentLost             = "lost"                  // its parent process died while it ran (massgen resume)
)

func (SubagentStarted) Type() string  { return "subagent_started" }
func (SubagentFinished) Type() string { return "subagent_finished" }
