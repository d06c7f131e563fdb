package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"massgen/internal/app"
	"massgen/internal/config"
)

// countRuns makes o.Run count the sessions it starts (app.Run does the work), and fail to
// start any session of the team "nostart" as a team without its API key does.
func countRuns(o *Options, n *atomic.Int64) {
	o.Teams["nostart"] = o.Teams["demo"]
	o.Run = func(ctx context.Context, cfg *config.Config, ao app.Options) (app.Result, error) {
		n.Add(1)
		if strings.HasPrefix(ao.Args[len(ao.Args)-1], "nostart=") {
			return app.Result{}, &app.Error{Code: app.ExitConfig, Err: errors.New("agent a: no API key for backend openai: set OPENAI_API_KEY")}
		}
		return app.Run(ctx, cfg, ao)
	}
}

// serveListener serves opts through ServeListener, the http.Server that `massgen serve` runs,
// on a loopback port and returns its address.
func serveListener(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	opts.NoToken = opts.Token == ""
	s, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListener(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	})
	return s, ln.Addr().String()
}

// A session that ran and failed was answered 500, which OpenAI's clients retry twice: one
// call ran, and billed, three whole team runs. Failures a retry would repeat now carry
// x-should-retry: false, which the official clients obey; the openai-go client here retries
// as it does by default.
func TestChat_FailuresDoNotInviteRetries(t *testing.T) {
	var runs atomic.Int64
	e := newEnv(t, func(o *Options) { countRuns(o, &runs) })
	client := openai.NewClient(option.WithBaseURL(e.ts.URL+"/v1/"), option.WithAPIKey("unused"),
		option.WithMaxRetries(2), option.WithHTTPClient(e.ts.Client()))
	for _, tc := range []struct {
		team   string
		status int
		code   string
	}{
		{"fail", http.StatusInternalServerError, "session_failed"},       // every agent dead
		{"slowfail", http.StatusGatewayTimeout, "session_timeout"},       // it would time out again
		{"nostart", http.StatusInternalServerError, "team_config_error"}, // it would not start again
	} {
		t.Run(tc.team, func(t *testing.T) {
			runs.Store(0)
			_, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
				Model: tc.team, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("q")},
			})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || apiErr.Code != tc.code {
				t.Fatalf("error %v, want %d %s", err, tc.status, tc.code)
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("one client call started %d sessions, want 1", n)
			}
			if got := apiErr.Response.Header.Get("X-Should-Retry"); got != "false" {
				t.Errorf("x-should-retry %q", got)
			}
			e.waitIdle()
		})
	}
	// Streaming: the failure comes inside the stream, after the 200, where nothing retries.
	runs.Store(0)
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model: "fail", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("q")},
	})
	for stream.Next() {
	}
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "the session failed") {
		t.Errorf("stream error %v", err)
	}
	stream.Close()
	if n := runs.Load(); n != 1 {
		t.Errorf("one streaming call started %d sessions, want 1", n)
	}
}

// What may be retried stays retryable: the 429 of a full server (after Retry-After, no
// session ran) and a session cut short by the server's own shutdown.
func TestChat_RetryableAnswersStayRetryable(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxSessions = 1 })
	res := e.post("/api/runs", map[string]string{"team": "hang", "question": "q"})
	if res.status != http.StatusAccepted {
		t.Fatalf("start: %d %s", res.status, res.body)
	}
	r := e.post("/v1/chat/completions", chatBody("demo", false, "user", "q"))
	wantError(t, r, http.StatusTooManyRequests, "rate_limit_exceeded")
	if r.header.Get("Retry-After") == "" || r.header.Get("X-Should-Retry") != "" {
		t.Errorf("429 headers %v", r.header)
	}
	e.srv.Close()
	w := httptest.NewRecorder()
	e.srv.failed(w, http.StatusServiceUnavailable, "session_interrupted", "the session was interrupted")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("X-Should-Retry") != "" {
		t.Errorf("interrupted by the shutdown: %d %v", w.Code, w.Header())
	}
}

