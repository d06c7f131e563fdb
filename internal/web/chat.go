package web

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"massgen/internal/app"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// maxChatBody bounds a chat request.
const maxChatBody = 8 << 20

// handleModels lists the teams as models.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	names, _ := s.teamList()
	data := make([]model, 0, len(names))
	for _, n := range names {
		data = append(data, s.model(n))
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", data})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("model")
	if _, ok := s.team(name); !ok {
		s.modelNotFound(w, name)
		return
	}
	writeJSON(w, http.StatusOK, s.model(name))
}

func (s *Server) model(name string) model {
	return model{ID: name, Object: "model", Created: s.created, OwnedBy: "massgen"}
}

func (s *Server) modelNotFound(w http.ResponseWriter, name string) {
	names, _ := s.teamList()
	writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
		fmt.Sprintf("the model %q does not exist: the models are the teams %s", name, strings.Join(names, ", ")))
}

// allowedMethods names the method of each fixed route, for 405 answers.
var allowedMethods = map[string]string{
	"/v1/models": "GET", "/v1/chat/completions": "POST",
	"/api/teams": "GET", "/api/sessions": "GET", "/api/runs": "POST",
}

// handleAPINotFound answers what no /v1 or /api route matched, in OpenAI's error shape.
func (s *Server) handleAPINotFound(w http.ResponseWriter, r *http.Request) {
	if m, ok := allowedMethods[r.URL.Path]; ok {
		w.Header().Set("Allow", m)
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "",
			fmt.Sprintf("%s takes %s, not %s", r.URL.Path, m, r.Method))
		return
	}
	writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "",
		fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
}

// handleChat runs the team named by model on the conversation: the last user message is the
// question, earlier user and assistant messages the history. The client going away cancels
// the session, which still writes its log directory (as interrupted).
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	data, ok := readBody(w, r, maxChatBody)
	if !ok {
		return
	}
	if err := json.Unmarshal(data, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "",
			fmt.Sprintf("the request body is not valid JSON: %v", err))
		return
	}
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_model", "model",
			"model is required: name a team (GET /v1/models lists them)")
		return
	}
	if _, ok := s.team(req.Model); !ok {
		s.modelNotFound(w, req.Model)
		return
	}
	question, history, err := conversation(req.Messages)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_messages", "messages", err.Error())
		return
	}
	ss, err := s.start(r.Context(), run{team: req.Model, question: question, history: history})
	if err != nil {
		startError(w, err)
		return
	}
	if req.Stream {
		s.streamChat(w, r, ss, req)
		return
	}
	select {
	case <-ss.done:
	case <-r.Context().Done():
		return // the session is being cancelled with the request
	}
	res, _ := ss.result()
	events, _ := ss.snapshot()
	if status, code, msg := failure(res); status != 0 {
		s.failed(w, status, code, msg)
		return
	}
	stop := "stop"
	writeJSON(w, http.StatusOK, completion{
		ID: newCompletionID(), Object: "chat.completion", Created: s.now().Unix(), Model: req.Model,
		Choices: []choice{{Message: &answerMessage{Role: "assistant", Content: res.FinalAnswer}, FinishReason: &stop}},
		Usage:   toUsage(sumUsage(events)),
		MassGen: &massgenInfo{Winner: res.Winner, SessionID: res.Session, LogDir: ss.ID(), Status: res.Status},
	})
}

