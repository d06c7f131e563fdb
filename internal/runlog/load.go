package runlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"massgen/internal/event"
)

// LoadTurn reads <dir>/events.jsonl and folds it into a State.
func LoadTurn(dir string) ([]event.Event, *State, error) {
	path := filepath.Join(dir, "events.jsonl")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("runlog: no events.jsonl in %s: is this a massgen log directory?", dir)
	}
	events, err := event.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("runlog: %w", err)
	}
	s := NewState()
	for _, e := range events {
		s.Apply(e)
	}
	return events, s, nil
}

// FindTurns returns the turn folders under logDir: logDir itself when it holds an
// events.jsonl (a turn folder), else its turn_<n> subfolders that hold one, in numeric order
// (a log_<timestamp> folder).
func FindTurns(logDir string) ([]string, error) {
	info, err := os.Stat(logDir)
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("runlog: %s is not a directory", logDir)
	}
	if isFile(filepath.Join(logDir, "events.jsonl")) {
		return []string{logDir}, nil
	}
	entries, err := os.ReadDir(logDir)
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	type turn struct {
		n   int
		dir string
	}
	var turns []turn
	for _, e := range entries {
		num, ok := strings.CutPrefix(e.Name(), "turn_")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || !e.IsDir() {
			continue
		}
		dir := filepath.Join(logDir, e.Name())
		if isFile(filepath.Join(dir, "events.jsonl")) {
			turns = append(turns, turn{n, dir})
		}
	}
	if len(turns) == 0 {
		return nil, fmt.Errorf("runlog: no events.jsonl in %s or its turn_<n> folders: is this a massgen log directory?", logDir)
	}
	slices.SortFunc(turns, func(a, b turn) int { return a.n - b.n })
	dirs := make([]string, len(turns))
	for i, t := range turns {
		dirs[i] = t.dir
	}
	return dirs, nil
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
