package view

import (
	"fmt"
	"strconv"

	"massgen/internal/readmodel"
)

// WhyLines explain why the winner won, from the decision record (readmodel.Decision): the
// rule, each answer's votes with their weights, confidences and reasons, the strongest dissent
// and the verifiers. Plain output prints them after the final answer; nil when there is
// nothing to explain (no vote, no record).
func WhyLines(d *readmodel.Decision) []string {
	if d == nil || d.NoVote && len(d.Verifiers) == 0 || d.WinnerLabel == "" || len(d.Tally) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("why %s won: %s", d.WinnerLabel, d.Rule)}
	weighed := d.Weighting != "plain"
	for _, c := range d.Tally {
		if c.Votes == 0 {
			continue // the coordination's end listed it already
		}
		head := fmt.Sprintf("  %s: %s", c.AnswerLabel, plural(c.Votes, "vote"))
		if weighed {
			head += ", score " + num(c.Score)
		}
		if c.Confidence != nil {
			head += ", its author's confidence " + num(*c.Confidence)
		}
		out = append(out, head)
		for _, b := range c.Ballots {
			out = append(out, "    "+ballot(b, weighed))
		}
	}
	if b := d.Dissent; b != nil {
		out = append(out, "  strongest dissent: "+ballot(*b, weighed))
	}
	for _, l := range VerifierLines(d) {
		out = append(out, "  "+l)
	}
	return out
}

// ballot is one vote: who, for what, what it weighs, and its reason.
func ballot(b readmodel.Ballot, weighed bool) string {
	s := b.VoterLabel + " for " + b.For
	if w := VoteWorth(b, weighed); w != "" {
		s += " " + w
	}
	if r := oneLine(b.Reason, 160); r != "" {
		s += ": " + strconv.Quote(r)
	}
	return s
}

// num prints a weight or score without trailing zeros: 1, 0.5, 2.35.
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
