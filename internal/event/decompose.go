package event

// Decomposition mode's events (coordination_mode: decomposition).

// Where a subtask came from (Subtask.Source).
const (
	SubtaskConfig     = "config"     // agents[].subtask
	SubtaskDecomposer = "decomposer" // the task decomposer's call
	SubtaskFallback   = "fallback"   // built in: the decomposer failed or gave none for the agent
	SubtaskNone       = "none"       // the decomposer is disabled: the agent picks its part
)

// SubtasksAssigned: before coordination every agent got its part of the task. Agent is whose
// model the task decomposer asked ("" when no call was made); Warning says why some subtasks
// are built-in fallbacks.
type SubtasksAssigned struct {
	Agent    string    `json:"agent,omitempty"`
	Subtasks []Subtask `json:"subtasks"`
	Warning  string    `json:"warning,omitempty"`
}

// Subtask is one agent's assigned part.
type Subtask struct {
	Agent  string `json:"agent"`
	Label  string `json:"label"`
	Text   string `json:"text,omitempty"`
	Source string `json:"source"`
}

// Part statuses (PartStatus.Status), at the end of coordination.
const (
	PartComplete   = "complete"   // stopped with status complete
	PartBlocked    = "blocked"    // stopped with status blocked
	PartCapped     = "capped"     // its answer cap (or the global one) was reached: done without a stop
	PartUnfinished = "unfinished" // coordination ended before it stopped (timeout, budget, interrupt)
	PartFailed     = "failed"     // the agent was left out (failed turns, rejected key)
)

// AgentStopped: an agent signalled its part done with stop. Stale is true when it was made on
// answers that changed meanwhile: it does not count and the agent looks again.
type AgentStopped struct {
	Agent   string `json:"agent"`
	Label   string `json:"label"`
	Summary string `json:"summary"`
	Status  string `json:"status"` // complete | blocked
	Version int    `json:"version"`
	Stale   bool   `json:"stale,omitempty"`
}

// PartsIntegrated: coordination is over and the presenter is given every part. Files are the
// workspace files gathered into the presenter's workspace from the other parts; Conflicts the
// files more than one part wrote differently.
type PartsIntegrated struct {
	Presenter string         `json:"presenter"`
	Parts     []PartStatus   `json:"parts"`
	Files     []string       `json:"files,omitempty"`
	Conflicts []FileConflict `json:"conflicts,omitempty"`
	Error     string         `json:"error,omitempty"` // gathering the workspaces failed
}

// PartStatus is one part at the end of coordination.
type PartStatus struct {
	Agent       string `json:"agent"`
	Label       string `json:"label"`
	Subtask     string `json:"subtask,omitempty"`
	Status      string `json:"status"` // Part*
	AnswerLabel string `json:"answer_label,omitempty"`
	Summary     string `json:"summary,omitempty"`
	Why         string `json:"why,omitempty"` // unfinished or failed: why
}

// FileConflict is a file more than one part wrote with different contents: Kept's version is
// at Path, each other's beside it (Copies, label to path).
type FileConflict struct {
	Path   string            `json:"path"`
	Kept   string            `json:"kept"`
	Copies map[string]string `json:"copies"`
}

// Unfinished lists the parts that are not done, "agentN (why)", for the result.
func (p PartsIntegrated) Unfinished() []string {
	var out []string
	for _, pt := range p.Parts {
		if pt.Status == PartUnfinished || pt.Status == PartFailed {
			out = append(out, pt.Label+" ("+pt.Why+")")
		}
	}
	return out
}