// No path makes the server fail: invalid UTF-8 (%ff) reached the embedded file server, which
// answered 500; control characters, encoded dots and huge paths are refused too.
func TestGuard_BadPathsAreNever500(t *testing.T) {
	e := newEnv(t, nil)
	prefixes := []string{"/", "/static/", "/v1/", "/v1/models/", "/v1/chat/completions/", "/api/", "/api/teams/",
		"/api/sessions/", "/api/sessions/log_20250101_000000/", "/api/sessions/log_20250101_000000/turn_1/"}
	suffixes := []string{"%ff", "a%ffb", "app.js%ff", "%c0%af", "%ed%a0%80", "..%2f", "%2e%2e", "%2e%2e%2fserver.go", "%00",
		"index.html%00", "x%0ay", "%1b[2J", "%7f", "%e2%80%ae", strings.Repeat("a", 5000), strings.Repeat("%ff", 2000), "a%5cb"}
	for _, p := range prefixes {
		for _, sfx := range suffixes {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				r := e.do(t.Context(), method, p+sfx, nil)
				if r.status >= 500 || r.status < 400 {
					t.Errorf("%s %s%.40s: %d %.100s", method, p, sfx, r.status, r.body)
				}
			}
		}
	}
	// The same through raw request lines, bytes a client library would escape.
	for _, path := range []string{"/static/\xff", "/api/sessions/\xfe\xff/turn_1", "/v1/models/\x01", "/static/a b"} {
		conn, err := net.Dial("tcp", e.ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Errorf("GET %q: %v", path, err)
		} else if resp.StatusCode >= 500 || resp.StatusCode < 400 {
			t.Errorf("GET %q: %d", path, resp.StatusCode)
		}
		conn.Close()
	}
}

// The auth scheme is case-insensitive (RFC 7235); the token itself is not.
func TestAuth_BearerSchemeIsCaseInsensitive(t *testing.T) {
	const token = "Tok-3n"
	e := newEnv(t, func(o *Options) { o.Token = token })
	for auth, ok := range map[string]bool{
		"Bearer " + token: true, "bearer " + token: true, "BEARER " + token: true, "bEaReR " + token: true,
		"Bearer  " + token: true, "Bearer " + strings.ToLower(token): false, "Basic " + token: false,
		"Bearer" + token: false, "Bearers " + token: false, token: false, "Bearer": false,
	} {
		r := e.get("/v1/models", "Authorization", auth)
		if (r.status == http.StatusOK) != ok {
			t.Errorf("Authorization %q: %d", auth, r.status)
		}
	}
}

// Request bodies over an endpoint's limit are answered 413 in OpenAI's error shape, naming
// the limit; the dashboard's run endpoint answered 400 "not valid JSON" instead.
func TestBodies_OverTheLimitAre413(t *testing.T) {
	var runs atomic.Int64
	e := newEnv(t, func(o *Options) { countRuns(o, &runs) })
	for _, tc := range []struct {
		path, body, limit string
	}{
		{"/api/runs", `{"team":"demo","question":"` + strings.Repeat("q", maxRunBody) + `"}`, "1 MiB"},
		{"/v1/chat/completions", `{"model":"demo","messages":[{"role":"user","content":"` + strings.Repeat("q", maxChatBody) + `"}]}`, "8 MiB"},
	} {
		r := e.post(tc.path, tc.body)
		wantError(t, r, http.StatusRequestEntityTooLarge, "request_too_large")
		if !strings.Contains(string(r.body), "over the "+tc.limit+" limit") || !strings.Contains(string(r.body), `"type":"invalid_request_error"`) {
			t.Errorf("%s: %s", tc.path, r.body)
		}
	}
	// Content-Length alone is enough to refuse, before a byte of the body is read.
	conn, err := net.Dial("tcp", e.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 1<<40)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("Content-Length 1 TiB: %v %v", resp, err)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("%d sessions started", n)
	}
}

