// Package suggest finds the did-you-mean of a mistyped name: a flag, a subcommand, a config
// key, an example, an agent id. It is a leaf, so that config and cli (and anything between)
// share one notion of "near enough to be a typo".
package suggest

import "strings"

// maxRunes bounds the work: a name this long is no typo of ours, and the distance is quadratic.
const maxRunes = 64

// Closest returns the candidate nearest to s, ignoring case, when it is near enough to be a
// typo of it, else "". Near enough is up to a third of s's length in edits (at least one, and
// at least two from five letters on), fewer edits than s has letters, or, failing that, one
// being a prefix of the other from four letters on ("timeout" for "timeout_settings").
func Closest(s string, candidates []string) string {
	best, d := nearest(s, candidates)
	if best == "" {
		return ""
	}
	n := len([]rune(s))
	limit := max(1, n/3)
	if n >= 5 {
		limit = max(2, limit)
	}
	if d <= limit && d < n {
		return best
	}
	ls := strings.ToLower(s)
	if len(ls) < 4 {
		return ""
	}
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if strings.HasPrefix(lc, ls) || strings.HasPrefix(ls, lc) {
			return c
		}
	}
	return ""
}

// Typo is Closest held to what is certainly a typo: one edit for words of up to four letters,
// whose neighbours are mostly real words (see, get), two otherwise, and no prefixes. It is for
// where a near miss changes what happens, such as a question refused because its one word is
// within a letter of a subcommand.
func Typo(s string, candidates []string) string {
	best, d := nearest(s, candidates)
	limit := 2
	if len([]rune(s)) <= 4 {
		limit = 1
	}
	if best == "" || d > limit {
		return ""
	}
	return best
}

// nearest is the candidate at the smallest distance from s, ignoring case (the first of
// equals), and that distance; "" when there are no candidates or s is too long to be a typo.
func nearest(s string, candidates []string) (string, int) {
	if len([]rune(s)) > maxRunes {
		return "", 0
	}
	ls := strings.ToLower(s)
	best, bestD := "", -1
	for _, c := range candidates {
		if d := Distance(ls, strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best, bestD
}

// Distance is the optimal string alignment distance between a and b, in runes: insertions,
// deletions, substitutions and transpositions of neighbours each count one (replya is one
// from replay). It is case-sensitive.
func Distance(a, b string) int {
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
