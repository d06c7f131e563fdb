package runlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"massgen/internal/lazy"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// Session folders are log_<timestamp>[_<n>] and their turns turn_<n>, as app names them;
// nothing else under the log root is read.
var (
	sessionName = lazy.Regexp(`^log_[0-9]{8}_[0-9]{6}(_[0-9]{1,9}){0,2}$`)
	turnName    = lazy.Regexp(`^turn_[1-9][0-9]{0,5}$`)
)

// IsSessionName and IsTurnName report whether a folder name is one massgen writes for a
// session or a turn: whatever else lies in a log root is never read.
func IsSessionName(name string) bool { return sessionName().MatchString(name) }
func IsTurnName(name string) bool    { return turnName().MatchString(name) }

// Read limits for a log that may be cut off, huge or written by someone else: a file above
// its limit is read up to the limit (JSON files: not at all) and never whole into memory.
const (
	maxJSONFile   = 16 << 20 // metadata.json, status.json
	maxAnswerFile = event.MaxLine
	// MaxEventsRead bounds the events.jsonl a summary folds; the rest of a bigger log is left
	// out and the turn reported incomplete.
	MaxEventsRead = 512 << 20
)

// LiveWithin is how recently a turn without an end must have written its log to count as
// running (the recorder rewrites status.json at least every 2 s); older, it was abandoned.
const LiveWithin = 10 * time.Second

// Turn statuses besides event.Status*: running (its log is being written), incomplete (the
// process died before the end) and unknown (nothing readable).
const (
	StatusRunning    = "running"
	StatusIncomplete = "incomplete"
	StatusUnknown    = "unknown"
)

// IsSessionID reports whether id names a session folder (log_<timestamp>).
func IsSessionID(id string) bool { return sessionName().MatchString(id) }

// Session is one log_<timestamp> folder: a session of one or more turns.
type Session struct {
	ID    string // log_<timestamp>
	Dir   string // <root>/<ID>
	Start time.Time
	Turns []TurnSummary // every turn_<n> folder, in numeric order
}

// TurnSummary is one turn as its files describe it, read without folding events.jsonl.
type TurnSummary struct {
	N          int
	Dir        string
	Question   string
	Status     string // event.Status*, StatusRunning, StatusIncomplete or StatusUnknown
	Winner     string
	ExitCode   *int
	Error      string
	StartedAt  time.Time
	Duration   float64 // seconds
	ConfigPath string
	Args       []string
	Team       []TeamAgent // the agents as metadata.json recorded the config
	Usage      provider.Usage
	CostUSD    float64
	// CostKnown is false when part of the cost is unknown (a model without a price, a CLI run
	// stopped before it told its usage); logs written before it was recorded count as known.
	CostKnown bool
}

// Cost is the turn's cost as views show it.
func (t TurnSummary) Cost() usage.Amount { return usage.AmountOf(t.CostUSD, t.Usage, t.CostKnown) }

// TeamAgent is one agent of the recorded config (secrets already removed by the writer).
type TeamAgent struct {
	ID            string
	Type, Model   string
	BaseURL       string
	SystemMessage string
}

// Answered reports whether the turn produced an answer that counts for the conversation:
// completed, or cut off by the session timeout with the best answer written.
func (t TurnSummary) Answered() bool {
	return t.Status == event.StatusCompleted || t.Status == event.StatusTimeout
}

// Last is the session's newest turn; zero when it has none.
func (s Session) Last() TurnSummary {
	if len(s.Turns) == 0 {
		return TurnSummary{}
	}
	return s.Turns[len(s.Turns)-1]
}

// Cost is the cost of all the session's turns, as views show it.
func (s Session) Cost() usage.Amount {
	a := usage.Amount{Known: true}
	for _, t := range s.Turns {
		c := t.Cost()
		a.USD, a.Known, a.Estimated = a.USD+c.USD, a.Known && c.Known, a.Estimated || c.Estimated
	}
	return a
}

// Status is the status of the session's newest turn.
func (s Session) Status() string {
	if len(s.Turns) == 0 {
		return StatusUnknown
	}
	return s.Last().Status
}

// LastAnswered is the newest turn with an answer; ok is false when there is none.
func (s Session) LastAnswered() (TurnSummary, bool) {
	for _, t := range slices.Backward(s.Turns) {
		if t.Answered() {
			return t, true
		}
	}
	return TurnSummary{}, false
}

// SessionIDs returns the session folders under root, newest first (the names are
// timestamps). A missing root has none.
func SessionIDs(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && sessionName().MatchString(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return strings.Compare(b, a) })
	return ids, nil
}

