package web

import (
	"errors"
	"net/http"
	"regexp"
	"testing"

	"massgen/internal/app"
	"massgen/internal/engine"
	"massgen/internal/testio"
)

// The person running serve sees each session start and end, with where its log is, how it
// ended and what it cost, never the client's question.
func TestServer_LogsEachSession(t *testing.T) {
	var log testio.Buffer
	e := newEnv(t, func(o *Options) { o.Log = &log })
	e.post("/v1/chat/completions", chatBody("demo", false, "user", "A private question?"))
	e.waitIdle()
	got := log.String()
	for _, want := range []string{
		`(?m)^session log_\d{8}_\d{6}_\d+/turn_1 \(team demo\): started$`,
		`(?m)^session log_\d{8}_\d{6}_\d+/turn_1 \(team demo\): completed \(exit 0\) in \d+\.\ds, winner \w+, cost \$\d+\.\d{4}$`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("the log lacks %s:\n%s", want, got)
		}
	}
	if regexp.MustCompile("private question").MatchString(got) {
		t.Errorf("the log shows the client's question:\n%s", got)
	}
}

// A failed session's message says why once: "interrupted" is not repeated after "the session
// was interrupted", and each agent's reason reaches the client.
func TestFailure_Messages(t *testing.T) {
	for _, tc := range []struct {
		res    app.Result
		status int
		msg    string
	}{
		{app.Result{Result: engine.Result{ExitCode: app.ExitInterrupted, Err: errors.New("interrupted")}}, http.StatusServiceUnavailable,
			"the session was interrupted"},
		{app.Result{Result: engine.Result{ExitCode: app.ExitExecution, Err: errors.New("every agent failed: a: retrying cannot help: the API key was rejected")}},
			http.StatusInternalServerError, "the session failed: every agent failed: a: retrying cannot help: the API key was rejected"},
		{app.Result{Result: engine.Result{ExitCode: app.ExitTimeout}}, http.StatusGatewayTimeout, "the session timed out: no answer"},
	} {
		status, _, msg := failure(tc.res)
		if status != tc.status || msg != tc.msg {
			t.Errorf("failure(%+v) = %d %q, want %d %q", tc.res, status, msg, tc.status, tc.msg)
		}
	}
}
