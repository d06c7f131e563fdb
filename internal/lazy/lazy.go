// Package lazy builds package-level values on first use instead of at start. massgen starts
// for every command and every sandboxed child, and a regular expression compiled in a package
// initialiser is paid for by all of them, whether they match anything or not.
package lazy

import (
	"regexp"
	"sync"
)

// Regexp compiles expr on first use; it panics then, as regexp.MustCompile does, so expr must
// be a string literal or a sum of them (TestEveryRegexpCompiles compiles every one in massgen).
func Regexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
