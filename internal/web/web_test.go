package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

func TestMain(m *testing.M) {
	// The Gemini SDK's dependencies start a stats worker at init, owned by no session.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// fakeKey is set on every test team; it must never appear in a response.
const fakeKey = "sk-test-DO-NOT-SERVE-0123456789"

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", filepath.FromSlash(rel))
}

// fastDemo is examples/demo.yaml with no latency and 1 ms between streamed words.
func fastDemo(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoFile(t, "examples/demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`latency: \d+ms`).ReplaceAllString(string(b), "latency: 0s")
	return regexp.MustCompile(`chunk_delay: \d+ms`).ReplaceAllString(s, "chunk_delay: 1ms")
}

// hangTeam never answers until cancelled (or its session timeout).
const hangTeam = `agents:
  - id: stuck
    backend:
      type: scripted
      latency: 0s
      answers: ["never"]
      faults: [{kind: hang}]
timeout_settings:
  orchestrator_timeout_seconds: %TIMEOUT%
`

// failTeam's only agent is rejected on every call.
const failTeam = `agents:
  - id: broken
    backend:
      type: scripted
      latency: 0s
      answers: ["never"]
      faults: [{kind: fatal}]
`

// secretTeam is the demo with keys wherever a config can hold one: api_key and secret-looking
// backend parameters (scripted agents ignore both).
func secretTeam(t *testing.T) *config.Config {
	t.Helper()
	cfg := loadTeam(t, "secret", fastDemo(t))
	for i := range cfg.Agents {
		cfg.Agents[i].Backend.Params = map[string]any{
			"api_key":       fakeKey,
			"extra_headers": map[string]any{"Authorization": "Bearer " + fakeKey},
		}
	}
	return cfg
}

func loadTeam(t *testing.T, name, body string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Load(path)
	if !rep.OK() {
		t.Fatalf("team %s: %s", name, rep.Text())
	}
	for i := range cfg.Agents {
		if cfg.Agents[i].Backend.APIKey == "" {
			cfg.Agents[i].Backend.APIKey = fakeKey // scripted agents ignore it
		}
	}
	return cfg
}

type env struct {
	t    *testing.T
	srv  *Server
	ts   *httptest.Server
	root string
}

// newEnv serves the test teams over httptest with a temporary log root; opt may change the
// options first.
func newEnv(t *testing.T, opt func(*Options)) *env {
	t.Helper()
	root := filepath.Join(t.TempDir(), "logs")
	verbatim := strings.Replace(fastDemo(t), "final_presentation: regenerate", "final_presentation: verbatim", 1)
	o := Options{
		Teams: map[string]*config.Config{
			"demo":     loadTeam(t, "demo", fastDemo(t)),
			"verbatim": loadTeam(t, "verbatim", verbatim),
			"hang":     loadTeam(t, "hang", strings.Replace(hangTeam, "%TIMEOUT%", "600", 1)),
			"slowfail": loadTeam(t, "slowfail", strings.Replace(hangTeam, "%TIMEOUT%", "1", 1)),
			"fail":     loadTeam(t, "fail", failTeam),
			"secret":   secretTeam(t),
		},
		LogRoot: root,
		Version: "test",
	}
	if opt != nil {
		opt(&o)
	}
	o.NoToken = o.Token == "" // most tests serve loopback without one; auth has tests of its own
	s, err := NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(func() { s.Close() }) // runs first: sessions end, then open requests
	return &env{t: t, srv: s, ts: ts, root: root}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; body is JSON-encoded unless it is a string.
func (e *env) do(ctx context.Context, method, path string, body any, header ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, data}
}

func (e *env) get(path string, header ...string) response {
	e.t.Helper()
	return e.do(e.t.Context(), http.MethodGet, path, nil, header...)
}

func (e *env) post(path string, body any, header ...string) response {
	e.t.Helper()
	return e.do(e.t.Context(), http.MethodPost, path, body, header...)
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return v
}

// wantError checks an OpenAI-shaped error.
func wantError(t *testing.T, r response, status int, code string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("status %d: body %q is not an error object: %v", r.status, r.body, err)
	}
	got := ""
	if e.Error.Code != nil {
		got = *e.Error.Code
	}
	if r.status != status || got != code || e.Error.Message == "" || e.Error.Type == "" {
		t.Errorf("got %d %q (%s), want %d %q", r.status, got, r.body, status, code)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type %q", ct)
	}
}

// sseData returns the data of every server-sent event in body.
func sseData(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// turnEvents reads the events.jsonl of session id (log_<ts>/turn_<n>).
func (e *env) turnEvents(id string) []event.Event {
	e.t.Helper()
	evs, err := event.ReadFile(filepath.Join(e.root, filepath.FromSlash(id), "events.jsonl"))
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func (e *env) answerFile(id, winner string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(id), "final", winner, "answer.txt"))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// waitIdle waits until no session runs.
func (e *env) waitIdle() {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(e.srv.runningSessions()) > 0 {
		if time.Now().After(deadline) {
			e.t.Fatal("sessions still running after 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitRunning waits until n sessions run and returns them.
func (e *env) waitRunning(n int) []*session {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ss := e.srv.runningSessions(); len(ss) >= n {
			return ss
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("fewer than %d sessions running after 20 s", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func lastEnd(t *testing.T, evs []event.Event) event.SessionEnded {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	end, ok := evs[len(evs)-1].Payload.(event.SessionEnded)
	if !ok {
		t.Fatalf("last event is %s, not session_ended", evs[len(evs)-1].Payload.Type())
	}
	return end
}

// usageOf adds up the usage events, independently of the code under test.
func usageOf(evs []event.Event) provider.Usage {
	var u provider.Usage
	for _, e := range evs {
		if p, ok := e.Payload.(event.UsageReported); ok {
			u.InputTokens += p.Usage.InputTokens
			u.CachedInputTokens += p.Usage.CachedInputTokens
			u.OutputTokens += p.Usage.OutputTokens
			u.ReasoningTokens += p.Usage.ReasoningTokens
		}
	}
	return u
}
