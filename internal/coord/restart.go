package coord

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Post-evaluation tools (orchestration restarts): after the final answer the presenter ends
// its check with exactly one of them.
const (
	ToolSubmit  = "submit"
	ToolRestart = "restart_orchestration"
)

// MaxRestartText caps the reason and the instructions of a restart, each: they go into every
// agent's prompt in the next attempt, and a model writes them.
const MaxRestartText = 4000

// IsPostEvaluation reports whether name is one of the post-evaluation tools.
func IsPostEvaluation(name string) bool { return name == ToolSubmit || name == ToolRestart }

// Attempts is how many attempts a turn may run: the first and its restarts (MassGen's
// max_attempts = 1 + max_orchestration_restarts).
func Attempts(maxRestarts int) int { return 1 + max(maxRestarts, 0) }

// Verdict is what a post-evaluation response decided.
type Verdict int

const (
	// Undecided: the response called neither tool.
	Undecided Verdict = iota
	// Submitted: the answer is accepted.
	Submitted
	// Restart: the turn starts over, with Reason and Instructions.
	Restart
	// Refused: the calls were wrong (both tools, or a restart without its reason or
	// instructions); Feedback says how to fix them.
	Refused
)

// Evaluation is the outcome of one post-evaluation response.
type Evaluation struct {
	Verdict              Verdict
	Reason, Instructions string // Restart, each at most MaxRestartText characters
	Accepted             string // the ID of the call that decided (Submitted, Restart)
	Feedback             []Feedback
}

// Evaluate resolves the post-evaluation calls of one response (calls to other tools are the
// caller's). submit takes any arguments, as in MassGen; restart_orchestration needs a
// non-empty reason and instructions, which are clipped to MaxRestartText.
func Evaluate(calls []Call) Evaluation {
	var ours []Call
	for _, c := range calls {
		if IsPostEvaluation(c.Name) {
			ours = append(ours, c)
		}
	}
	switch len(ours) {
	case 0:
		return Evaluation{}
	case 1:
	default:
		return Evaluation{Verdict: Refused, Feedback: rejectAll(ours,
			"call exactly one of submit or restart_orchestration, once: submit accepts the answer, restart_orchestration starts over")}
	}
	c := ours[0]
	if c.Name == ToolSubmit {
		return Evaluation{Verdict: Submitted, Accepted: c.ID}
	}
	var args struct {
		Reason       string `json:"reason"`
		Instructions string `json:"instructions"`
	}
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return refuse(c, fmt.Sprintf("the arguments are not a JSON object (%v): pass {\"reason\": ..., \"instructions\": ...}", clipErr(err)))
	}
	var missing []string
	if strings.TrimSpace(args.Reason) == "" {
		missing = append(missing, "reason")
	}
	if strings.TrimSpace(args.Instructions) == "" {
		missing = append(missing, "instructions")
	}
	if len(missing) > 0 {
		return refuse(c, fmt.Sprintf("restart_orchestration needs a non-empty %s: say why the answer falls short and what the agents must do differently, or call submit", strings.Join(missing, " and ")))
	}
	return Evaluation{Verdict: Restart, Accepted: c.ID, Reason: clipRunes(strings.TrimSpace(args.Reason), MaxRestartText),
		Instructions: clipRunes(strings.TrimSpace(args.Instructions), MaxRestartText)}
}

func refuse(c Call, msg string) Evaluation {
	return Evaluation{Verdict: Refused, Feedback: []Feedback{{CallID: c.ID, Tool: c.Name, Error: msg}}}
}

// clipRunes cuts s to at most n characters, marking the cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// clipErr keeps a JSON error short: it may quote the model's text.
func clipErr(err error) string { return clipRunes(err.Error(), 200) }
