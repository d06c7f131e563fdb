package web

import (
	"encoding/json"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/readmodel"
	"massgen/internal/runlog"
)

// Session ids are log_<timestamp>/turn_<n>, the turn folder relative to the log root. Both
// parts are checked (runlog.IsSessionName, IsTurnName) before anything touches the disk, and
// every file is then opened through an os.Root on the log root, which refuses any path
// (symbolic links included) that would leave it.

// summary is one session in the dashboard's list.
type summary struct {
	ID              string     `json:"id"`         // log_<ts>/turn_<n>
	SessionID       string     `json:"session_id"` // log_<ts>
	Turn            int        `json:"turn"`
	Team            string     `json:"team,omitempty"`
	Question        string     `json:"question"`
	Status          string     `json:"status"` // running, completed, timeout, interrupted, failed, incomplete or unknown
	Running         bool       `json:"running"`
	Winner          string     `json:"winner,omitempty"`
	StartedAt       *time.Time `json:"started_at,omitempty"`
	DurationSeconds float64    `json:"duration_seconds"`
	ExitCode        *int       `json:"exit_code,omitempty"`
	Error           string     `json:"error,omitempty"`
	Tokens          tokenCount `json:"tokens"`
	CostUSD         float64    `json:"cost_usd"`
	// CostKnown is false when part of the cost is unknown (logs written before it was
	// recorded count as known): the list then says "unknown", never $0.
	CostKnown bool `json:"cost_known"`
}

type tokenCount struct {
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	Output      int64 `json:"output"`
	Reasoning   int64 `json:"reasoning"`
	Total       int64 `json:"total"`
	// Estimated: some calls were cut off before their usage was reported (see engine).
	Estimated bool `json:"estimated,omitempty"`
}

type fileTokens struct {
	Input     int64 `json:"input_tokens"`
	Cached    int64 `json:"cached_input_tokens"`
	Output    int64 `json:"output_tokens"`
	Reasoning int64 `json:"reasoning_tokens"`
	Estimated bool  `json:"estimated"`
}

func (t fileTokens) count() tokenCount {
	return tokenCount{Input: t.Input, CachedInput: t.Cached, Output: t.Output, Reasoning: t.Reasoning, Total: t.Input + t.Output, Estimated: t.Estimated}
}

// metadataFile is what the list reads from metadata.json.
type metadataFile struct {
	Question        string     `json:"question"`
	ConfigPath      string     `json:"config_path"`
	Args            []string   `json:"args"`
	StartedAt       *time.Time `json:"started_at"`
	DurationSeconds float64    `json:"duration_seconds"`
	Status          string     `json:"status"`
	ExitCode        *int       `json:"exit_code"`
	Error           string     `json:"error"`
	Winner          *string    `json:"winner"`
	Totals          struct {
		Usage     fileTokens `json:"usage"`
		CostUSD   float64    `json:"cost_usd"`
		CostKnown *bool      `json:"cost_known"`
	} `json:"totals"`
}

// statusFile is what the list reads from status.json while there is no metadata.json yet.
type statusFile struct {
	Meta struct {
		LastUpdated    float64 `json:"last_updated"`
		Question       string  `json:"question"`
		StartTime      float64 `json:"start_time"`
		ElapsedSeconds float64 `json:"elapsed_seconds"`
		Status         string  `json:"status"`
	} `json:"meta"`
	Results struct {
		Winner *string `json:"winner"`
	} `json:"results"`
	Usage struct {
		fileTokens
		CostUSD   float64 `json:"cost_usd"`
		CostKnown *bool   `json:"cost_known"`
	} `json:"usage"`
}

// sessionParam reads and checks the {log}/{turn} path values; on failure it has answered 400.
func sessionParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	log, turn := r.PathValue("log"), r.PathValue("turn")
	if !runlog.IsSessionName(log) || !runlog.IsTurnName(turn) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_session_id", "",
			"invalid session id: want log_<timestamp>/turn_<n>")
		return "", false
	}
	return log + "/" + turn, true
}

// openRoot opens the log root; the error wraps fs.ErrNotExist before the first session.
func (s *Server) openRoot() (*os.Root, error) { return os.OpenRoot(s.logRoot) }

// openEvents opens session id's events.jsonl through the log root, so no path can leave it.
func (s *Server) openEvents(id string) (*os.File, error) {
	root, err := s.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Open(id + "/events.jsonl")
}

// listSessions returns up to limit sessions, newest first, from the log root. Files that are
// missing, half-written or unreadable make a sparser entry, never an error.
func (s *Server) listSessions(limit int) []summary {
	out := []summary{}
	root, err := s.openRoot()
	if err != nil {
		return out
	}
	defer root.Close()
	fsys := root.FS()
	logs, _ := fs.ReadDir(fsys, ".")
	slices.Reverse(logs) // newest first: the names are timestamps
	for _, l := range logs {
		if !l.IsDir() || !runlog.IsSessionName(l.Name()) {
			continue
		}
		turns, _ := fs.ReadDir(fsys, l.Name())
		var ns []int
		for _, t := range turns {
			if t.IsDir() && runlog.IsTurnName(t.Name()) {
				n, _ := strconv.Atoi(strings.TrimPrefix(t.Name(), "turn_"))
				ns = append(ns, n)
			}
		}
		slices.Sort(ns)
		for _, n := range slices.Backward(ns) {
			if len(out) >= limit {
				return out
			}
			out = append(out, s.summary(root, l.Name()+"/turn_"+strconv.Itoa(n)))
		}
	}
	return out
}

