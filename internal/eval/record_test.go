package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadResults: the last line of an id wins; a last line cut off by a kill is skipped
// with a warning, and the next record starts on a line of its own; any other bad line is an
// error.
func TestReadResults(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResultsFile)
	if recs, _, err := ReadResults(path); err != nil || len(recs) != 0 {
		t.Fatalf("no file: %v, %v; want nothing", recs, err)
	}
	data := `{"id":"a","status":"failed","error":"boom"}
{"id":"b","status":"ok","final_answer":"x"}

{"id":"a","status":"ok","final_answer":"y"}
{"id":"c","status":"o`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, warnings, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs["a"].Status != StatusOK || recs["a"].Final != "y" || recs["b"].Final != "x" {
		t.Errorf("records = %+v, want a (its later line) and b", recs)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], ":5: the last line was cut off") {
		t.Errorf("warnings = %q, want line 5 cut off", warnings)
	}

	w, err := openResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.append(Record{ID: "c", Status: StatusOK, Final: "z", Started: time.Unix(0, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	// Now line 5 is a whole bad line, no longer the last: the file is not ours.
	if _, _, err := ReadResults(path); err == nil || !strings.Contains(err.Error(), ":5: not a result line") {
		t.Errorf("err = %v, want line 5 refused", err)
	}
	got, _ := os.ReadFile(path)
	lines := strings.Split(string(got), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[5], `{"id":"c","fingerprint":"","team":"","status":"ok"`) || lines[6] != "" {
		t.Errorf("after append:\n%s\nwant the record on a line of its own", got)
	}
}
