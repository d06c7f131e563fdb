package browser

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"massgen/internal/netproxy"
)

// wsTarget is a TCP listener that counts the WebSocket handshakes it receives (it never
// answers them: reaching it at all is what the attack tests look for).
type wsTarget struct {
	ln    net.Listener
	count atomic.Int32
	done  chan struct{}
}

func newWSTarget(t *testing.T, ip string) *wsTarget {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wsTarget{ln: ln, done: make(chan struct{})}
	go func() { // ends when the test closes the listener
		defer close(w.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if line, _ := bufio.NewReader(c).ReadString('\n'); strings.HasPrefix(line, "GET ") {
				w.count.Add(1)
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-w.done })
	return w
}

func (w *wsTarget) port() int { return w.ln.Addr().(*net.TCPAddr).Port }

// wsPage serves, on ip, a page whose script opens a WebSocket to each of urls.
func wsPage(t *testing.T, ip string, urls ...string) *httptest.Server {
	t.Helper()
	var js strings.Builder
	for _, u := range urls {
		fmt.Fprintf(&js, "try { new WebSocket(%q); } catch (e) {}\n", u)
	}
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>ws</title><script>%s</script>", js.String())
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// openSession opens a browser session for a test, closed at its end.
func openSession(t *testing.T, o Options) *Session {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// reached waits for the allowed target to see its handshake (so the page's script ran and
// the browser's WebSockets work), then reports what the refused target saw.
func reached(t *testing.T, ok, refused *wsTarget) int32 {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ok.count.Load() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the WebSocket to the allowed host never arrived: the test proves nothing")
		}
	}
	time.Sleep(time.Second) // the refused one was opened first; give it time to arrive anyway
	return refused.count.Load()
}

// TestPolicy_WebSocketsOutsideThePolicyAreRefused are the attacks: a page opens two
// WebSockets, one the policy allows and one it does not; the second's server must see no
// connection. Request interception never sees WebSockets, so only the proxy can refuse them.
func TestPolicy_WebSocketsOutsideThePolicyAreRefused(t *testing.T) {
	needChromium(t)
	tests := []struct {
		name             string
		allowed, blocked []string
		pageHost         string // where the page is served, and named from
		okHost, okName   string // the allowed WebSocket: its server's address and the name used
		evilHost, evilTo string // the refused one: its server's address, and the host of its URL
	}{
		// With only localhost allowed, an address is outside: no name rule covers it.
		{"an address outside allowed_domains", []string{"localhost"}, nil, "localhost", "127.0.0.1", "localhost", "127.0.0.1", "127.0.0.1"},
		// Chromium, like RFC 6761, takes every *.localhost name for this machine.
		{"a blocked subdomain of an allowed domain", []string{"localhost"}, []string{"ads.localhost"}, "localhost", "127.0.0.1", "api.localhost", "127.0.0.1", "ads.localhost"},
		// Addresses are not names, so no resolver rule could refuse them.
		{"a blocked address", nil, []string{"127.0.0.1"}, "127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.1", "127.0.0.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, evil := newWSTarget(t, tc.okHost), newWSTarget(t, tc.evilHost)
			pageAddr := "127.0.0.1"
			if tc.pageHost != "localhost" {
				pageAddr = tc.pageHost
			}
			page := wsPage(t, pageAddr, fmt.Sprintf("ws://%s:%d/steal", tc.evilTo, evil.port()), fmt.Sprintf("ws://%s:%d/ok", tc.okName, ok.port()))
			p, err := NewPolicy(tc.allowed, tc.blocked)
			if err != nil {
				t.Fatal(err)
			}
			s := openSession(t, Options{Policy: p})
			navigate(t, s, fmt.Sprintf("http://%s:%d/", tc.pageHost, page.Listener.Addr().(*net.TCPAddr).Port))
			if n := reached(t, ok, evil); n != 0 {
				t.Fatalf("a WebSocket reached %s, outside the policy (%d handshakes)", tc.evilTo, n)
			}
		})
	}
}

func navigate(t *testing.T, s *Session, u string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Navigate(ctx, u); err != nil {
		t.Fatal(err)
	}
}

// TestGate_Rules: the session's proxy refuses a program without its password (no relay for
// the machine's other programs), the local link always, and an address blocked_domains lists
// by whatever name leads there; it tunnels to the rest.
func TestGate_Rules(t *testing.T) {
	p, err := NewPolicy(nil, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := startGate(p)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	blocked, open := newWSTarget(t, "127.0.0.1"), newWSTarget(t, "127.0.0.2")
	auth := "Proxy-Authorization: " + netproxy.BasicAuth(g.user, g.password) + "\r\n"
	tunnel := func(hostport, headers string) string {
		c, err := net.Dial("tcp", g.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", hostport, hostport, headers)
		b, _ := io.ReadAll(c)
		return string(b)
	}
	openAddr := open.ln.Addr().String()
	for _, c := range []struct{ name, hostport, headers, want string }{
		{"no password", openAddr, "", "407"},
		{"the local link", "169.254.169.254:80", auth, "link-local"},
		{"a blocked address", fmt.Sprintf("127.0.0.1:%d", blocked.port()), auth, "blocked_domains"},
		{"a name of a blocked address", fmt.Sprintf("api.localhost:%d", blocked.port()), auth, "massgen browser: "},
		{"an address not blocked", openAddr, auth, "200 Connection Established"},
	} {
		got := tunnel(c.hostport, c.headers)
		if !strings.Contains(got, c.want) || c.want != "200 Connection Established" && strings.Contains(got, " 200 ") {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if n := blocked.count.Load(); n != 0 {
		t.Errorf("the blocked address was reached %d times", n)
	}
	if n := open.count.Load(); n != 1 {
		t.Errorf("the open address was reached %d times, want once (with the password)", n)
	}
}
