package runlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	if len(got) != len(events) || s.Final == nil || s.Winner != "bob" || s.Phase != PhaseDone {
		t.Errorf("LoadTurn: %d events, state %+v", len(got), s)
	}
	if _, _, err := LoadTurn(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no events.jsonl in") {
		t.Errorf("LoadTurn(empty dir) error = %v", err)
	}
}
