package event

// AnswerVerified: a verifier of orchestrator.verifiers judged one aspect of a candidate
// answer before coordination ended with a winner. The candidates are the answers in tally
// order (the one the vote picks first); a verdict other than pass stops that candidate, and
// the next is checked. Agent is who paid for the check (the verifier's agent, or the first
// agent for a subagent).
type AnswerVerified struct {
	Agent string `json:"agent"`
	// Verifier is the 1-based place of the verifier in orchestrator.verifiers (after sorting
	// by aspect); Aspect is what it judges.
	Verifier int    `json:"verifier"`
	Aspect   string `json:"aspect"`
	// SubagentID is set when a verifier subagent made the check.
	SubagentID string `json:"subagent_id,omitempty"`
	// Candidate is the real id of the answer's author, AnswerLabel the answer checked.
	Candidate   string `json:"candidate"`
	AnswerLabel string `json:"answer_label"`
	// Verdict is VerdictPass, VerdictFail, or VerdictUnverified (the check failed or its
	// reply could not be read: it blocks the answer as a fail does, with Reason saying why).
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// Verdicts of AnswerVerified.
const (
	VerdictPass       = "pass"
	VerdictFail       = "fail"
	VerdictUnverified = "unverified"
)

func (AnswerVerified) Type() string { return "answer_verified" }
