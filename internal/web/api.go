package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

// The dashboard's JSON API. Errors use the same {"error": {...}} shape as the chat API.

const (
	maxRunBody   = 1 << 20
	defaultLimit = 100
	maxLimit     = 1000
	tailEvery    = 250 * time.Millisecond
	// liveWithin: a session not running here whose status.json or events.jsonl changed this
	// recently is followed as live (a recorder rewrites status.json every 2 s).
	liveWithin = 10 * time.Second
)

type teamInfo struct {
	Name   string      `json:"name"`
	Agents []agentInfo `json:"agents"`
}

type agentInfo struct {
	ID      string `json:"id"`
	Backend string `json:"backend"`
	Model   string `json:"model,omitempty"`
}

// handleTeams lists the teams and their agents: ids, backend types and models, nothing else
// from the configs.
func (s *Server) handleTeams(w http.ResponseWriter, r *http.Request) {
	names, cfgs := s.teamList()
	teams := make([]teamInfo, 0, len(names))
	for k, n := range names {
		t := teamInfo{Name: n, Agents: []agentInfo{}}
		for _, a := range cfgs[k].Agents {
			t.Agents = append(t.Agents, agentInfo{ID: a.ID, Backend: a.Backend.Type, Model: a.Backend.Model})
		}
		teams = append(teams, t)
	}
	writeJSON(w, http.StatusOK, map[string]any{"version": s.version, "auth": s.token != "", "teams": teams})
}

// handleSessions lists the sessions in the log root, newest first (?limit=, default 100).
func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request) {
	limit := defaultLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_limit", "limit",
				fmt.Sprintf("limit must be a number from 1 to %d", maxLimit))
			return
		}
		limit = n
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": s.listSessions(limit)})
}

// sessionDetail is a session's report. Notice says why a session that is not running has no
// end in its log (its process died). Turns are the numbers of the turns its log folder holds
// (follow-ups continue a session in turn_2, turn_3, ...), so its page links them all.
type sessionDetail struct {
	summary
	Notice string `json:"notice,omitempty"`
	Turns  []int  `json:"turns"`
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	root, err := s.openRoot()
	if err != nil {
		notFound(w, id)
		return
	}
	defer root.Close()
	var st *readmodel.State // nil for a session running here: report folds what it holds
	notice := ""
	if s.lookup(id) == nil {
		t, err := readLog(root, id)
		info, serr := root.Stat(id)
		switch {
		case err == nil:
			st, notice = t.State, t.Incomplete
		case !errors.Is(err, fs.ErrNotExist) || serr != nil || !info.IsDir():
			notFound(w, id)
			return
		default:
			// The turn folder exists without a log: its process died as it started. The
			// files that are there still describe it.
			notice = "session did not finish: it has no events.jsonl; the process may have died as it started"
		}
	}
	log, _, _ := strings.Cut(id, "/")
	d := sessionDetail{summary: s.report(root, id, st), Turns: turnNumbers(root.FS(), log)}
	if notice != "" && !d.Running {
		d.Notice = notice
		switch d.Status {
		case "running", "unknown":
			d.Status = "incomplete"
		}
	}
	writeJSON(w, http.StatusOK, d)
}

// handleEvents sends a session's events as JSON lines, the events.jsonl format: the events so
// far for a session running here, else the file.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	sw := newStallWriter(w) // a log may be large, and the client may stop reading it
	if ss := s.lookup(id); ss != nil {
		events, _ := ss.snapshot()
		bw := bufio.NewWriter(sw)
		enc := json.NewEncoder(bw)
		for _, e := range events {
			if enc.Encode(e) != nil {
				return
			}
		}
		_ = bw.Flush()
		return
	}
	f, err := s.openEvents(id)
	if err != nil {
		notFound(w, id)
		return
	}
	defer f.Close()
	_, _ = io.Copy(sw, f)
}

