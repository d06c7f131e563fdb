package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"massgen/internal/event"
)

// fastTeam is a scripted team without latency, for tests that only need a run to happen.
const fastTeam = `
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris."]}
  - id: b
    backend: {type: scripted, answers: ["Paris, France."]}
ui: {display_type: simple}
`

// turnEvents reads the events of the run whose output is out: its "logs: DIR" line, or the
// LOG_DIR line of automation output.
func turnEvents(t *testing.T, out string) []event.Event {
	t.Helper()
	dir := ""
	if m := regexp.MustCompile(`(?m)^logs: (\S+)$`).FindStringSubmatch(out); m != nil {
		dir = m[1]
	} else if m := regexp.MustCompile(`(?m)^LOG_DIR: (\S+)$`).FindStringSubmatch(out); m != nil {
		dir = filepath.Join(m[1], "turn_1")
	} else {
		t.Fatalf("no log folder in:\n%s", out)
	}
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// started returns the session_started event.
func started(t *testing.T, evs []event.Event) event.SessionStarted {
	t.Helper()
	for _, e := range evs {
		if s, ok := e.Payload.(event.SessionStarted); ok {
			return s
		}
	}
	t.Fatal("no session_started event")
	return event.SessionStarted{}
}

// toolResults returns the results of the calls of tool.
func toolResults(evs []event.Event, tool string) []event.ToolResult {
	var out []event.ToolResult
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok && r.Tool == tool {
			out = append(out, r)
		}
	}
	return out
}

// noLogs fails when the working directory got a .massgen folder: the run must not have
// started.
func noLogs(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(".massgen"); err == nil {
		t.Error("a .massgen folder was written for a run that must not start")
	}
}
