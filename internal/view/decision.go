package view

import (
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

// VerifierLines are the verifiers' verdicts on the winning answer, or "verifiers: none ran".
func VerifierLines(d *readmodel.Decision) []string {
	if len(d.Verifiers) == 0 {
		return []string{"verifiers: none ran"}
	}
	out := make([]string, 0, len(d.Verifiers))
	for _, v := range d.Verifiers {
		out = append(out, "verifier "+v.Verifier+": "+v.Verdict+" "+oneLine(v.Note, 160))
	}
	return out
}

// Num prints a weight, confidence or score without trailing zeros: 1, 0.5, 2.35.
func Num(x float64) string { return num(x) }
