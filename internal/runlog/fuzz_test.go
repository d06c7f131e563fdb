package runlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/event"
)

// FuzzReadLog reads arbitrary bytes as an events.jsonl, as replay and the dashboard do with a
// file a crash may have cut or a person may have edited. It never panics; when it reads the
// log, every complete event comes back at most once and Incomplete says so exactly when the
// session did not end.
func FuzzReadLog(f *testing.F) {
	path := filepath.Join(f.TempDir(), "events.jsonl")
	w, err := event.Create(path)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range session().events {
		w.Handle(e)
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	log, err := os.ReadFile(path)
	if err != nil || len(log) < 3 {
		f.Fatalf("seed log: %d bytes, %v", len(log), err)
	}
	f.Add(log)
	f.Add(log[:len(log)/2])
	f.Add(log[:len(log)-2])
	f.Add([]byte("{\"seq\":1}\n\xff\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		turn, err := ReadLog(bytes.NewReader(data))
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Error("an error with no message")
			}
			return
		}
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if len(turn.Events) > lines {
			t.Errorf("%d events from %d lines", len(turn.Events), lines)
		}
		if (turn.Incomplete == "") != turn.State.Ended {
			t.Errorf("Incomplete %q, but the session ended = %v", turn.Incomplete, turn.State.Ended)
		}
	})
}
