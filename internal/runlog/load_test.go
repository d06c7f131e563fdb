package runlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

func TestFindTurns(t *testing.T) {
	logDir := filepath.Join(t.TempDir(), "log_20250314_150926_535897")
	for _, name := range []string{"turn_10", "turn_2", "turn_1", "turn_x", "turn_3"} {
		dir := filepath.Join(logDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if name != "turn_3" { // a turn folder without events.jsonl is skipped
			if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := FindTurns(logDir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(logDir, "turn_1"), filepath.Join(logDir, "turn_2"), filepath.Join(logDir, "turn_10")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FindTurns(log dir) (-want +got):\n%s", diff)
	}
	turn := filepath.Join(logDir, "turn_2")
	if got, err := FindTurns(turn); err != nil || !cmp.Equal(got, []string{turn}) {
		t.Errorf("FindTurns(turn dir) = %v, %v", got, err)
	}
	if _, err := FindTurns(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is this a massgen log directory?") {
		t.Errorf("FindTurns(empty dir) error = %v", err)
	}
	if _, err := FindTurns(filepath.Join(logDir, "missing")); err == nil {
		t.Error("FindTurns(missing dir) = nil error")
	}
}

func TestLoadTurn(t *testing.T) {
	events := session().events
	dir := t.TempDir()
	if err := record(t, dir, events); err != nil {
		t.Fatal(err)
	}
	got, s, err := LoadTurn(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(events) || s.Final == nil || s.Winner != "bob" || s.Phase != readmodel.PhaseDone {
		t.Errorf("LoadTurn: %d events, state %+v", len(got), s)
	}
	if _, _, err := LoadTurn(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no events.jsonl in") {
		t.Errorf("LoadTurn(empty dir) error = %v", err)
	}
}

// A session whose process died leaves a log without session_ended, often with its last line
// cut mid-write. Replay read such a log as if it were whole (the cut line silently dropped),
// so a crash looked like a session that simply stopped; it must say it is incomplete, keep
// every whole event, and never take the cut line for one.
func TestReadTurn_Incomplete(t *testing.T) {
	events := session().events
	if _, ok := events[len(events)-1].Payload.(event.SessionEnded); !ok {
		t.Fatal("the fixture does not end with session_ended")
	}
	var lines []string
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b)+"\n")
	}
	n := len(lines)
	whole := strings.Join(lines, "")
	upTo := func(i int) string { return strings.Join(lines[:i], "") } // the first i lines
	at := func(i int) string { return events[i].Time.Format(time.RFC3339) }
	lastType := func(i int) string { return events[i].Payload.Type() }
	cases := []struct {
		name   string
		log    string
		events int
		notice string // "" for a complete log
	}{
		{"complete", whole, n, ""},
		{"complete with blank and CRLF lines", strings.ReplaceAll(whole, "\n", "\r\n") + "\n\n", n, ""},
		{"complete without the final newline", strings.TrimSuffix(whole, "\n"), n, ""},
		{"died between events", upTo(n - 3), n - 3,
			fmt.Sprintf("session did not finish: the log ends after %s (event %d) at %s; the process may have crashed",
				lastType(n-4), n-3, at(n-4))},
		{"died mid-line", upTo(n-3) + lines[n-3][:len(lines[n-3])/2], n - 3,
			fmt.Sprintf("session did not finish: the log ends after %s (event %d) at %s; its last line (line %d) was cut off mid-event and was skipped; the process may have crashed",
				lastType(n-4), n-3, at(n-4), n-2)},
		{"session_ended cut", upTo(n-1) + lines[n-1][:10], n - 1,
			fmt.Sprintf("session did not finish: the log ends after %s (event %d) at %s; its last line (line %d) was cut off mid-event and was skipped; the process may have crashed",
				lastType(n-2), n-1, at(n-2), n)},
		{"garbled last line", upTo(2) + "{\"seq\":3,\"type\":\n", 2,
			fmt.Sprintf("session did not finish: the log ends after %s (event 2) at %s; its last line (line 3) is not a whole event and was skipped; the process may have crashed",
				lastType(1), at(1))},
		{"empty", "", 0, "session did not finish: the log holds no event; the process may have crashed"},
		{"only a cut line", lines[0][:20], 0,
			"session did not finish: the log holds no event; its last line (line 1) was cut off mid-event and was skipped; the process may have crashed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTurn(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Events) != tc.events || got.Incomplete != tc.notice {
				t.Errorf("ReadTurn: %d events, notice\n  %q\nwant %d events, notice\n  %q", len(got.Events), got.Incomplete, tc.events, tc.notice)
			}
			if tc.events > 0 && got.Events[tc.events-1].Seq != int64(tc.events) {
				t.Errorf("last event has seq %d, want %d", got.Events[tc.events-1].Seq, tc.events)
			}
			if got.State.Ended != (tc.notice == "") {
				t.Errorf("State.Ended = %v with notice %q", got.State.Ended, got.Incomplete)
			}
		})
	}
	// A bad line that is not the last is corruption, not a crash: an error naming it.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(upTo(2)+"{oops\n"+lines[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTurn(dir); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("ReadTurn(bad middle line) error = %v, want one naming line 3", err)
	}
}
