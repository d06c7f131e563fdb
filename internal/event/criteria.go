package event

// CriteriaEmerged: criteria joined the checklist during the run (criteria_mode:
// bootstrap_inline, proposed by Agent with its checklist; bootstrap_subagent, written by a
// critic subagent between rounds after reading answer-set Version). Criteria is the whole
// emerged list now, as bootstrap_criteria_accumulator.json holds it; agents score the new
// ones from their next round. A critic whose reply could not be used adds nothing, and
// Warning says why: the checklist keeps the criteria it had.
type CriteriaEmerged struct {
	Agent      string      `json:"agent,omitempty"`
	Source     string      `json:"source"`
	Version    int         `json:"version,omitempty"`
	SubagentID string      `json:"subagent_id,omitempty"`
	Added      []Criterion `json:"added,omitempty"`
	Evicted    []string    `json:"evicted,omitempty"`
	Criteria   []Criterion `json:"criteria"`
	Warning    string      `json:"warning,omitempty"`
}

// Criterion is one checklist criterion (E<n>).
type Criterion struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	Category string `json:"category"`
}

// Where emerged criteria came from.
const (
	CriteriaInline   = "inline"   // an agent's proposed_criteria with its checklist
	CriteriaSubagent = "subagent" // the critic subagent between rounds
)

// RoundEvaluated: the orchestrator-managed round evaluator (a round_evaluator subagent)
// reviewed the answers of answer-set Version before Agent's next round; Report is its
// critique, which Agent reads at the start of that round. A run that gave no report leaves
// Report empty and Warning saying why; the agent goes on with its own checklist.
type RoundEvaluated struct {
	Agent      string `json:"agent"`
	Version    int    `json:"version"`
	SubagentID string `json:"subagent_id,omitempty"`
	Report     string `json:"report,omitempty"`
	Warning    string `json:"warning,omitempty"`
}

func (CriteriaEmerged) Type() string { return "criteria_emerged" }
func (RoundEvaluated) Type() string  { return "round_evaluated" }
