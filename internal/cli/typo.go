package cli

import (
	"strings"
	"unicode"

	"github.com/spf13/cobra"
)

// checkOneWord applies the one-word rule (see the root's help): a run whose first argument is
// one word equal to a subcommand name, or a letter or two from one, is refused before
// anything starts, so a typo never becomes a paid question. The rule is off for arguments
// after "--", and for a first word that ends with '?'.
func checkOneWord(cmd *cobra.Command, args []string) error {
	if len(args) == 0 || cmd.ArgsLenAtDash() == 0 {
		return nil
	}
	first := args[0]
	if strings.IndexFunc(first, unicode.IsSpace) >= 0 || strings.HasSuffix(first, "?") {
		return nil
	}
	best := closest(first, subcommandNames(cmd.Root()))
	if best == "" {
		return nil
	}
	quoted := "massgen \"" + first + "?\""
	if len(args) > 1 {
		quoted = "massgen \"" + strings.Join(args, " ") + "\""
	}
	return exitf(ExitConfig, "unknown command `%s`; did you mean `massgen %s`? To ask it as a question, quote it with a trailing '?' or use more words (%s), or put it after -- (massgen -- %s)",
		first, best, quoted, strings.Join(args, " "))
}

// closest returns the candidate nearest to s when it is near enough to be a typo of it.
func closest(s string, candidates []string) string {
	best, dist := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < dist {
			best, dist = c, d
		}
	}
	if dist > typoLimit(s) {
		return ""
	}
	return best
}

// typoLimit is how far a word may be from a subcommand name to count as a typo of it: one
// edit for short words, whose neighbours are mostly real words (see, get), two otherwise.
func typoLimit(word string) int {
	if len([]rune(word)) <= 4 {
		return 1
	}
	return 2
}

// editDistance is the optimal string alignment distance: insertions, deletions, substitutions
// and transpositions of neighbours each count one (replya is one from replay).
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
