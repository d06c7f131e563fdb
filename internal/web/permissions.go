package web

import (
	"encoding/json"
	"errors"
	"net/http"

	"massgen/internal/permission"
)

// maxAnswerBody caps an answer's body: {"decision": "allow"} and little else.
const maxAnswerBody = 1 << 10

// handleAnswer is POST /api/sessions/{log}/{turn}/permissions/{ask_id} with
// {"decision": "allow"|"deny"}: a person answers a permission ask the session published
// (permission_asked). 404 when the session is not running here or the ask is not waiting
// (answered, timed out, never asked), 400 for any other decision.
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	body, ok := readBody(w, r, maxAnswerBody)
	if !ok {
		return
	}
	var in struct {
		Decision string `json:"decision"`
	}
	if err := json.Unmarshal(body, &in); err != nil || (in.Decision != permission.Allow && in.Decision != permission.Deny) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_decision", "decision",
			`send {"decision": "allow"} or {"decision": "deny"}`)
		return
	}
	ss := s.lookup(id)
	if ss == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_running", "", "no session "+id+" is running here")
		return
	}
	askID := r.PathValue("ask_id")
	if err := ss.asks.Answer(askID, in.Decision); err != nil {
		if errors.Is(err, permission.ErrNoAsk) {
			writeError(w, http.StatusNotFound, "invalid_request_error", "ask_not_waiting", "",
				"no permission ask "+clipID(askID)+" is waiting in session "+id+": it was answered, timed out, or never asked")
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_decision", "decision", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "ask_id": askID, "decision": in.Decision})
}

// clipID keeps an unknown ask id short in the error.
func clipID(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// handleReply is POST /api/sessions/{log}/{turn}/questions/{ask_id} with {"text": "..."}: a
// person answers an agent's ask_others question (broadcast_asked with human: true); "" skips
// it. 404 when the session is not running here or the question is not waiting, 400 for a
// body that is not that or an answer over permission.MaxReply.
func (s *Server) handleReply(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	body, ok := readBody(w, r, permission.MaxReply+maxAnswerBody)
	if !ok {
		return
	}
	var in struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Text == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_answer", "text", `send {"text": "your answer"}, or {"text": ""} to skip`)
		return
	}
	ss := s.lookup(id)
	if ss == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_running", "", "no session "+id+" is running here")
		return
	}
	askID := r.PathValue("ask_id")
	if err := ss.asks.Reply(askID, *in.Text); err != nil {
		if errors.Is(err, permission.ErrNoAsk) {
			writeError(w, http.StatusNotFound, "invalid_request_error", "question_not_waiting", "",
				"no question "+clipID(askID)+" is waiting in session "+id+": it was answered, timed out, or never asked")
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_answer", "text", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "ask_id": askID})
}