// streamChat sends the final presentation as chat.completion.chunk events while it streams.
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, ss *session, req chatRequest) {
	ctx := r.Context()
	id, created := newCompletionID(), s.now().Unix()
	chunk := func(d *delta, finish *string) completion {
		return completion{ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []choice{{Delta: d, FinishReason: finish}}}
	}
	text := func(t string) completion { return chunk(&delta{Content: &t}, nil) }
	sse := newSSE(w)
	empty := ""
	sse.data(chunk(&delta{Role: "assistant", Content: &empty}, nil))
	sse.flush()
	var streamed strings.Builder
	var total provider.Usage
	for n := 0; ; {
		evs, ended, err := waitEvents(ctx, ss, n, sse)
		if err != nil || ended {
			if err != nil {
				return // the client went away; the session is cancelled with the request
			}
			break
		}
		n += len(evs)
		for _, e := range evs {
			switch p := e.Payload.(type) {
			case event.TextDelta:
				if p.Presentation && p.Text != "" {
					streamed.WriteString(p.Text)
					sse.data(text(p.Text))
				}
			case event.UsageReported:
				total = total.Add(p.Usage)
			case event.FinalAnswer:
				if rest := remainder(streamed.String(), p.Content); rest != "" {
					sse.data(text(rest))
				}
			}
		}
		sse.flush()
	}
	res, _ := ss.result()
	if status, code, msg := failure(res); status != 0 {
		sse.data(map[string]apiError{"error": newAPIError("server_error", code, "", msg)})
		sse.flush()
		return
	}
	stop := "stop"
	sse.data(chunk(&delta{}, &stop))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := chunk(nil, nil)
		u.Choices, u.Usage = []choice{}, toUsage(total)
		sse.data(u)
	}
	sse.write([]byte("data: [DONE]\n\n"))
	sse.flush()
}

// remainder is what a client that got streamed still needs to hold content: nothing when the
// presentation streamed it all (or ended with it, after tool-call rounds), the missing tail,
// or the whole answer after a separator when the final answer is a fallback that was not
// streamed (the presentation failed part-way: the client keeps what it got).
func remainder(streamed, content string) string {
	switch {
	case strings.HasSuffix(streamed, content):
		return ""
	case strings.HasPrefix(content, streamed):
		return content[len(streamed):]
	case strings.TrimSpace(streamed) == "":
		return content
	}
	return "\n\n" + content
}

// failure maps a session that ended without an answer to the HTTP status, error code and
// message it gets; status is 0 when there is an answer to send. A session timeout with an
// answer still answers (the answer is the best so far, as the CLI's exit 3); one without any
// is 504.
func failure(res app.Result) (status int, code, msg string) {
	if res.FinalAnswer != "" && (res.ExitCode == app.ExitOK || res.ExitCode == app.ExitTimeout) {
		return 0, "", ""
	}
	reason := "no answer"
	if res.Err != nil {
		reason = res.Err.Error()
	}
	switch res.ExitCode {
	case app.ExitTimeout:
		return http.StatusGatewayTimeout, "session_timeout", "the session timed out: " + reason
	case app.ExitInterrupted:
		msg := "the session was interrupted"
		if reason != "interrupted" && reason != "no answer" {
			msg += ": " + reason
		}
		return http.StatusServiceUnavailable, "session_interrupted", msg
	}
	return http.StatusInternalServerError, "session_failed", "the session failed: " + reason
}

// failed answers a session that ran and ended without an answer. It ran (and spent tokens):
// a client retrying it would run the whole team again and most likely fail the same way, so
// the answer says not to. Only a session that the server's shutdown interrupted may be tried
// again, once the server is back.
func (s *Server) failed(w http.ResponseWriter, status int, code, msg string) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !(closed && status == http.StatusServiceUnavailable) {
		noRetry(w)
	}
	writeError(w, status, "server_error", code, "", msg)
}

// startError answers a session that could not start. Only a full server invites a retry (after
// Retry-After), and one shutting down: a team that cannot start fails again.
func startError(w http.ResponseWriter, err error) {
	if errors.Is(err, errShuttingDown) {
		writeError(w, http.StatusServiceUnavailable, "server_error", "shutting_down", "", err.Error())
		return
	}
	if errors.As(err, new(busyError)) {
		// OpenAI's own shape for this case; its clients wait Retry-After and try again.
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, "requests", "rate_limit_exceeded", "", err.Error())
		return
	}
	code := "session_failed"
	var ae *app.Error
	if errors.As(err, &ae) && ae.Code == app.ExitConfig {
		code = "team_config_error"
	}
	noRetry(w)
	writeError(w, http.StatusInternalServerError, "server_error", code, "", "the session could not start: "+err.Error())
}

func sumUsage(events []event.Event) provider.Usage {
	var u provider.Usage
	for _, e := range events {
		if p, ok := e.Payload.(event.UsageReported); ok {
			u = u.Add(p.Usage)
		}
	}
	return u
}

func newCompletionID() string { return "chatcmpl-" + rand.Text() }
