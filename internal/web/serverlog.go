package web

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"massgen/internal/app"
)

// lineLog writes a line per session start and end, for the person running the server; a nil
// writer writes nothing. Lines say where the log is, never the question (a client's data).
type lineLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineLog) printf(format string, a ...any) {
	if l == nil || l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", a...)
}

func (l *lineLog) started(id, team string) { l.printf("session %s (team %s): started", id, team) }

func (l *lineLog) ended(id, team string, res app.Result, err error) {
	if id == "" {
		id = "(not started)"
	}
	if err != nil {
		code := app.ExitExecution
		var ae *app.Error
		if errors.As(err, &ae) {
			code = ae.Code
		}
		l.printf("session %s (team %s): could not start (exit %d): %s", id, team, code, firstLine(err.Error()))
		return
	}
	winner := res.Winner
	if winner == "" {
		winner = "none"
	}
	l.printf("session %s (team %s): %s (exit %d) in %.1fs, winner %s, cost %s", id, team, res.Status, res.ExitCode,
		res.Duration.Seconds(), winner, res.Cost())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
