package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/event"
)

const askTeam = `
agents:
  - id: a
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      permissions:
        automation_default: deny-all
        rules: {ask: ["command(echo *)"]}
      tool_calls:
        - {name: execute_command, args: {command: "echo approved"}}
        - {name: write_file, args: {path: result.txt, content: "{{result}}"}}
      answers: ["done"]
orchestrator: {final_presentation: verbatim}
`

// TestAPI_AnswerPermissionAsk: the dashboard answers a permission ask of a running session
// with POST /api/sessions/{log}/{turn}/permissions/{ask_id}; the call then runs, and the
// ledger says a person decided.
func TestAPI_AnswerPermissionAsk(t *testing.T) {
	t.Chdir(t.TempDir()) // the agent's workspace goes under .massgen/workspaces of the current folder
	e := newEnv(t, func(o *Options) { o.Teams["ask"] = loadTeam(t, "ask", askTeam) })
	id, asked := runUntil[event.PermissionAsked](t, e, "ask", "Say it.")
	if asked.Action != "command" || asked.Target != "echo approved" || asked.Rule != "command(echo *)" {
		t.Errorf("asked %+v", asked)
	}
	path := "/api/sessions/" + id + "/permissions/"
	wantError(t, e.post(path+asked.ID, map[string]string{"decision": "maybe"}), http.StatusBadRequest, "invalid_decision")
	wantError(t, e.post(path+"ask_999", map[string]string{"decision": "allow"}), http.StatusNotFound, "ask_not_waiting")
	wantError(t, e.post("/api/sessions/log_20200101_000000_000000/turn_1/permissions/"+asked.ID, map[string]string{"decision": "allow"}),
		http.StatusNotFound, "not_running")
	if r := e.post(path+asked.ID, map[string]string{"decision": "allow"}); r.status != http.StatusOK {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	wantError(t, e.post(path+asked.ID, map[string]string{"decision": "deny"}), http.StatusNotFound, "ask_not_waiting")
	e.waitIdle()
	var decided *event.PermissionDecided
	for _, ev := range e.turnEvents(id) {
		if p, ok := ev.Payload.(event.PermissionDecided); ok && p.ID == asked.ID {
			decided = &p
		}
	}
	if decided == nil || decided.Decision != "allow" || decided.By != "person" {
		t.Errorf("decided %+v", decided)
	}
	got, _ := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(id), "final", "a", "workspace", "result.txt"))
	if !strings.Contains(string(got), "approved") {
		t.Errorf("the approved command's result = %q", got)
	}
}

const questionTeam = `
agents:
  - id: a
    backend:
      type: scripted
      tool_calls: [{name: ask_others, args: {question: "Which colour?"}}]
      answers: ["done"]
  - id: b
    backend: {type: scripted, answers: ["also done"]}
orchestrator:
  final_presentation: verbatim
  coordination: {broadcast: human}
`

// TestAPI_AnswerQuestion: the dashboard answers an agent's ask_others question (broadcast:
// human) with POST /api/sessions/{log}/{turn}/questions/{ask_id}; the agent reads the answer.
func TestAPI_AnswerQuestion(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Teams["q"] = loadTeam(t, "q", questionTeam) })
	id, asked := runUntil[event.BroadcastAsked](t, e, "q", "Paint it.")
	path := "/api/sessions/" + id + "/questions/"
	wantError(t, e.post(path+asked.ID, map[string]string{"answer": "Blue"}), http.StatusBadRequest, "invalid_answer")
	wantError(t, e.post(path+asked.ID, map[string]string{"text": strings.Repeat("x", 16<<10+1)}), http.StatusBadRequest, "invalid_answer")
	wantError(t, e.post(path+"bc_99", map[string]string{"text": "Blue"}), http.StatusNotFound, "question_not_waiting")
	// A permission decision is not an answer, nor the other way round.
	wantError(t, e.post("/api/sessions/"+id+"/permissions/"+asked.ID, map[string]string{"decision": "allow"}), http.StatusBadRequest, "invalid_decision")
	if r := e.post(path+asked.ID, map[string]string{"text": "Blue"}); r.status != http.StatusOK {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	e.waitIdle()
	var answered []event.BroadcastAnswered
	for _, ev := range e.turnEvents(id) {
		if p, ok := ev.Payload.(event.BroadcastAnswered); ok {
			answered = append(answered, p)
		}
	}
	if len(answered) != 1 || answered[0].Content != "Blue" || answered[0].Responder != event.ResponderHuman {
		t.Errorf("answered %+v", answered)
	}
}

// runUntil starts team on question through the API and waits for the session's first event
// with a P payload, which it returns with the session's id.
func runUntil[P event.Payload](t *testing.T, e *env, team, question string) (string, P) {
	t.Helper()
	r := e.post("/api/runs", map[string]string{"team": team, "question": question})
	if r.status != http.StatusAccepted {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	id := decode[map[string]string](t, r)["id"]
	ss := e.srv.lookup(id)
	if ss == nil {
		t.Fatal("not running")
	}
	for n := 0; ; {
		evs, ended, err := ss.next(t.Context(), n)
		if err != nil || ended {
			var none P
			t.Fatalf("the session ended without a %s event (%v)", none.Type(), err)
		}
		n += len(evs)
		for _, ev := range evs {
			if p, ok := ev.Payload.(P); ok {
				return id, p
			}
		}
	}
}
