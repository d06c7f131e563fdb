package config

import (
	"fmt"
	"strings"
)

// closest returns the candidate nearest to s (case-insensitive edit distance with adjacent
// transpositions), or "" when none is close enough to be a plausible typo.
func closest(s string, candidates []string) string {
	ls := strings.ToLower(s)
	if len(ls) > 64 { // keys this long are not typos of ours; keep the work bounded
		return ""
	}
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(ls, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	n := len([]rune(ls))
	limit := max(1, n/3)
	if n >= 5 {
		limit = max(2, limit)
	}
	if bestD <= limit && bestD < n {
		return best
	}
	// A prefix is a good hint too ("timeout" for "timeout_settings").
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if len(ls) >= 4 && (strings.HasPrefix(lc, ls) || strings.HasPrefix(ls, lc)) {
			return c
		}
	}
	return ""
}

// editDistance is the optimal-string-alignment distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// didYouMean is a suggestion for an unknown word: the closest candidate when there is one,
// else the list of candidates.
func didYouMean(s string, candidates []string) string {
	if c := closest(s, candidates); c != "" {
		return fmt.Sprintf("did you mean `%s`?", c)
	}
	return "valid keys: " + strings.Join(candidates, ", ")
}

// oneOf formats allowed values for a message: "a, b or c".
func oneOf(values []string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
