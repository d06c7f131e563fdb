package config

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use. Counted repetitions ({0,61}, {0,200}) compile to
// thousands of instructions, which every start of the binary paid for at init.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
