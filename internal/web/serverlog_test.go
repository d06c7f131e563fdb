package web

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"massgen/internal/app"
	"massgen/internal/engine"
	"massgen/internal/provider"
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

// The end line never shows an unknown cost as $0.0000 (new-user review, minor 1).
func TestLineLog_Cost(t *testing.T) {
	for _, tc := range []struct {
		res  engine.Result
		want string
	}{
		{engine.Result{Status: "completed", CostUSD: 0.0123}, "cost $0.012"},
		{engine.Result{Status: "completed", CostUnknown: true}, "cost unknown"},
		{engine.Result{Status: "completed", CostUSD: 0.02, CostUnknown: true}, "cost ≥ $0.020, some prices unknown"},
		{engine.Result{Status: "timeout", CostUSD: 0.02, Usage: provider.Usage{Estimated: true}}, "cost ≈$0.020"},
	} {
		var buf testio.Buffer
		(&lineLog{w: &buf}).ended("log_1/turn_1", "demo", app.Result{Result: tc.res}, nil)
		if got := buf.String(); !strings.HasSuffix(got, ", "+tc.want+"\n") {
			t.Errorf("line = %q, want it to end with %q", got, tc.want)
		}
	}
}