// handleStream sends a session's events as server-sent events (id: seq, data: the event
// envelope), from the first one (or after Last-Event-ID), then the live ones until it ends,
// then an "end" event. A session running here streams from memory; any other is read from its
// events.jsonl, followed while its status.json shows a live recorder (another instance).
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	if ss := s.lookup(id); ss != nil {
		s.streamLive(r.Context(), newSSE(w), ss, after)
		return
	}
	root, err := s.openRoot()
	if err != nil {
		notFound(w, id)
		return
	}
	defer root.Close()
	f, err := root.Open(id + "/events.jsonl")
	if err != nil {
		notFound(w, id)
		return
	}
	defer f.Close()
	tailEvents(r.Context(), newSSE(w), f, after, func() bool {
		for _, name := range []string{"/status.json", "/events.jsonl"} {
			if info, err := root.Stat(id + name); err == nil && time.Since(info.ModTime()) < liveWithin {
				return true
			}
		}
		return false
	})
}

func (s *Server) streamLive(ctx context.Context, sse *sseWriter, ss *session, after int64) {
	n := ss.indexAfter(after)
	for {
		evs, ended, err := waitEvents(ctx, ss, n, sse)
		if err != nil {
			return
		}
		if ended {
			res, _ := ss.result()
			endStream(sse, res.Status)
			return
		}
		n += len(evs)
		for _, e := range evs {
			b, err := json.Marshal(e)
			if err != nil {
				continue
			}
			sse.message(e.Seq, "", b)
		}
		sse.flush()
		if sse.err != nil {
			return
		}
	}
}

func endStream(sse *sseWriter, status string) {
	if status == "" {
		status = "incomplete"
	}
	b, _ := json.Marshal(map[string]string{"status": status})
	sse.message(0, "end", b)
	sse.flush()
}

// tailEvents streams an events.jsonl file: every complete line after seq after, then the
// lines appended while live() says a recorder still writes it, until session_ended, and ends
// the stream.
func tailEvents(ctx context.Context, sse *sseWriter, f io.Reader, after int64, live func() bool) {
	br := bufio.NewReaderSize(f, 64<<10)
	var pending []byte
	for {
		line, err := br.ReadBytes('\n')
		if err == nil {
			line = append(pending, line...)
			pending = nil
			var head struct {
				Seq  int64           `json:"seq"`
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			}
			line = []byte(strings.TrimRight(string(line), "\r\n"))
			if json.Unmarshal(line, &head) != nil || head.Seq <= after {
				continue
			}
			sse.message(head.Seq, "", line)
			if head.Type == (event.SessionEnded{}).Type() {
				var end event.SessionEnded
				_ = json.Unmarshal(head.Data, &end)
				endStream(sse, end.Status)
				return
			}
			continue
		}
		pending = append(pending, line...)
		sse.flush()
		if !errors.Is(err, io.EOF) || sse.err != nil || !live() {
			endStream(sse, "")
			return
		}
		t := time.NewTimer(tailEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// handleStartRun starts a session from the dashboard: {"team": ..., "question": ...}. It
// answers 202 with the session id once the session has started; the session runs until it
// ends, the server shuts down, or POST .../cancel.
func (s *Server) handleStartRun(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "invalid_request_error", "unsupported_media_type", "",
			"send the run as application/json")
		return
	}
	var body struct {
		Team     string `json:"team"`
		Question string `json:"question"`
	}
	data, ok := readBody(w, r, maxRunBody)
	if !ok {
		return
	}
	if err := json.Unmarshal(data, &body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "",
			fmt.Sprintf("the request body is not valid JSON: %v", err))
		return
	}
	if _, ok := s.team(body.Team); !ok {
		s.modelNotFound(w, body.Team)
		return
	}
	if strings.TrimSpace(body.Question) == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_question", "question", "the question is empty")
		return
	}
	// A dashboard run outlives the request that started it.
	ss, err := s.start(context.Background(), run{team: body.Team, question: body.Question})
	if err != nil {
		startError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": ss.ID(), "team": body.Team})
}

// handleCancel interrupts a session running here; it still writes its log directory.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	ss := s.lookup(id)
	if ss == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_running", "", "no session "+id+" is running here")
		return
	}
	ss.cancel()
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id, "status": "cancelling"})
}

func notFound(w http.ResponseWriter, id string) {
	writeError(w, http.StatusNotFound, "invalid_request_error", "session_not_found", "", "no session "+id)
}
