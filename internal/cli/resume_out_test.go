package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
)

// A resumed session reports one wall time, from its first start (the summary line's and the
// latency line's agree), and its logs: folder absolute, as a new session does, though LOGDIR
// was given relative.
func TestResume_OneWallTimeAndAbsoluteLogs(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	dir := filepath.Join(".massgen", "massgen_logs", "log_20260101_120000_000001")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The process died an hour ago, right after the session started.
	turn := filepath.Join(dir, "turn_1")
	if err := os.Mkdir(turn, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := event.Create(filepath.Join(turn, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour)
	w.Handle(event.Event{Seq: 1, Time: start, Payload: event.SessionStarted{Question: "q", Turn: 1,
		Agents: []event.AgentInfo{{ID: "a", Label: "agent1", Backend: "scripted"}, {ID: "b", Label: "agent2", Backend: "scripted"}}}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(turn, "events.jsonl"), start, start); err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"config_path": %q, "args": ["massgen", "--config", %q, "q"]}`, cfg, cfg)
	if err := os.WriteFile(filepath.Join(dir, "turn_1", "metadata.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := massgen(t, "", "resume", "--no-display", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	took := regexp.MustCompile(`(?m)^session completed \(exit 0\) in ([0-9.]+)s$`).FindStringSubmatch(out)
	wall := regexp.MustCompile(`(?m)^latency: wall ([0-9.]+)s`).FindStringSubmatch(out)
	if took == nil || wall == nil {
		t.Fatalf("no summary or latency line:\n%s", out)
	}
	a, _ := strconv.ParseFloat(took[1], 64)
	b, _ := strconv.ParseFloat(wall[1], 64)
	if a < 3600 || a-b > 0.1 || b-a > 0.1 {
		t.Errorf("the session took %ss and its wall time is %ss; want one time, from its start an hour ago", took[1], wall[1])
	}
	abs, _ := filepath.Abs(filepath.Join(dir, "turn_1"))
	if !strings.Contains(out, "\nlogs: "+abs+"\n") {
		t.Errorf("want logs: %s\n%s", abs, out)
	}
}
