package web

import (
	"massgen/internal/httpserve"

	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServe_RefusesNonLoopbackWithoutAToken(t *testing.T) {
	for addr, loop := range map[string]bool{
		"127.0.0.1:8080": true, "127.0.0.2:1": true, "localhost:8080": true, "[::1]:8080": true, "app.localhost:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "192.168.1.20:8080": false, "example.com:80": false,
	} {
		if got := httpserve.Loopback(addr); got != loop {
			t.Errorf("Loopback(%q) = %v", addr, got)
		}
	}
	e := newEnv(t, nil)
	for _, addr := range []string{":0", "0.0.0.0:0"} {
		if _, err := e.srv.Listen(addr); !errors.Is(err, httpserve.ErrTokenRequired) {
			t.Errorf("Listen(%q) without a token: %v", addr, err)
		}
		if err := e.srv.Serve(t.Context(), addr); !errors.Is(err, httpserve.ErrTokenRequired) {
			t.Errorf("Serve(%q) without a token: %v", addr, err)
		}
	}
	withToken := newEnv(t, func(o *Options) { o.Token = "s3cret" })
	if err := withToken.srv.checkAddr("0.0.0.0:8080"); err != nil {
		t.Errorf("with a token: %v", err)
	}
}

func TestAuth_TokenOnTheAPIAndTheDashboard(t *testing.T) {
	const token = "s3cret-token"
	e := newEnv(t, func(o *Options) { o.Token = token })
	bearer := []string{"Authorization", "Bearer " + token}
	for _, path := range []string{"/v1/models", "/api/sessions", "/api/teams"} {
		wantError(t, e.get(path), http.StatusUnauthorized, "invalid_api_key")
		wantError(t, e.get(path, "Authorization", "Bearer wrong"), http.StatusUnauthorized, "invalid_api_key")
		wantError(t, e.get(path, "Authorization", token), http.StatusUnauthorized, "invalid_api_key")
		if r := e.get(path, bearer...); r.status != http.StatusOK {
			t.Errorf("%s with the token: %d", path, r.status)
		}
	}
	if r := e.get("/v1/models"); r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	wantError(t, e.post("/v1/chat/completions", chatBody("demo", false, "user", "q")), http.StatusUnauthorized, "invalid_api_key")
	for _, path := range []string{"/", "/static/app.js", "/?token=wrong"} {
		if r := e.get(path); r.status != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d", path, r.status)
		}
	}
	if r := e.get("/", bearer...); r.status != http.StatusOK || !strings.Contains(string(r.body), "<title>massgen</title>") {
		t.Errorf("dashboard with the token: %d", r.status)
	}

	// ?token= once: a cookie, and a redirect that drops the token from the address.
	client := *e.ts.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(e.ts.URL + "/?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(cookies) != 1 {
		t.Fatalf("?token= answered %d %q %v", resp.StatusCode, resp.Header.Get("Location"), cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Value == token || strings.Contains(c.Value, token) {
		t.Errorf("cookie %+v", c)
	}
	cookie := []string{"Cookie", c.Name + "=" + c.Value}
	for _, path := range []string{"/", "/static/app.js", "/api/sessions"} {
		if r := e.get(path, cookie...); r.status != http.StatusOK {
			t.Errorf("%s with the cookie: %d", path, r.status)
		}
	}
	wantError(t, e.get("/v1/models", cookie...), http.StatusUnauthorized, "invalid_api_key")
	wantError(t, e.get("/api/sessions", "Cookie", c.Name+"=forged"), http.StatusUnauthorized, "invalid_api_key")
	// With a token, any host name may be served.
	if r := e.get("/v1/models", "Authorization", "Bearer "+token, "Host", "massgen.example.com"); r.status != http.StatusOK {
		t.Errorf("other host with the token: %d", r.status)
	}
	// Browsers send a host's cookies to all its ports: the cookie is named after the port,
	// so a second server (serve and --web side by side) does not replace the first one's.
	_, port, _ := net.SplitHostPort(e.ts.Listener.Addr().String())
	if c.Name != "massgen_token_"+port {
		t.Errorf("cookie name %q, want massgen_token_%s", c.Name, port)
	}
	other := e.get("/api/sessions", "Cookie", c.Name+"="+c.Value, "Host", "127.0.0.1:1")
	wantError(t, other, http.StatusUnauthorized, "invalid_api_key")
}

func TestCookieFor(t *testing.T) {
	for host, want := range map[string]string{
		"127.0.0.1:8080": "massgen_token_8080", "[::1]:9": "massgen_token_9", "localhost": "massgen_token",
		"example.com:": "massgen_token", "h:8x": "massgen_token",
	} {
		if got := cookieFor(host); got != want {
			t.Errorf("cookieFor(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestGuard_HostOriginAndCORS(t *testing.T) {
	e := newEnv(t, nil)
	// DNS rebinding: without a token only loopback names are answered.
	wantError(t, e.get("/v1/models", "Host", "evil.example:80"), http.StatusForbidden, "host_not_allowed")
	for _, host := range []string{"localhost:8080", "127.0.0.1", "[::1]:9"} {
		if r := e.get("/v1/models", "Host", host); r.status != http.StatusOK {
			t.Errorf("host %s: %d", host, r.status)
		}
	}
	// Cross-site POSTs are refused; same-origin ones go on.
	wantError(t, e.post("/api/runs", map[string]string{"team": "demo", "question": "q"}, "Origin", "https://evil.example"), http.StatusForbidden, "cross_origin")
	wantError(t, e.post("/v1/chat/completions", chatBody("demo", false, "user", "q"), "Origin", "null"), http.StatusForbidden, "cross_origin")
	r := e.post("/api/runs", map[string]string{"team": "nope", "question": "q"}, "Origin", e.ts.URL)
	wantError(t, r, http.StatusNotFound, "model_not_found")

	// No CORS headers, whatever is asked.
	for _, r := range []response{
		e.do(t.Context(), http.MethodOptions, "/v1/chat/completions", nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "POST"),
		e.get("/v1/models", "Origin", "https://evil.example"),
		e.get("/api/sessions", "Origin", "https://evil.example"),
		e.get("/", "Origin", "https://evil.example"),
	} {
		for k := range r.header {
			if strings.HasPrefix(strings.ToLower(k), "access-control-") {
				t.Errorf("CORS header %s: %v", k, r.header[k])
			}
		}
	}
	page := e.get("/")
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if page.header.Get("X-Content-Type-Options") != "nosniff" || page.header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers %v", page.header)
	}
}

func TestGuard_NoPathLeavesTheLogRoot(t *testing.T) {
	e := newEnv(t, nil)
	outside := t.TempDir()
	const secret = "OUTSIDE-THE-LOG-ROOT"
	evLine := `{"seq":1,"time":"2025-01-01T00:00:00Z","type":"session_started","data":{"question":"` + secret + `","turn":1,"session_id":"x","agents":[]}}` + "\n"
	mustWrite(t, filepath.Join(outside, "turn_1", "events.jsonl"), evLine)
	mustWrite(t, filepath.Join(outside, "turn_1", "metadata.json"), `{"question":"`+secret+`"}`)
	mustWrite(t, filepath.Join(outside, "secret.txt"), secret)
	if err := os.MkdirAll(filepath.Join(e.root, "log_20250101_000002", "turn_1"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustLink(t, outside, filepath.Join(e.root, "log_20250101_000000"))                                                                    // a symlinked log folder
	mustLink(t, filepath.Join(outside, "turn_1"), filepath.Join(e.root, "log_20250101_000001", "turn_1"))                                 // a symlinked turn
	mustLink(t, filepath.Join(outside, "turn_1", "events.jsonl"), filepath.Join(e.root, "log_20250101_000002", "turn_1", "events.jsonl")) // a symlinked file
	mustLink(t, filepath.Join(outside, "turn_1", "metadata.json"), filepath.Join(e.root, "log_20250101_000002", "turn_1", "metadata.json"))

	bad := []string{
		"/api/sessions/../../etc/passwd",
		"/api/sessions/log_20250101_000002/turn_1/../../../secret.txt",
		"/api/sessions/%2e%2e/%2e%2e/events",
		"/api/sessions/log_20250101_000002/%2e%2e/events",
		"/api/sessions/..%2F..%2Fetc/turn_1/events",
		"/api/sessions//etc/passwd/events",
		"/api/sessions/%2Fetc%2Fpasswd/turn_1/events",
		"/api/sessions/log_20250101_000002/turn_1%2F..%2F..%2Fsecret.txt/events",
		"/api/sessions/log_1/turn_1/events",
		"/api/sessions/log_20250101_000002/turn_0/events",
		"/api/sessions/log_20250101_000002/turn_1%00/events",
		"/static/../server.go",
		"/static/%2e%2e/server.go",
		"/static/..%5cserver.go",
		"/%2e%2e/%2e%2e/etc/passwd",
	}
	for _, p := range bad {
		if r := e.get(p); r.status != http.StatusBadRequest && r.status != http.StatusNotFound {
			t.Errorf("GET %s: %d %s", p, r.status, r.body)
		}
	}
	for _, id := range []string{"log_20250101_000000/turn_1", "log_20250101_000001/turn_1", "log_20250101_000002/turn_1"} {
		for _, suffix := range []string{"", "/events", "/stream"} {
			r := e.get("/api/sessions/" + id + suffix)
			if r.status != http.StatusNotFound || strings.Contains(string(r.body), secret) {
				t.Errorf("GET %s%s through a symlink: %d %s", id, suffix, r.status, r.body)
			}
		}
	}
	r := e.get("/api/sessions")
	if r.status != http.StatusOK || strings.Contains(string(r.body), secret) {
		t.Errorf("the list shows what is outside: %s", r.body)
	}
	if r := e.get("/static/"); r.status != http.StatusNotFound {
		t.Errorf("/static/ listing: %d", r.status)
	}
}

func mustWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
}

func TestSecrets_NoKeyInAnyResponse(t *testing.T) {
	e := newEnv(t, nil)
	var bodies []response
	bodies = append(bodies, e.post("/v1/chat/completions", chatBody("secret", false, "user", "What is the capital of France?")))
	bodies = append(bodies, e.post("/v1/chat/completions", chatBody("secret", true, "user", "What is the capital of France?")))
	run := e.post("/api/runs", map[string]string{"team": "secret", "question": "q"})
	id := decode[map[string]string](t, run)["id"]
	e.waitIdle()
	bodies = append(bodies, run)
	for _, p := range []string{"/", "/static/app.js", "/static/session.js", "/static/md.js", "/static/dom.js", "/static/style.css",
		"/v1/models", "/v1/models/secret", "/api/teams", "/api/sessions",
		"/api/sessions/" + id, "/api/sessions/" + id + "/events", "/api/sessions/" + id + "/stream"} {
		r := e.get(p)
		if r.status != http.StatusOK {
			t.Errorf("GET %s: %d", p, r.status)
		}
		bodies = append(bodies, r)
	}
	for _, r := range bodies {
		if strings.Contains(string(r.body), "sk-test") || strings.Contains(string(r.body), fakeKey) {
			t.Errorf("a key in a response: %.300s", r.body)
		}
		for k, v := range r.header {
			if strings.Contains(strings.Join(v, " "), "sk-test") {
				t.Errorf("a key in header %s", k)
			}
		}
	}
}
