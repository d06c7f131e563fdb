package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A session whose process died before its first status.json (only events.jsonl, or not even
// that) was listed as "unknown" and its detail was a 404; the dashboard's replay of it showed
// "running" forever. It is "incomplete", with a notice saying what the log ends with.
func TestAPI_ASessionWhoseProcessDiedIsIncomplete(t *testing.T) {
	e := newEnv(t, nil)
	write := func(rel, body string, age time.Duration) {
		p := filepath.Join(e.root, filepath.FromSlash(rel))
		mustWrite(t, p, body)
		old := time.Now().Add(-age)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	started := `{"seq":1,"time":"2025-01-01T00:00:01Z","type":"session_started","data":{"question":"crashed early","turn":1,"session_id":"log_20250101_000001","agents":[]}}` + "\n"
	write("log_20250101_000001/turn_1/events.jsonl", started+`{"seq":2,"time":"2025-01-01T00:0`, time.Hour)
	write("log_20250101_000002/turn_1/events.jsonl", started, 0) // being written right now
	if err := os.MkdirAll(filepath.Join(e.root, "log_20250101_000003", "turn_1"), 0o755); err != nil {
		t.Fatal(err)
	}

	got := map[string]summary{}
	for _, s := range decode[struct{ Sessions []summary }](t, e.get("/api/sessions")).Sessions {
		got[s.ID] = s
	}
	if s := got["log_20250101_000001/turn_1"]; s.Status != "incomplete" || s.Running {
		t.Errorf("dead session listed as %+v", s)
	}
	if s := got["log_20250101_000002/turn_1"]; s.Status != "running" || !s.Running {
		t.Errorf("live session listed as %+v", s)
	}

	for id, want := range map[string]string{
		"log_20250101_000001/turn_1": "session did not finish: the log ends after session_started (event 1) at 2025-01-01T00:00:01Z; " +
			"its last line (line 2) was cut off mid-event and was skipped; the process may have crashed",
		"log_20250101_000003/turn_1": "session did not finish: it has no events.jsonl",
	} {
		r := e.get("/api/sessions/" + id)
		if r.status != http.StatusOK {
			t.Fatalf("detail of %s: %d %s", id, r.status, r.body)
		}
		d := decode[sessionDetail](t, r)
		if d.Status != "incomplete" || !strings.HasPrefix(d.Notice, want) {
			t.Errorf("detail of %s: status %q notice %q", id, d.Status, d.Notice)
		}
	}
	if d := decode[sessionDetail](t, e.get("/api/sessions/log_20250101_000002/turn_1")); d.Notice != "" || d.Status != "running" {
		t.Errorf("a live session has status %q notice %q", d.Status, d.Notice)
	}
	wantError(t, e.get("/api/sessions/log_20250101_000009/turn_1"), http.StatusNotFound, "session_not_found")
	// The dashboard's replay ends a log without session_ended as incomplete.
	js := e.get("/static/app.js")
	if !strings.Contains(string(js.body), "view.end(ended)") || !strings.Contains(string(js.body), "{ status: 'incomplete' }") {
		t.Error("the replay does not end an unfinished log as incomplete")
	}
}
