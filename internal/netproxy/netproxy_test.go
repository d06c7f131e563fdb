package netproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts a proxy on a loopback port with rules r, stopped at the test's end.
func serve(t *testing.T, r Rules) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := Serve(ln, r)
	t.Cleanup(func() { _ = p.Close() })
	return ln.Addr().String()
}

// ask sends raw to the proxy at addr and returns its whole answer.
func ask(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second)) // a tunnel opened waits for more
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

// TestProxy_RelaysForNoOneWithoutThePassword is the open-relay attack: another program on the
// machine finds the proxy's loopback port and asks it for a tunnel and for a page, without the
// password or with a wrong one; the proxy answers 407 and the server sees nothing. With the
// password both go through (the test's control).
func TestProxy_RelaysForNoOneWithoutThePassword(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "reached")
	}))
	defer srv.Close()
	target := strings.TrimPrefix(srv.URL, "http://")
	var d net.Dialer
	addr := serve(t, Rules{Name: "test proxy", Check: func(string) string { return "" }, Dial: d.DialContext,
		Auth: BasicAuth("massgen", "s3cret-of-this-session")})

	connect := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	get := "GET " + srv.URL + "/ HTTP/1.1\r\nHost: " + target + "\r\n"
	for name, raw := range map[string]string{
		"tunnel, no password":    connect + "\r\n",
		"page, no password":      get + "\r\n",
		"tunnel, wrong password": connect + "Proxy-Authorization: " + BasicAuth("massgen", "guess") + "\r\n\r\n",
		"page, wrong password":   get + "Proxy-Authorization: " + BasicAuth("massgen", "s3cret-of-this-session!") + "\r\n\r\n",
	} {
		if got := ask(t, addr, raw); !strings.HasPrefix(got, "HTTP/1.1 407") || !strings.Contains(got, "Proxy-Authenticate: Basic") {
			t.Errorf("%s: %q, want a 407 asking for the password", name, got)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server was reached %d times through the proxy without its password", n)
	}
	auth := "Proxy-Authorization: " + BasicAuth("massgen", "s3cret-of-this-session") + "\r\n"
	if got := ask(t, addr, get+auth+"\r\n"); !strings.Contains(got, "reached") {
		t.Fatalf("with the password the page did not come through: %q", got)
	}
	if got := ask(t, addr, connect+auth+"\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("with the password the tunnel did not open: %q", got)
	}
}

// TestProxy_Refusals: a host Check refuses and an address Dial refuses (a Refusal) are 403s
// naming the reason, a server that is down is a 502; each carries RefusedHeader.
func TestProxy_Refusals(t *testing.T) {
	addr := serve(t, Rules{Name: "test proxy",
		Check: func(host string) string {
			if host == "evil.test" {
				return "evil.test is not allowed"
			}
			return ""
		},
		Dial: func(_ context.Context, _, address string) (net.Conn, error) {
			if strings.HasPrefix(address, "rebound.test:") {
				return nil, &net.OpError{Op: "dial", Err: Refusal("rebound.test led to 169.254.169.254")}
			}
			return nil, errors.New("connection refused")
		}})
	for raw, want := range map[string]string{
		"CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n":            "403 Forbidden",
		"GET http://rebound.test/ HTTP/1.1\r\nHost: rebound.test\r\n\r\n":          "403 Forbidden",
		"CONNECT down.test:443 HTTP/1.1\r\nHost: down.test:443\r\n\r\n":            "502 Bad Gateway",
		"GET https://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n":               "400 Bad Request",
		"CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n":                    "502 Bad Gateway",
		"GET http://evil.test:8080/x HTTP/1.1\r\nHost: evil.test:8080\r\n\r\n":     "evil.test is not allowed",
		"GET http://rebound.test:81/x HTTP/1.1\r\nHost: rebound.test:81\r\n\r\n":   RefusedHeader + ": rebound.test led to 169.254.169.254",
		"CONNECT down.test:1 HTTP/1.1\r\nHost: down.test:1\r\n\r\n":                RefusedHeader + ": cannot reach down.test:1",
		"GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n":                RefusedHeader + ": evil.test is not allowed",
		"CONNECT rebound.test:443 HTTP/1.1\r\nHost: rebound.test:443\r\n\r\n":      "test proxy: rebound.test led to 169.254.169.254",
		"GET http://rebound.test/a HTTP/1.1\r\nHost: rebound.test\r\nX: y\r\n\r\n": "Connection: close",
	} {
		if got := ask(t, addr, raw); !strings.Contains(got, want) {
			t.Errorf("%q: %q, want %q", raw, got, want)
		}
	}
}
