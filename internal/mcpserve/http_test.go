package mcpserve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/httpserve"
)

// serveHTTP serves srv on a free loopback port until the test ends, and returns its MCP URL.
func serveHTTP(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + Path
}

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, token string, progress *progressLog) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token}}
	}
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = progress.handler
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// Over streamable HTTP, ask_team answers with the winner and streams its progress.
func TestHTTP_AskTeam(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}})
	url := serveHTTP(t, srv)
	progress := newProgressLog()
	cs, err := connectHTTP(t, url, "", progress)
	if err != nil {
		t.Fatal(err)
	}
	res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "What is the capital of France?"}, true)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	var out AskResult
	structured(t, res, &out)
	if out.Winner != "researcher" || !strings.Contains(out.Answer, "Paris") || len(out.Votes) != 3 {
		t.Fatalf("result %+v", out)
	}
	progress.waitFor(t, "voted for researcher")
	progress.waitFor(t, "session completed")
}

// Cancelling a call over HTTP (notifications/cancelled) interrupts its session.
func TestHTTP_Cancel(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "slow", Config: parse(t, "slow.yaml", []byte(slow))}}})
	url := serveHTTP(t, srv)
	progress := newProgressLog()
	cs, err := connectHTTP(t, url, "", progress)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := call(t, ctx, cs, "ask_team", map[string]any{"question": "Take your time."}, true)
		errc <- err
	}()
	_, logDir, _ := strings.Cut(progress.waitFor(t, "session started"), "; log ")
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	waitInterrupted(t, srv, logDir)
}

// With a token, a client must send it; any address but loopback needs one.
func TestHTTP_Token(t *testing.T) {
	const token = "s3cret-token-value"
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}, Token: token})
	url := serveHTTP(t, srv)
	if _, err := connectHTTP(t, url, "", nil); err == nil {
		t.Fatal("a client without the token connected")
	}
	if _, err := connectHTTP(t, url, "wrong", nil); err == nil {
		t.Fatal("a client with a wrong token connected")
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("without a token: %d %v", resp.StatusCode, resp.Header)
	}
	// With the token any host name is served (behind a proxy, say), as massgen serve does.
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize",`+
		`"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "massgen.example"
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("another host name with the token: %d", resp.StatusCode)
	}
	cs, err := connectHTTP(t, url, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := call(t, t.Context(), cs, "list_teams", nil, false)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}

	open := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}})
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8765"} {
		if _, err := open.Listen(addr); !errors.Is(err, httpserve.ErrTokenRequired) {
			t.Errorf("Listen(%q) without a token: %v", addr, err)
		}
	}
}

// Without a token only loopback host names are answered (DNS rebinding), a cross-origin POST
// is refused (CSRF), and other paths say where the endpoint is.
func TestHTTP_Guard(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}})
	url := serveHTTP(t, srv)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host: %d", resp.StatusCode)
	}
	req, err = http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "https://attacker.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin POST: %d", resp.StatusCode)
	}
	resp, err = http.Get(strings.TrimSuffix(url, Path) + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/sse: %d", resp.StatusCode)
	}
}
