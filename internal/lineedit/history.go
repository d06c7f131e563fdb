package lineedit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/private"
)

// History limits: the entries kept, the longest entry saved, and how much of the file is read
// (its end: the newest entries).
const (
	HistoryMax      = 1000
	maxHistoryEntry = 16 << 10
	maxHistoryRead  = 4 << 20
)

// History is the prompt's history, oldest first, kept in a file of one entry per line. A
// History without a path lives in memory only.
type History struct {
	path    string
	max     int
	entries []string
}

// OpenHistory reads the history file at path, keeping its last max entries (HistoryMax when
// max <= 0). A missing file is an empty history; an unreadable one is an error, with the
// History still usable in memory. The file is rewritten, shorter, once it holds twice max.
func OpenHistory(path string, max int) (*History, error) {
	if max <= 0 {
		max = HistoryMax
	}
	h := &History{path: path, max: max}
	if path == "" {
		return h, nil
	}
	lines, total, err := readTail(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		h.path = "" // never append to a file we could not read
		return h, fmt.Errorf("prompt history %s: %w", path, err)
	}
	for _, l := range lines {
		if l = clean(l); l != "" {
			h.entries = append(h.entries, l)
		}
	}
	if len(h.entries) > max {
		h.entries = h.entries[len(h.entries)-max:]
	}
	if total > 2*max {
		if err := h.rewrite(); err != nil {
			return h, fmt.Errorf("prompt history %s: %w", path, err)
		}
	}
	return h, nil
}

// readTail returns the lines of the last maxHistoryRead bytes of path (a first line cut in the
// middle is dropped) and how many lines there are in those bytes.
func readTail(path string) ([]string, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("not a regular file")
	}
	cut := info.Size() > maxHistoryRead
	if cut {
		if _, err := f.Seek(-maxHistoryRead, io.SeekEnd); err != nil {
			return nil, 0, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHistoryRead))
	if err != nil {
		return nil, 0, err
	}
	if cut {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	return lines, len(lines), nil
}

// Entries returns the history, oldest first. The slice is the History's own: do not modify.
func (h *History) Entries() []string { return h.entries }

// Add appends line, unless it is empty or repeats the newest entry, and saves it. The entry is
// kept in memory even when saving fails.
func (h *History) Add(line string) error {
	line = clean(line)
	if line == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == line) {
		return nil
	}
	h.entries = append(h.entries, line)
	if len(h.entries) > h.max {
		h.entries = h.entries[len(h.entries)-h.max:]
	}
	if h.path == "" || len(line) > maxHistoryEntry {
		return nil
	}
	// Questions can be private: the file is the user's alone.
	f, err := private.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if errors.Is(err, fs.ErrNotExist) { // its folder (the log root) is made by the first run
		if err = private.MkdirAll(filepath.Dir(h.path)); err == nil {
			f, err = private.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
		}
	}
	if err != nil {
		return fmt.Errorf("prompt history: %w", err)
	}
	_, werr := f.WriteString(line + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("prompt history: %w", werr)
	}
	return nil
}

// rewrite replaces the file with the entries kept, through a temporary file and a rename.
func (h *History) rewrite() error {
	var b strings.Builder
	for _, e := range h.entries {
		if len(e) <= maxHistoryEntry {
			b.WriteString(e + "\n")
		}
	}
	return private.WriteFileAtomic(h.path, []byte(b.String()))
}

// clean makes line one history entry: one line, without the control characters the editor
// would never have let in, trimmed.
func clean(line string) string {
	line = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case !printable(r):
			return -1
		}
		return r
	}, line)
	return strings.TrimSpace(line)
}
