package eval

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Grader says how an answer is compared with an item's expected answers.
type Grader string

// The graders.
const (
	// GraderExact: the answer, trimmed, equals an expected answer, trimmed (case counts).
	GraderExact Grader = "exact"
	// GraderNumeric: the answer's number (see ExtractNumber) is within the tolerance of an
	// expected answer's number.
	GraderNumeric Grader = "numeric"
	// GraderRegex: the item's pattern (or --pattern) matches somewhere in the answer.
	GraderRegex Grader = "regex"
	// GraderChoice: the letter the answer chooses (see ExtractChoice) is the expected one.
	GraderChoice Grader = "choice"
	// GraderContains: an expected answer occurs in the answer, ignoring case and spacing.
	GraderContains Grader = "contains"
)

// Graders lists every grader.
var Graders = []Grader{GraderExact, GraderNumeric, GraderRegex, GraderChoice, GraderContains}

func graderList() string {
	names := make([]string, len(Graders))
	for k, g := range Graders {
		names[k] = string(g)
	}
	return strings.Join(names, ", ")
}

// Correct grades an answer against the item.
func (it Item) Correct(answer string) bool {
	switch it.Grader {
	case GraderNumeric:
		got, ok := ExtractNumber(answer)
		if !ok {
			return false
		}
		for _, a := range it.Answers {
			want, _ := ExtractNumber(a)
			if math.Abs(got-want) <= it.Tolerance {
				return true
			}
		}
		return false
	case GraderRegex:
		return it.Pattern != nil && it.Pattern.MatchString(answer)
	case GraderChoice:
		got, ok := ExtractChoice(answer, it.Choices)
		return ok && slices.Contains(it.Answers, got)
	case GraderContains:
		text := normSpace(strings.ToLower(answer))
		for _, a := range it.Answers {
			if strings.Contains(text, normSpace(strings.ToLower(a))) {
				return true
			}
		}
		return false
	}
	return slices.Contains(trimAll(it.Answers), strings.TrimSpace(answer))
}

// Normal is the answer in the grader's terms, so that two answers that say the same thing
// compare equal: the trimmed text (exact), the number (numeric), the letter (choice), the
// text in lower case with spacing and end punctuation folded (regex, contains). "" means the
// answer says nothing the grader can read (no number, no letter): it agrees with no other.
// The majority baseline and the agreement rate group answers by it.
func (it Item) Normal(answer string) string {
	switch it.Grader {
	case GraderNumeric:
		v, ok := ExtractNumber(answer)
		if !ok {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case GraderChoice:
		l, _ := ExtractChoice(answer, it.Choices)
		return l
	case GraderRegex, GraderContains:
		return normText(answer)
	}
	return strings.TrimSpace(answer)
}

// normText folds case, spacing and the punctuation an answer ends with.
func normText(s string) string {
	return strings.TrimRightFunc(normSpace(strings.ToLower(s)), func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(".!?;:,", r)
	})
}

// normSpace trims s and turns every run of white space into one space.
func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func trimAll(ss []string) []string {
	out := make([]string, len(ss))
	for k, s := range ss {
		out[k] = strings.TrimSpace(s)
	}
	return out
}
