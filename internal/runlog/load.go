package runlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

// Turn is one turn's log read back.
type Turn struct {
	Events []event.Event
	State  *readmodel.State
	// Incomplete says why the session is known not to have finished, "" when the log ends
	// with session_ended: the process died (killed, crashed, out of memory) before it could
	// write the end, maybe in the middle of a line.
	Incomplete string
}

// LoadTurn reads <dir>/events.jsonl and folds it into a State; ReadTurn also says whether the
// log is complete.
func LoadTurn(dir string) ([]event.Event, *readmodel.State, error) {
	t, err := ReadTurn(dir)
	if err != nil {
		return nil, nil, err
	}
	return t.Events, t.State, nil
}

// ReadTurn reads <dir>/events.jsonl as ReadLog does.
func ReadTurn(dir string) (*Turn, error) { return readTurn(dir, 0) }

// ReadTurnLimited reads dir/events.jsonl as ReadTurn does, but at most MaxEventsRead bytes of
// it: a bigger log comes back incomplete, cut where the limit fell.
func ReadTurnLimited(dir string) (*Turn, error) { return readTurn(dir, MaxEventsRead) }

// openEvents opens dir/events.jsonl, saying what dir is not when it has none.
func openEvents(dir string) (*os.File, error) {
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("runlog: no events.jsonl in %s: is this a massgen log directory?", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	return f, nil
}

// readTurn reads dir/events.jsonl, at most limit bytes of it when limit > 0 (and then only a
// regular file, whose size tells whether the limit cut it).
func readTurn(dir string, limit int64) (*Turn, error) {
	f, err := openEvents(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	path := f.Name()
	var r io.Reader = f
	var size int64
	if limit > 0 {
		info, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("runlog: %w", err)
		}
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("runlog: %s is not a regular file", path)
		}
		r, size = io.LimitReader(f, limit), info.Size()
	}
	t, err := ReadLog(r)
	if err != nil {
		return nil, fmt.Errorf("runlog: read %s: %w", path, err)
	}
	if limit > 0 && size > limit {
		t.Incomplete = fmt.Sprintf("only the first %d MiB of its %d MiB events.jsonl were read", limit>>20, size>>20)
	}
	return t, nil
}

// ReadLog reads an events.jsonl stream and folds it. A log without session_ended, or whose
// last line is cut off mid-event, is still read (every complete event, never the cut line)
// and comes back with Incomplete set; a bad line anywhere else is an error.
func ReadLog(r io.Reader) (*Turn, error) {
	lc := &lineCounter{r: r}
	events, err := event.Read(lc)
	if err != nil {
		return nil, err
	}
	t := &Turn{Events: events, State: readmodel.NewState()}
	for _, e := range events {
		t.State.Apply(e)
	}
	// event.Read skips only a bad last line; a line it read but did not return is that one.
	skipped := ""
	if lc.lines() > len(events) {
		skipped = fmt.Sprintf("; its last line (line %d) is not a whole event and was skipped", lc.last)
		if lc.open {
			skipped = fmt.Sprintf("; its last line (line %d) was cut off mid-event and was skipped", lc.last)
		}
	}
	switch {
	case t.State.Ended:
	case len(events) == 0:
		t.Incomplete = "session did not finish: the log holds no event" + skipped + "; the process may have crashed"
	default:
		last := events[len(events)-1]
		t.Incomplete = fmt.Sprintf("session did not finish: the log ends after %s (event %d) at %s%s; the process may have crashed",
			last.Payload.Type(), last.Seq, last.Time.Format(time.RFC3339), skipped)
	}
	return t, nil
}

// lineCounter counts the non-empty lines passing through it, as event.Read sees them.
type lineCounter struct {
	r        io.Reader
	complete int  // non-empty lines ended by '\n'
	physical int  // lines ended by '\n'
	open     bool // bytes other than '\r' since the last '\n'
	last     int  // number of the last non-empty line, from 1
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for _, b := range p[:n] {
		switch b {
		case '\n':
			c.physical++
			if c.open {
				c.complete++
			}
			c.open = false
		case '\r':
		default:
			if !c.open {
				c.open, c.last = true, c.physical+1
			}
		}
	}
	return n, err
}

func (c *lineCounter) lines() int {
	if c.open {
		return c.complete + 1
	}
	return c.complete
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
