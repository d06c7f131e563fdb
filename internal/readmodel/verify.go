package readmodel

import (
	"fmt"

	"massgen/internal/event"
)

// verify folds the verifiers' verdicts (orchestrator.verifiers) of the current attempt.
func (s *State) verify(p event.Payload) {
	switch p := p.(type) {
	case event.AnswerVerified:
		s.Verdicts = append(s.Verdicts, p)
	case event.OrchestrationRestarted:
		s.Verdicts = nil
	}
}

// Verification outcomes (Decision.Verified).
const (
	// VerifiedPassed: the winner's answer passed every verifier.
	VerifiedPassed = "passed"
	// VerifiedNonePassed: no answer checked passed every verifier (or the checks stopped), so
	// the plain tally's winner stands.
	VerifiedNonePassed = "none_passed"
)

// verification fills d's verdicts and says how they decided: "" without verifiers.
func (s *State) verification(d *Decision) {
	if len(s.Verdicts) == 0 {
		return
	}
	winnerChecked := false
	for _, v := range s.Verdicts {
		d.Verifiers = append(d.Verifiers, Verdict{Verifier: v.Verifier, Aspect: v.Aspect, Agent: v.Agent, SubagentID: v.SubagentID,
			Candidate: v.Candidate, AnswerLabel: v.AnswerLabel, Verdict: v.Verdict, Reason: v.Reason})
		winnerChecked = winnerChecked || v.AnswerLabel == d.AnswerLabel
	}
	d.Verified = VerifiedNonePassed
	if winnerChecked && !failedAnswers(d)[d.AnswerLabel] {
		d.Verified = VerifiedPassed
	}
}

// failedAnswers are the labels of the answers a verifier did not pass.
func failedAnswers(d *Decision) map[string]bool {
	failed := map[string]bool{}
	for _, v := range d.Verifiers {
		if v.Verdict != event.VerdictPass {
			failed[v.AnswerLabel] = true
		}
	}
	return failed
}

// verifiedRule is what the verifiers add to the rule.
func verifiedRule(d *Decision) string {
	switch d.Verified {
	case VerifiedPassed:
		switch n := len(failedAnswers(d)); n {
		case 0:
			return "; the answer passed every verifier"
		case 1:
			return "; the answer ahead of it failed a verifier, and it passed every one"
		default:
			return fmt.Sprintf("; the %d answers ahead of it failed a verifier, and it passed every one", n)
		}
	case VerifiedNonePassed:
		return "; no answer passed every verifier, so the plain tally's winner stands"
	}
	return ""
}
