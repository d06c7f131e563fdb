package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
)

// steerTeam: quick answers, then deliberates forever; slow never answers.
const steerTeam = `agents:
  - id: quick
    backend: {type: scripted, latency: 0s, answers: ["Paris."], faults: [{kind: hang, call: 2}]}
  - id: slow
    backend: {type: scripted, latency: 0s, answers: ["never"], faults: [{kind: hang}]}
orchestrator:
  final_presentation: verbatim
timeout_settings:
  orchestrator_timeout_seconds: 600
`

func steerEnv(t *testing.T) *env {
	return newEnv(t, func(o *Options) { o.Teams["steer"] = loadTeam(t, "steer", steerTeam) })
}

// waitFor waits until the running session has published an event of type T.
func waitFor[T event.Payload](t *testing.T, ss *session) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		evs, _ := ss.snapshot()
		for _, e := range evs {
			if _, ok := e.Payload.(T); ok {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	var zero T
	t.Fatalf("no %s event after 20 s", zero.Type())
}

func TestSteer_StopAnAgentMessageAndAnswerNow(t *testing.T) {
	e := steerEnv(t)
	run := decode[struct{ ID string }](t, e.post("/api/runs", map[string]string{"team": "steer", "question": "Capital of France?"}))
	ss := e.waitRunning(1)[0]
	base := "/api/sessions/" + run.ID
	waitFor[event.AnswerSubmitted](t, ss)

	if r := e.post(base+"/messages", map[string]string{"text": "Say it plainly."}); r.status != http.StatusAccepted {
		t.Fatalf("message: %d %s", r.status, r.body)
	}
	wantError(t, e.post(base+"/messages", map[string]string{"text": "  "}), http.StatusBadRequest, "steering_refused")
	wantError(t, e.post(base+"/messages", map[string]string{"text": strings.Repeat("x", maxSteerBody)}), http.StatusRequestEntityTooLarge, "request_too_large")
	wantError(t, e.do(t.Context(), http.MethodPost, base+"/messages", `{"text":"hi"}`, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, "unsupported_media_type")
	wantError(t, e.post(base+"/messages", map[string]string{"text": "hi"}, "Origin", "https://evil.example"), http.StatusForbidden, "cross_origin")

	if r := e.post(base+"/agents/slow/stop", nil); r.status != http.StatusAccepted {
		t.Fatalf("stop agent: %d %s", r.status, r.body)
	}
	wantError(t, e.post(base+"/agents/slow/stop", nil), http.StatusBadRequest, "steering_refused")
	wantError(t, e.post(base+"/agents/nobody/stop", nil), http.StatusBadRequest, "steering_refused")
	wantError(t, e.post(base+"/followup", map[string]string{"question": "And Germany?"}), http.StatusConflict, "turn_running")

	if r := e.post(base+"/answer-now", nil); r.status != http.StatusAccepted {
		t.Fatalf("answer now: %d %s", r.status, r.body)
	}
	e.waitIdle()
	evs := e.turnEvents(run.ID)
	end := lastEnd(t, evs)
	if end.ExitCode != 0 || end.Status != event.StatusCompleted {
		t.Errorf("session ended %+v", end)
	}
	var dead, ended, final bool
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case event.AgentDead:
			dead = p.Agent == "slow" && strings.Contains(p.Reason, "stopped")
		case event.CoordinationEnded:
			ended = p.Reason == event.EndAnswerNow && p.Winner == "quick"
		case event.FinalAnswer:
			final = p.Content == "Paris."
		}
	}
	if !dead || !ended || !final {
		t.Errorf("stopped agent %v, answer-now end %v, final answer %v", dead, ended, final)
	}
	for _, p := range []string{"/messages", "/answer-now", "/agents/quick/stop"} {
		wantError(t, e.post(base+p, map[string]string{"text": "late"}), http.StatusNotFound, "not_running")
	}
}

func TestSteer_FollowUpContinuesTheSession(t *testing.T) {
	e := newEnv(t, nil)
	first := decode[completionResp](t, e.post("/v1/chat/completions", chatBody("demo", false, "user", "What is the capital of France?")))
	e.waitIdle()
	id := first.MassGen.LogDir
	wantError(t, e.post("/api/sessions/"+id+"/followup", map[string]string{"question": " "}), http.StatusBadRequest, "missing_question")
	wantError(t, e.post("/api/sessions/log_20200101_000000/turn_1/followup", map[string]string{"question": "x"}), http.StatusNotFound, "session_not_found")
	wantError(t, e.post("/api/sessions/"+id+"/followup", map[string]string{"question": "x", "team": "nosuch"}), http.StatusConflict, "team_not_served")
	r := e.post("/api/sessions/"+id+"/followup", map[string]string{"question": "And its population?"})
	if r.status != http.StatusAccepted {
		t.Fatalf("follow-up: %d %s", r.status, r.body)
	}
	next := decode[struct{ ID, Team string }](t, r)
	if next.ID != first.MassGen.SessionID+"/turn_2" || next.Team != "demo" {
		t.Fatalf("follow-up %+v, want turn 2 of %s", next, first.MassGen.SessionID)
	}
	e.waitIdle()
	evs := e.turnEvents(next.ID)
	st, ok := evs[0].Payload.(event.SessionStarted)
	if !ok || st.Turn != 2 || st.Question != "And its population?" || len(st.History) != 2 ||
		st.History[0].Content != "What is the capital of France?" || st.History[1].Content != first.Choices[0].Message.Content {
		t.Errorf("turn 2 started with %+v", evs[0].Payload)
	}
	if lastEnd(t, evs).ExitCode != 0 {
		t.Error("turn 2 failed")
	}
}

// filesTeam reads notes.txt and writes it back with one more line: the file grows by a line
// per turn only when each turn starts from the previous winner's workspace.
const filesTeam = `
agents:
  - id: a
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: read_file, args: {path: notes.txt}}
        - {name: write_file, args: {path: notes.txt, content: "{{result}}|turn"}}
      answers: ["noted"]
orchestrator: {final_presentation: verbatim}
`

// A follow-up from the page starts from the previous winner's workspace, as massgen
// --continue does; before, each turn started from empty workspaces.
func TestSteer_FollowUpStartsFromTheWinnersWorkspace(t *testing.T) {
	wsRoot := t.TempDir()
	e := newEnv(t, func(o *Options) {
		o.Teams["files"] = loadTeam(t, "files", filesTeam)
		o.Run = func(ctx context.Context, cfg *config.Config, ao app.Options) (app.Result, error) {
			ao.WorkspaceRoot = wsRoot
			return app.Run(ctx, cfg, ao)
		}
	})
	first := decode[completionResp](t, e.post("/v1/chat/completions", chatBody("files", false, "user", "Take notes.")))
	e.waitIdle()
	r := e.post("/api/sessions/"+first.MassGen.LogDir+"/followup", map[string]string{"question": "More notes."})
	if r.status != http.StatusAccepted {
		t.Fatalf("follow-up: %d %s", r.status, r.body)
	}
	next := decode[struct{ ID string }](t, r)
	e.waitIdle()
	got, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(next.ID), "final", "a", "workspace", "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(got), "|turn"); n != 2 {
		t.Errorf("turn 2's notes.txt = %q: %d turns, want 2 (turn 2 did not start from turn 1's workspace)", got, n)
	}
}