// A client that sends its request slowly is cut off after the read timeout: 200 connections
// trickling a body one byte at a time were all still open after 75 s. Answers that take
// longer than the read timeout, streamed or not, are not.
func TestServe_SlowClientsAreCutOff(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	slow := loadTeam(t, "slow", "agents:\n  - id: a\n    backend: {type: scripted, latency: 500ms, chunk_delay: 1ms, answers: [\"Paris.\"]}\n")
	_, addr := serveListener(t, Options{Teams: map[string]*config.Config{"slow": slow}, LogRoot: t.TempDir(), ReadTimeout: readTimeout})

	body := `{"model":"slow","messages":[{"role":"user","content":"q"}]}`
	for _, tc := range []struct {
		name, head string
	}{
		{"headers", "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"},
		{"body", fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body)+100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tc.head); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			closed := make(chan time.Duration, 1)
			go func() { // the server closes the connection (after a 408, for a body)
				_, _ = io.Copy(io.Discard, conn)
				closed <- time.Since(start)
			}()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case d := <-closed:
					if d > readTimeout+2*time.Second {
						t.Errorf("cut off after %v, read timeout %v", d, readTimeout)
					}
					return
				case <-tick.C:
					_, _ = conn.Write([]byte{"xy: z\r\n"[i%7]}) // one byte at a time
					if time.Since(start) > 5*time.Second {
						t.Fatal("still open after 5 s of trickling")
					}
				}
			}
		})
	}

	client := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "slow", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("q")}}
	start := time.Now()
	res, err := client.Chat.Completions.New(t.Context(), params)
	if err != nil || res.Choices[0].Message.Content != "Paris." {
		t.Fatalf("a blocking answer that takes longer than the read timeout: %v %+v", err, res)
	}
	if d := time.Since(start); d < readTimeout {
		t.Fatalf("the answer took %v: not longer than the read timeout, the test proves nothing", d)
	}
	stream := client.Chat.Completions.NewStreaming(t.Context(), params)
	var got strings.Builder
	for stream.Next() {
		if ch := stream.Current(); len(ch.Choices) > 0 {
			got.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil || got.String() != "Paris." {
		t.Errorf("a stream longer than the read timeout: %v %q", err, got.String())
	}
	stream.Close()
}

// A client that stops reading a stream no longer holds its handler forever: the write that
// makes no progress within writeStall fails and the stream ends. The deadline must not
// outlive the request: the next one on the same connection is not cut short by it.
func TestServe_StalledReadersAreDropped(t *testing.T) {
	old := writeStall
	writeStall = 300 * time.Millisecond
	t.Cleanup(func() { writeStall = old })
	root := t.TempDir()
	_, addr := serveListener(t, Options{Teams: map[string]*config.Config{"fail": loadTeam(t, "fail", failTeam)}, LogRoot: root})

	// A finished session with a log far larger than the socket buffers.
	var log strings.Builder
	pad := strings.Repeat("p", 1000)
	for i := 1; log.Len() < 32<<20; i++ {
		fmt.Fprintf(&log, `{"seq":%d,"time":"2025-01-01T00:00:01Z","type":"text_delta","data":{"agent":"a","text":"%s"}}`+"\n", i, pad)
	}
	mustWrite(t, root+"/log_20250101_000001/turn_1/events.jsonl", log.String())
	mustWrite(t, root+"/log_20250101_000002/turn_1/events.jsonl",
		`{"seq":1,"time":"2025-01-01T00:00:01Z","type":"session_ended","data":{"status":"completed","exit_code":0,"duration_seconds":1}}`+"\n")

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A small receive buffer, so that the server's writes block after a few MB however slowly
	// a loaded machine produces them (with the default buffers, a slow server never filled
	// them within the pause and the stream was read to its end). Not smaller than a few
	// loopback segments (64 KiB each): below that the window never reopens.
	if err := conn.(*net.TCPConn).SetReadBuffer(256 << 10); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "GET /api/sessions/log_20250101_000001/turn_1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	time.Sleep(writeStall + 3*time.Second) // not reading
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("reading the stalled stream: %v after %d bytes", err, len(b))
	}
	if strings.Contains(string(b), "event: end") || len(b) >= log.Len() {
		t.Errorf("the stream went on to its end (%d bytes of %d) for a client that stopped reading", len(b), log.Len())
	}

	// Two requests on one connection: a stream, then, after longer than writeStall, another.
	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	br := bufio.NewReader(conn2)
	for i := range 2 {
		if i == 1 {
			time.Sleep(writeStall + 200*time.Millisecond)
		}
		fmt.Fprint(conn2, "GET /api/sessions/log_20250101_000002/turn_1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on the connection: %v", i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !strings.Contains(string(body), "event: end") {
			t.Fatalf("request %d on the connection: %v %q", i+1, err, body)
		}
	}
}
