package config

import (
	"fmt"
	"strings"

	"massgen/internal/suggest"
)

// didYouMean is a suggestion for an unknown word: the closest candidate when there is one,
// else the list of candidates.
func didYouMean(s string, candidates []string) string {
	if c := suggest.Closest(s, candidates); c != "" {
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