// summary describes session id: live from memory when it runs here, else from its files.
func (s *Server) summary(root *os.Root, id string) summary {
	if ss := s.lookup(id); ss != nil {
		events, _ := ss.snapshot()
		return s.stateSummary(id, ss.team, fold(events))
	}
	log, turn, _ := strings.Cut(id, "/")
	n, _ := strconv.Atoi(strings.TrimPrefix(turn, "turn_"))
	sum := summary{ID: id, SessionID: log, Turn: n, Status: "unknown"}
	var m metadataFile
	if b, err := root.ReadFile(id + "/metadata.json"); err == nil && json.Unmarshal(b, &m) == nil {
		sum.Team = s.teamOf(m)
		sum.Question, sum.Status, sum.StartedAt = m.Question, m.Status, m.StartedAt
		sum.DurationSeconds, sum.ExitCode, sum.Error = m.DurationSeconds, m.ExitCode, m.Error
		if m.Winner != nil {
			sum.Winner = *m.Winner
		}
		sum.Tokens, sum.CostUSD, sum.CostKnown = m.Totals.Usage.count(), m.Totals.CostUSD, known(m.Totals.CostKnown)
		return sum
	}
	var st statusFile
	if b, err := root.ReadFile(id + "/status.json"); err == nil && json.Unmarshal(b, &st) == nil {
		sum.Question, sum.Status = st.Meta.Question, st.Meta.Status
		sum.DurationSeconds = st.Meta.ElapsedSeconds
		if st.Meta.StartTime > 0 {
			t := unixTime(st.Meta.StartTime)
			sum.StartedAt = &t
		}
		if st.Results.Winner != nil {
			sum.Winner = *st.Results.Winner
		}
		sum.Tokens, sum.CostUSD, sum.CostKnown = st.Usage.count(), st.Usage.CostUSD, known(st.Usage.CostKnown)
		// Running elsewhere (another instance on the same volume) or abandoned by a crash.
		sum.Running = sum.Status == "running" && time.Since(unixTime(st.Meta.LastUpdated)) < liveWithin
		if sum.Status == "running" && !sum.Running {
			sum.Status = "incomplete"
		}
		return sum
	}
	// Only events.jsonl: the process died before its first status.json, or is writing it.
	if info, err := root.Stat(id + "/events.jsonl"); err == nil {
		sum.Running = time.Since(info.ModTime()) < liveWithin
		sum.Status = "incomplete"
		if sum.Running {
			sum.Status = "running"
		}
	}
	return sum
}

// known reads a cost_known field; files written before it existed count as known.
func known(b *bool) bool { return b == nil || *b }

// stateSummary describes a session from its folded events.
func (s *Server) stateSummary(id, team string, st *readmodel.State) summary {
	log, _, _ := strings.Cut(id, "/")
	sum := summary{ID: id, SessionID: log, Turn: st.Turn, Team: team, Question: st.Question, Status: "running",
		Running: !st.Ended, Winner: st.Winner, CostUSD: math.Round(st.Totals.CostUSD*1e9) / 1e9, CostKnown: st.CostKnown()}
	u := st.Totals.Usage
	sum.Tokens = tokenCount{Input: u.InputTokens, CachedInput: u.CachedInputTokens, Output: u.OutputTokens,
		Reasoning: u.ReasoningTokens, Total: u.InputTokens + u.OutputTokens}
	if !st.StartTime.IsZero() {
		start := st.StartTime
		sum.StartedAt = &start
		end := s.now()
		if st.Ended {
			end = st.EndTime
		}
		sum.DurationSeconds = max(0, end.Sub(start).Seconds())
	}
	if st.Ended {
		code := st.ExitCode
		sum.Status, sum.ExitCode, sum.Error = st.SessionStatus, &code, st.SessionError
	}
	return sum
}

// teamOf names the team a finished session ran: the NAME of the "serve --config NAME=FILE"
// this server records in its sessions' args, else the team served from the same config file,
// else the file's name.
func (s *Server) teamOf(m metadataFile) string {
	if len(m.Args) == 4 && m.Args[1] == "serve" && m.Args[2] == "--config" {
		if name, _, ok := strings.Cut(m.Args[3], "="); ok {
			return name
		}
	}
	if m.ConfigPath == "" {
		return ""
	}
	if name, ok := s.teamByPath(m.ConfigPath); ok {
		return name
	}
	base := filepath.Base(m.ConfigPath)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// readLog reads session id's events.jsonl through root. A log without session_ended (its
// process died) comes back with Incomplete set.
func readLog(root *os.Root, id string) (*runlog.Turn, error) {
	f, err := root.Open(id + "/events.jsonl")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return runlog.ReadLog(f)
}

func fold(events []event.Event) *readmodel.State {
	st := readmodel.NewState()
	for _, e := range events {
		st.Apply(e)
	}
	return st
}

func unixTime(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(frac*1e9))
}
