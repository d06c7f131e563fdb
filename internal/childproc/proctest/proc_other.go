//go:build !linux

package proctest

import (
	"testing"
	"time"
)

const noProc = "finding processes needs Linux's /proc"

// WithEnv skips the test: see the Linux version.
func WithEnv(t testing.TB, kv string) []int { t.Skip(noProc); return nil }

// RequireNone skips the test: see the Linux version.
func RequireNone(t testing.TB, m string, d time.Duration) { t.Skip(noProc) }

// GroupMembers skips the test: see the Linux version.
func GroupMembers(t testing.TB, pgid int) []int { t.Skip(noProc); return nil }

// PGID skips the test: see the Linux version.
func PGID(t testing.TB, pid int) int { t.Skip(noProc); return 0 }
