package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"massgen/internal/engine"
	"massgen/internal/runlog"
)

// Steering a session running here from the dashboard: stop one agent, Answer Now, a message to
// the agents (engine.Steering), and the follow-up turn of a finished session.

const maxSteerBody = 64 << 10

// steerable returns the session id names when it runs here; on failure it has answered.
func (s *Server) steerable(w http.ResponseWriter, r *http.Request) (*session, bool) {
	id, ok := sessionParam(w, r)
	if !ok {
		return nil, false
	}
	ss := s.lookup(id)
	if ss == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_running", "", "no session "+id+" is running here")
		return nil, false
	}
	return ss, true
}

// steerError answers what a Steering method returned.
func steerError(w http.ResponseWriter, err error) {
	if errors.Is(err, engine.ErrNotRunning) {
		writeError(w, http.StatusConflict, "invalid_request_error", "not_coordinating", "",
			"the agents are no longer coordinating: the session is presenting its answer or has ended")
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", "steering_refused", "", err.Error())
}

// handleStopAgent takes one agent out of a running session.
func (s *Server) handleStopAgent(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.steerable(w, r)
	if !ok {
		return
	}
	agent := r.PathValue("agent")
	if err := ss.steer.StopAgent(agent); err != nil {
		steerError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"agent": agent, "status": "stopped"})
}

// handleAnswerNow ends coordination; the best answer so far is presented.
func (s *Server) handleAnswerNow(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.steerable(w, r)
	if !ok {
		return
	}
	if err := ss.steer.AnswerNow(); err != nil {
		steerError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "presenting"})
}

// readJSON reads a JSON body of at most limit bytes into v; on failure it has answered.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "invalid_request_error", "unsupported_media_type", "",
			"send the request as application/json")
		return false
	}
	data, ok := readBody(w, r, limit)
	if !ok {
		return false
	}
	if err := json.Unmarshal(data, v); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "",
			fmt.Sprintf("the request body is not valid JSON: %v", err))
		return false
	}
	return true
}

// handleMessage queues {"text"} for every live agent (MassGen's human input queue).
func (s *Server) handleMessage(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.steerable(w, r)
	if !ok {
		return
	}
	var body struct {
		Text string `json:"text"`
	}
	if !readJSON(w, r, maxSteerBody, &body) {
		return
	}
	if err := ss.steer.Send(body.Text); err != nil {
		steerError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "queued"})
}

// handleFollowUp starts the next turn of a session that has ended, in the same log folder,
// carrying its conversation: {"question"}. It answers 202 {"id"} of the new turn.
func (s *Server) handleFollowUp(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	var body struct {
		Question string `json:"question"`
		Team     string `json:"team"`
	}
	if !readJSON(w, r, maxRunBody, &body) {
		return
	}
	if strings.TrimSpace(body.Question) == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_question", "question", "the question is empty")
		return
	}
	logID, _, _ := strings.Cut(id, "/")
	for _, ss := range s.runningSessions() {
		if strings.HasPrefix(ss.ID(), logID+"/") {
			writeError(w, http.StatusConflict, "invalid_request_error", "turn_running", "",
				"a turn of this session is still running: wait for it to end, or stop it")
			return
		}
	}
	sess, err := runlog.ReadSession(s.logRoot, logID, time.Now())
	if err != nil {
		notFound(w, id)
		return
	}
	cont, err := runlog.Continue(sess)
	if err != nil {
		writeError(w, http.StatusConflict, "invalid_request_error", "cannot_continue", "", err.Error())
		return
	}
	team := body.Team
	if team == "" {
		root, err := s.openRoot()
		if err != nil {
			notFound(w, id)
			return
		}
		team = s.summary(root, id).Team
		root.Close()
	}
	if _, ok := s.team(team); !ok {
		writeError(w, http.StatusConflict, "invalid_request_error", "team_not_served", "team",
			fmt.Sprintf("this session ran team %q, which this server does not serve: name a team to continue with", team))
		return
	}
	ss, err := s.start(context.Background(), run{team: team, question: body.Question, history: cont.History,
		logSession: logID, turn: cont.NextTurn, workspace: cont.Workspace})
	if err != nil {
		startError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": ss.ID(), "team": team})
}
