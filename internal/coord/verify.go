package coord

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Verifiers (orchestrator.verifiers): before an answer can win, verifiers each judge one
// aspect of it. These are the rules the engine applies: which answers are checked, in which
// order, and how a verifier's reply is read.

// MaxVerifiedAnswers bounds the answers checked in one coordination: with V verifiers a
// session makes at most MaxVerifiedAnswers × V checks, whatever the verdicts.
const MaxVerifiedAnswers = 3

// maxVerdictReason caps a verdict's reason as the record keeps it.
const maxVerdictReason = 500

// Candidates returns the agents whose answers may win, in the order verifiers check them:
// the winner P5 picks first, then the others by score, ties to the earlier agent, at most
// MaxVerifiedAnswers.
func (r Result) Candidates() []int {
	if r.Winner < 0 {
		return nil
	}
	rest := make([]Count, 0, len(r.Tally))
	for _, c := range r.Tally {
		if c.Agent != r.Winner {
			rest = append(rest, c)
		}
	}
	slices.SortStableFunc(rest, func(a, b Count) int {
		switch {
		case a.points > b.points:
			return -1
		case a.points < b.points:
			return 1
		}
		return 0
	})
	out := []int{r.Winner}
	for _, c := range rest {
		if len(out) == MaxVerifiedAnswers {
			break
		}
		out = append(out, c.Agent)
	}
	return out
}

// Judgement is a verifier's judgement as read from its reply.
type Judgement struct {
	Pass bool
	// Readable is false when the reply held no verdict: the check could not verify the answer,
	// which blocks it as a fail does (Reason says why).
	Readable bool
	Reason   string
}

// ReadVerdict reads a verifier's reply: a JSON object {"verdict": "pass"|"fail", "reason":
// "..."}, alone or inside other text (a code fence). Anything else is an unreadable verdict.
func ReadVerdict(reply string) Judgement {
	var v struct {
		Verdict any `json:"verdict"`
		Reason  any `json:"reason"`
	}
	i, j := strings.Index(reply, "{"), strings.LastIndex(reply, "}")
	if i < 0 || j < i || json.Unmarshal([]byte(reply[i:j+1]), &v) != nil {
		return Judgement{Reason: "the verifier's reply is not the verdict JSON: " + quoteClip(reply)}
	}
	word, _ := v.Verdict.(string)
	reason, _ := v.Reason.(string)
	reason = clipReason(strings.Join(strings.Fields(reason), " "))
	switch strings.ToLower(strings.TrimSpace(word)) {
	case "pass":
		return Judgement{Pass: true, Readable: true, Reason: reason}
	case "fail":
		if reason == "" {
			reason = "the verifier gave no reason"
		}
		return Judgement{Readable: true, Reason: reason}
	}
	return Judgement{Reason: fmt.Sprintf("the verifier's verdict is %s, not pass or fail", quoteClip(fmt.Sprint(v.Verdict)))}
}

func quoteClip(s string) string {
	return fmt.Sprintf("%q", clipReason(strings.Join(strings.Fields(s), " ")))
}

func clipReason(s string) string {
	if utf8.RuneCountInString(s) <= maxVerdictReason {
		return s
	}
	return string([]rune(s)[:maxVerdictReason]) + "…"
}