// ReadSession reads session id under root. Its files may be missing, half-written or
// hostile: what cannot be read makes a sparser summary, never an error or a panic. The error
// is for an id that is not a session folder.
func ReadSession(root, id string, now time.Time) (Session, error) {
	if !sessionName().MatchString(id) {
		return Session{}, fmt.Errorf("runlog: %q is not a session id (log_<timestamp>)", id)
	}
	dir := filepath.Join(root, id)
	info, err := os.Lstat(dir)
	if err != nil {
		return Session{}, fmt.Errorf("runlog: %w", err)
	}
	if !info.IsDir() {
		return Session{}, fmt.Errorf("runlog: %s is not a directory", dir)
	}
	s := Session{ID: id, Dir: dir, Start: folderStart(id)}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() || !turnName().MatchString(e.Name()) {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(e.Name(), "turn_"))
		s.Turns = append(s.Turns, ReadTurnSummary(filepath.Join(dir, e.Name()), n, now))
	}
	slices.SortFunc(s.Turns, func(a, b TurnSummary) int { return a.N - b.N })
	if len(s.Turns) > 0 && !s.Turns[0].StartedAt.IsZero() {
		s.Start = s.Turns[0].StartedAt
	}
	return s, nil
}

// folderStart reads the local time a log_YYYYMMDD_HHMMSS folder name gives.
func folderStart(id string) time.Time {
	ts := strings.TrimPrefix(id, "log_")
	if len(ts) < 15 {
		return time.Time{}
	}
	t, err := time.ParseInLocation("20060102_150405", ts[:15], time.Local)
	if err != nil {
		return time.Time{}
	}
	return t
}

// metadataRead is what a summary takes from metadata.json.
type metadataRead struct {
	Question        string   `json:"question"`
	ConfigPath      string   `json:"config_path"`
	Args            []string `json:"args"`
	StartedAt       *string  `json:"started_at"`
	DurationSeconds float64  `json:"duration_seconds"`
	Status          string   `json:"status"`
	ExitCode        *int     `json:"exit_code"`
	Error           string   `json:"error"`
	Winner          *string  `json:"winner"`
	PID             int      `json:"pid"`
	Host            string   `json:"host"`
	Config          struct {
		Agents []struct {
			ID            string `json:"id"`
			SystemMessage string `json:"system_message"`
			Backend       struct {
				Type    string `json:"type"`
				Model   string `json:"model"`
				BaseURL string `json:"base_url"`
			} `json:"backend"`
		} `json:"agents"`
	} `json:"config"`
	Totals struct {
		Usage     tokensJSON `json:"usage"`
		CostUSD   float64    `json:"cost_usd"`
		CostKnown *bool      `json:"cost_known"`
	} `json:"totals"`
}

// statusRead is what a summary takes from status.json while metadata.json is missing.
type statusRead struct {
	Meta struct {
		LastUpdated    float64 `json:"last_updated"`
		Question       string  `json:"question"`
		StartTime      float64 `json:"start_time"`
		ElapsedSeconds float64 `json:"elapsed_seconds"`
		Status         string  `json:"status"`
	} `json:"meta"`
	Results struct {
		Winner   *string `json:"winner"`
		ExitCode *int    `json:"exit_code"`
	} `json:"results"`
	Usage struct {
		tokensJSON
		CostUSD   float64 `json:"cost_usd"`
		CostKnown *bool   `json:"cost_known"`
	} `json:"usage"`
}

// ReadTurnSummary describes the turn folder dir, turn n, from its files (see ReadTurnSummaryFS).
func ReadTurnSummary(dir string, n int, now time.Time) TurnSummary {
	t := ReadTurnSummaryFS(os.DirFS(dir), n, now)
	t.Dir = dir
	return t
}

// ReadTurnSummaryFS describes turn n from the turn folder fsys: metadata.json (written when the
// turn ended), else status.json (while it runs, or after a crash), else events.jsonl alone.
// Dir is left empty. Callers that must not leave a root pass an os.Root's FS.
func ReadTurnSummaryFS(fsys fs.FS, n int, now time.Time) TurnSummary {
	t := TurnSummary{N: n, Status: StatusUnknown}
	var m metadataRead
	if readCappedJSON(fsys, "metadata.json", &m) == nil {
		t.Question, t.ConfigPath, t.Args = m.Question, m.ConfigPath, m.Args
		t.Duration, t.ExitCode, t.Error = m.DurationSeconds, m.ExitCode, m.Error
		t.Status = knownStatus(m.Status)
		if m.StartedAt != nil {
			t.StartedAt, _ = time.Parse(time.RFC3339Nano, *m.StartedAt)
		}
		if m.Winner != nil {
			t.Winner = *m.Winner
		}
		for _, a := range m.Config.Agents {
			t.Team = append(t.Team, TeamAgent{ID: a.ID, Type: a.Backend.Type, Model: a.Backend.Model,
				BaseURL: a.Backend.BaseURL, SystemMessage: a.SystemMessage})
		}
		t.Usage, t.CostUSD, t.CostKnown = m.Totals.Usage.usage(), m.Totals.CostUSD, m.Totals.CostKnown == nil || *m.Totals.CostKnown
		if t.Status != StatusIncomplete {
			return t
		}
		// Written when the session started: it runs, or its process died; status.json says
		// which, and how far it got.
		team, cfgPath, args := t.Team, t.ConfigPath, t.Args
		t = statusSummary(fsys, n, now)
		t.Team, t.ConfigPath, t.Args = team, cfgPath, args
		if t.Status == StatusRunning && m.PID > 0 && gone(m.PID, m.Host) {
			t.Status = StatusIncomplete // its process is not there any more
		}
		return t
	}
	return statusSummary(fsys, n, now)
}

