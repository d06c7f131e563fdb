package web

import (
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"massgen/internal/event"
	"massgen/internal/readmodel"
	"massgen/internal/runlog"
)

// Session ids are log_<timestamp>/turn_<n>, the turn folder relative to the log root. Both
// parts are checked (runlog.IsSessionName, IsTurnName) before anything touches the disk, and
// every file is then opened through an os.Root on the log root, which refuses any path
// (symbolic links included) that would leave it.

// summary is one session in the dashboard's list and, with the fold of its log, its detail:
// runlog's turn report and what only the dashboard knows.
type summary struct {
	ID        string `json:"id"`         // log_<ts>/turn_<n>
	SessionID string `json:"session_id"` // log_<ts>
	Team      string `json:"team,omitempty"`
	Running   bool   `json:"running"`
	runlog.TurnReport
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
		for _, n := range slices.Backward(turnNumbers(fsys, l.Name())) {
			if len(out) >= limit {
				return out
			}
			out = append(out, s.summary(root, l.Name()+"/turn_"+strconv.Itoa(n)))
		}
	}
	return out
}

// turnNumbers are the numbers of the turn folders in log folder log, in order.
func turnNumbers(fsys fs.FS, log string) []int {
	turns, _ := fs.ReadDir(fsys, log)
	ns := []int{}
	for _, t := range turns {
		if t.IsDir() && runlog.IsTurnName(t.Name()) {
			n, _ := strconv.Atoi(strings.TrimPrefix(t.Name(), "turn_"))
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}

// summary describes session id from its files alone: the list reads no log (see report).
func (s *Server) summary(root *os.Root, id string) summary { return s.report(root, id, nil) }

// report describes session id: live from memory when it runs here, else from its files (read
// through root, so no link leads out of it) and st, the fold of its log when there is one.
func (s *Server) report(root *os.Root, id string, st *readmodel.State) summary {
	log, turn, _ := strings.Cut(id, "/")
	n, _ := strconv.Atoi(strings.TrimPrefix(turn, "turn_"))
	sum := summary{ID: id, SessionID: log}
	if ss := s.lookup(id); ss != nil {
		events, _ := ss.snapshot()
		st := fold(events)
		sum.Team, sum.Running = ss.team, !st.Ended
		sum.TurnReport = runlog.Report(runlog.TurnSummary{N: n, Status: runlog.StatusRunning, CostKnown: true}, st, s.now())
		sum.CostUSD = math.Round(sum.CostUSD*1e9) / 1e9
		return sum
	}
	t := runlog.TurnSummary{N: n, Status: runlog.StatusUnknown}
	if sub, err := fs.Sub(root.FS(), id); err == nil {
		t = runlog.ReadTurnSummaryFS(sub, n, s.now())
	}
	sum.Team = s.teamOf(t.Args, t.ConfigPath)
	sum.TurnReport = runlog.Report(t, st, s.now())
	sum.Running = sum.Status == runlog.StatusRunning
	return sum
}

// teamOf names the team a finished session ran: the NAME of the "serve --config NAME=FILE"
// this server records in its sessions' args, else the team served from the same config file,
// else the file's name.
func (s *Server) teamOf(args []string, configPath string) string {
	if len(args) == 4 && args[1] == "serve" && args[2] == "--config" {
		if name, _, ok := strings.Cut(args[3], "="); ok {
			return name
		}
	}
	if configPath == "" {
		return ""
	}
	if name, ok := s.teamByPath(configPath); ok {
		return name
	}
	base := filepath.Base(configPath)
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
