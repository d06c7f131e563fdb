package event

// The permission engine's events (permissions:, MassGen v0.1.97). Every checked tool call
// gets a PermissionDecided; a call that needs a person's approval first gets a
// PermissionAsked with the same ID, which a view answers through the session (the live
// view's keys, the dashboard's POST /api/sessions/{log}/{turn}/permissions/{ask_id}).

// PermissionAsked: a call waits for a person's allow or deny.
type PermissionAsked struct {
	Agent  string `json:"agent"`
	ID     string `json:"id"`
	Tool   string `json:"tool"`
	Action string `json:"action"` // command, read_file, write_file, read_url, mcp
	Target string `json:"target"`
	// Rule is the ask rule that matched, or "" when the call's risk tier asks.
	Rule string `json:"rule,omitempty"`
	Risk string `json:"risk,omitempty"` // low, medium, high
	// TimeoutSeconds is how long the ask waits before automation_default decides it.
	TimeoutSeconds float64 `json:"timeout_seconds"`
}

// Who decided a permission.
const (
	ByRule              = "rule"               // a rule, the role or the risk tier, with nobody asked
	ByPerson            = "person"             // a person answered the ask
	ByAutomationDefault = "automation_default" // nobody could answer
	ByTimeout           = "timeout"            // nobody answered in time: automation_default decided
	ByBudget            = "budget"             // max_consecutive_auto auto-approvals were used up
	ByCancelled         = "cancelled"          // the session ended while the ask waited
)

// PermissionDecided: a checked call may run (allow) or not (deny).
type PermissionDecided struct {
	Agent    string `json:"agent"`
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Decision string `json:"decision"` // allow | deny
	By       string `json:"by"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// What the audit ledger records of the call (approvals/ledger.jsonl, written from these
	// events wherever the call was decided): its action and target, their risk, a preview of
	// its arguments, whether a person was asked; Audit is false when the agent's policy
	// keeps no ledger (permissions.audit: false).
	Action string `json:"action,omitempty"`
	Target string `json:"target,omitempty"`
	Risk   string `json:"risk,omitempty"`
	Args   string `json:"args,omitempty"`
	Asked  bool   `json:"asked,omitempty"`
	Audit  bool   `json:"audit,omitempty"`
}

func (PermissionAsked) Type() string   { return "permission_asked" }
func (PermissionDecided) Type() string { return "permission_decided" }
