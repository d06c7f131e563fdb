package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"massgen/internal/event"
)

// prepareOutputFile checks --output-file before anything is spent: its folder is created (as
// MassGen does) and the file must be writable. It returns the absolute path ("" for none).
// A file that did not exist is not left behind: it is written when the answer is there.
func prepareOutputFile(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", exitf(ExitConfig, "--output-file %s: %v", path, osReason(err))
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return "", exitf(ExitConfig, "--output-file %s is a folder: name a file in it, e.g. %s", path, filepath.Join(path, "answer.md"))
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", exitf(ExitConfig, "--output-file %s: cannot create its folder %s: %v", path, dir, osReason(err))
	}
	_, statErr := os.Lstat(abs)
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return "", exitf(ExitConfig, "--output-file %s: cannot write it: %v", path, osReason(err))
	}
	f.Close()
	if errors.Is(statErr, fs.ErrNotExist) {
		_ = os.Remove(abs)
	}
	return abs, nil
}

// writeOutputFile writes the final answer; the log folder keeps its own copy.
func writeOutputFile(path, answer string) error {
	if err := os.WriteFile(path, []byte(answer), 0o644); err != nil {
		return exitf(ExitExecution, "--output-file %s: cannot write the answer: %v (it is still in the log folder, final/<winner>/answer.txt)", path, osReason(err))
	}
	return nil
}

// osReason is an OS error without Go's operation and path, which the message already names.
func osReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// streamSink is --stream-events: every event as one JSON line, the same lines events.jsonl
// holds, written as they happen.
type streamSink struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func newStreamSink(w io.Writer) *streamSink { return &streamSink{w: w} }

// Handle implements event.Sink. After the first failed write (a closed pipe) it stops.
func (s *streamSink) Handle(e event.Event) {
	line, err := event.EncodeLine(e)
	if err != nil {
		line, _ = json.Marshal(map[string]any{"seq": e.Seq, "type": "stream_error", "error": fmt.Sprintf("the event could not be encoded: %v", err)})
		line = append(line, '\n')
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		_, s.err = s.w.Write(line)
	}
}
