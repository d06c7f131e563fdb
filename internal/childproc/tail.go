package childproc

import (
	"strings"
	"sync"
)

// Tail keeps the last lines a child wrote to its standard error, for the messages that say
// why it failed. Blank lines are skipped. Safe for concurrent use.
type Tail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

// NewTail keeps the last max lines.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Add keeps line, dropping the oldest beyond the bound.
func (t *Tail) Add(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

// String is the lines kept, one per line.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
