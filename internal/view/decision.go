package view

import (
	"fmt"
	"strconv"
	"strings"

	"massgen/internal/readmodel"
)

// The parts of the decision record the live view (internal/tui) shows next to its own tally:
// worded as WhyLines words them, so every view explains a vote the same way.

// VoteWorth is what one vote weighs, "(weight 2, confidence 0.8, worth 1.6)", or "" under
// plain voting without a stated confidence.
func VoteWorth(b readmodel.Ballot, weighed bool) string {
	var what []string
	if weighed {
		what = append(what, "weight "+num(b.Weight))
	}
	if b.Confidence != nil {
		what = append(what, "confidence "+num(*b.Confidence))
	}
	if weighed {
		what = append(what, "worth "+num(b.Worth))
	}
	if len(what) == 0 {
		return ""
	}
	return "(" + strings.Join(what, ", ") + ")"
}

// DissentLine names the strongest vote against the winner, or says there was none.
func DissentLine(d *readmodel.Decision) string {
	if d.Dissent == nil {
		return "no dissent: every counted vote went to the winner"
	}
	return "strongest dissent: " + ballot(*d.Dissent, d.Weighting != "plain")
}

// VerifierLines are the verifiers' verdicts, each answer they checked in turn, and what they
// decided; "verifiers: none ran" without verifiers.
func VerifierLines(d *readmodel.Decision) []string {
	if len(d.Verifiers) == 0 {
		return []string{"verifiers: none ran"}
	}
	out := make([]string, 0, len(d.Verifiers)+1)
	for _, v := range d.Verifiers {
		by := v.Agent
		if v.SubagentID != "" {
			by = "subagent " + v.SubagentID
		}
		line := fmt.Sprintf("verifier %d (%s, by %s) on %s: %s", v.Verifier, v.Aspect, by, v.AnswerLabel, v.Verdict)
		if r := oneLine(v.Reason, 160); r != "" {
			line += ": " + strconv.Quote(r)
		}
		out = append(out, line)
	}
	if d.Verified == readmodel.VerifiedNonePassed {
		out = append(out, "no answer passed every verifier: the plain tally's winner stands")
	}
	return out
}

// Num prints a weight, confidence or score without trailing zeros: 1, 0.5, 2.35.
func Num(x float64) string { return num(x) }
