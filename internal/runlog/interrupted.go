package runlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

// Interrupted is a turn whose process stopped before the session ended (kill -9, a crash, the
// machine going down) or that a Ctrl-C interrupted: what massgen resume takes up. Its log is
// read whole and checked, so that nothing in it is misread: only the very last line may be
// cut off (the recorder writes one line per event, so a kill loses at most that one), and it
// is dropped.
type Interrupted struct {
	Dir    string
	Events []event.Event // every whole event, in order
	State  *readmodel.State
	// Keep is how many bytes of events.jsonl hold Events: the resumed log goes on from there.
	Keep int64
	// Dropped says what of the file was left out ("" when nothing was).
	Dropped string
	// Previous is how the log ended: "killed" (no session_ended) or the status a Ctrl-C left.
	Previous string
	// From metadata.json, which the recorder writes when the session starts: the config the
	// session ran with, its hash, and the command line.
	ConfigPath string
	ConfigHash string
	Args       []string
}

// ErrFinished is returned by ReadInterrupted for a turn that ended: there is nothing to resume.
var ErrFinished = errors.New("the session finished")

// ReadInterrupted reads the turn folder dir for resuming it. It fails for a folder that is not
// a massgen turn, a log damaged anywhere but its last line, and a turn that finished (wrapping
// ErrFinished); a turn that a Ctrl-C interrupted can be resumed.
func ReadInterrupted(dir string) (*Interrupted, error) {
	f, err := openEvents(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	path := f.Name()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("runlog: %s is not a regular file", path)
	}
	if info.Size() > MaxEventsRead {
		return nil, fmt.Errorf("runlog: %s is %d MiB, more than the %d MiB a session can be resumed from", path, info.Size()>>20, MaxEventsRead>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxEventsRead))
	if err != nil {
		return nil, fmt.Errorf("runlog: read %s: %w", path, err)
	}
	it, err := parseInterrupted(data)
	if err != nil {
		return nil, fmt.Errorf("runlog: %s: %w", path, err)
	}
	it.Dir = dir
	var m struct {
		ConfigPath string   `json:"config_path"`
		ConfigHash string   `json:"config_hash"`
		Args       []string `json:"args"`
	}
	if readCappedJSON(os.DirFS(dir), "metadata.json", &m) == nil {
		it.ConfigPath, it.ConfigHash, it.Args = m.ConfigPath, m.ConfigHash, m.Args
	}
	return it, nil
}

// parseInterrupted checks and folds an events.jsonl that is to be resumed.
func parseInterrupted(data []byte) (*Interrupted, error) {
	it := &Interrupted{State: readmodel.NewState(), Previous: "killed"}
	line, off := 0, int64(0)
	for len(data) > 0 {
		line++
		end := bytes.IndexByte(data, '\n')
		raw, whole := data, false
		if end >= 0 {
			raw, whole = data[:end], true
		}
		next := int64(len(raw))
		if whole {
			next++
		}
		last := !whole || end == len(data)-1
		if len(bytes.TrimSpace(raw)) == 0 {
			data, off = data[next:], off+next
			if whole {
				it.Keep = off
			}
			continue
		}
		var e event.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			if last {
				// The process died while writing it: the one event a kill may lose.
				it.Dropped = fmt.Sprintf("line %d was cut off mid-event (%d bytes) and was dropped", line, len(raw))
				break
			}
			return nil, fmt.Errorf("line %d is not a massgen event (%v): the log was damaged or edited, and cannot be resumed", line, err)
		}
		want := int64(len(it.Events)) + 1
		if e.Seq != want {
			return nil, fmt.Errorf("line %d holds event %d where event %d belongs: the log was edited or is not massgen's", line, e.Seq, want)
		}
		if _, ok := e.Payload.(event.SessionStarted); ok != (want == 1) {
			return nil, fmt.Errorf("line %d: a massgen log opens with session_started, and only once", line)
		}
		it.Events = append(it.Events, e)
		it.State.Apply(e)
		data, off = data[next:], off+next
		it.Keep = off
	}
	if len(it.Events) == 0 {
		return nil, errors.New("no whole event: the session died before it started, and there is nothing to resume (run the question again)")
	}
	if s := it.State; s.Ended {
		if s.SessionStatus != event.StatusInterrupted {
			return nil, fmt.Errorf("%w %s (exit %d): nothing to resume", ErrFinished, s.SessionStatus, s.ExitCode)
		}
		it.Previous = event.StatusInterrupted
	}
	return it, nil
}

// RepairFinished brings status.json and metadata.json of the finished turn dir up to date
// with its events.jsonl, when a process killed right after writing session_ended left them
// behind; it reports whether they were.
func RepairFinished(dir string, now time.Time) (bool, error) {
	t, err := ReadTurn(dir)
	if err != nil {
		return false, err
	}
	if !t.State.Ended {
		return false, nil
	}
	var st struct {
		Meta struct {
			Status string `json:"status"`
		} `json:"meta"`
	}
	if readCappedJSON(os.DirFS(dir), "status.json", &st) == nil && st.Meta.Status == t.State.SessionStatus {
		return false, nil
	}
	var m struct {
		Version    string          `json:"version"`
		ConfigPath string          `json:"config_path"`
		ConfigHash string          `json:"config_hash"`
		Config     json.RawMessage `json:"config"`
		Args       []string        `json:"args"`
		PID        int             `json:"pid"`
		Host       string          `json:"host"`
	}
	_ = readCappedJSON(os.DirFS(dir), "metadata.json", &m)
	r := &Recorder{dir: dir, meta: Meta{Version: m.Version, ConfigPath: m.ConfigPath, ConfigHash: m.ConfigHash, Config: m.Config,
		Args: m.Args, PID: m.PID, Host: m.Host}, state: t.State}
	r.table = NewTableOn(t.State)
	r.writeSummary()
	r.writeStatus(StatusJSON(t.State, now))
	return true, r.err
}