// statusSummary describes turn n from status.json, else events.jsonl alone.
func statusSummary(fsys fs.FS, n int, now time.Time) TurnSummary {
	t := TurnSummary{N: n, Status: StatusUnknown}
	var st statusRead
	if readCappedJSON(fsys, "status.json", &st) == nil {
		t.Question, t.Duration = st.Meta.Question, st.Meta.ElapsedSeconds
		t.Status, t.ExitCode = knownStatus(st.Meta.Status), st.Results.ExitCode
		if st.Meta.StartTime > 0 {
			t.StartedAt = fromUnix(st.Meta.StartTime)
		}
		if st.Results.Winner != nil {
			t.Winner = *st.Results.Winner
		}
		t.Usage, t.CostUSD, t.CostKnown = st.Usage.usage(), st.Usage.CostUSD, st.Usage.CostKnown == nil || *st.Usage.CostKnown
		if t.Status == StatusRunning && now.Sub(fromUnix(st.Meta.LastUpdated)) >= LiveWithin {
			t.Status = StatusIncomplete
		}
		return t
	}
	// Only events.jsonl: the process died before its first status.json, or is writing it right
	// now. Without it either, nothing says what happened.
	f, err := fsys.Open("events.jsonl")
	if err != nil {
		return t
	}
	if start, err := firstEvent(f, "events.jsonl"); err == nil {
		t.Question, t.StartedAt = start.Question, start.Time
	}
	_ = f.Close()
	t.Status = StatusIncomplete
	if recentlyWritten(fsys, now) {
		t.Status = StatusRunning
	}
	return t
}

// recentlyWritten reports whether the turn's events.jsonl was written within LiveWithin of now.
func recentlyWritten(fsys fs.FS, now time.Time) bool {
	info, err := fs.Stat(fsys, "events.jsonl")
	return err == nil && now.Sub(info.ModTime()) < LiveWithin
}

// knownStatus keeps the statuses massgen writes and calls anything else unknown.
func knownStatus(s string) string {
	switch s {
	case event.StatusCompleted, event.StatusTimeout, event.StatusInterrupted, event.StatusFailed,
		StatusRunning, StatusIncomplete:
		return s
	}
	return StatusUnknown
}

func (t tokensJSON) usage() provider.Usage {
	return provider.Usage{InputTokens: t.InputTokens, CachedInputTokens: t.CachedInputTokens,
		CacheWriteTokens: t.CacheWriteTokens, OutputTokens: t.OutputTokens, ReasoningTokens: t.ReasoningTokens,
		Estimated: t.Estimated}
}

func fromUnix(sec float64) time.Time { return time.UnixMicro(int64(sec * 1e6)) }

// readCappedJSON decodes name in fsys into v if it is a regular file of at most maxJSONFile
// bytes.
func readCappedJSON(fsys fs.FS, name string, v any) error {
	f, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := readCappedFile(f, name, maxJSONFile, false)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// readCapped reads the regular file at path. A file larger than limit is an error, or, with
// prefix set, read up to limit.
func readCapped(path string, limit int64, prefix bool) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCappedFile(f, path, limit, prefix)
}

func readCappedFile(f fs.File, path string, limit int64, prefix bool) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if info.Size() > limit && !prefix {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// Started is a turn's opening event: its question and the history it started with.
type Started struct {
	event.SessionStarted
	Time time.Time
}

// FirstEvent reads the session_started event that opens dir/events.jsonl, reading no more than
// its first line (up to event.ReadLimit bytes).
func FirstEvent(dir string) (Started, error) {
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return Started{}, err
	}
	defer f.Close()
	return firstEvent(f, dir+"/events.jsonl")
}

// firstEvent reads the session_started event that opens r, the log at path.
func firstEvent(r io.Reader, path string) (Started, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), event.ReadLimit)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e event.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return Started{}, fmt.Errorf("runlog: %s: first event: %w", path, err)
		}
		p, ok := e.Payload.(event.SessionStarted)
		if !ok {
			return Started{}, fmt.Errorf("runlog: %s opens with %s, not session_started", path, e.Payload.Type())
		}
		return Started{SessionStarted: p, Time: e.Time}, nil
	}
	if err := sc.Err(); err != nil {
		return Started{}, fmt.Errorf("runlog: %s: %w", path, err)
	}
	return Started{}, fmt.Errorf("runlog: %s holds no event", path)
}
