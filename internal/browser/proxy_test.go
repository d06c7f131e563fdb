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

// TestPolicy_WebSocketToAnAddressIsRefused is the attack: with only localhost allowed, a page
// opens a WebSocket to 127.0.0.1 (an address, which no name rule covers, and which request
// interception never sees); that server must see no connection.
func TestPolicy_WebSocketToAnAddressIsRefused(t *testing.T) {
	needChromium(t)
	ok, evil := newWSTarget(t, "127.0.0.1"), newWSTarget(t, "127.0.0.1")
	page := wsPage(t, "127.0.0.1", fmt.Sprintf("ws://127.0.0.1:%d/steal", evil.port()), fmt.Sprintf("ws://localhost:%d/ok", ok.port()))
	p, err := NewPolicy([]string{"localhost"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := openSession(t, Options{Policy: p})
	navigate(t, s, fmt.Sprintf("http://localhost:%d/", page.Listener.Addr().(*net.TCPAddr).Port))
	if n := reached(t, ok, evil); n != 0 {
		t.Fatalf("a WebSocket reached 127.0.0.1, outside allowed_domains (%d handshakes)", n)
	}
}

// TestPolicy_WebSocketToABlockedSubdomainIsRefused: localhost is allowed and ads.localhost
// blocked (Chromium, like RFC 6761, takes every *.localhost name for this machine); a page of
// localhost opens WebSockets to api.localhost and ads.localhost, and only the first gets through.
func TestPolicy_WebSocketToABlockedSubdomainIsRefused(t *testing.T) {
	needChromium(t)
	ok, evil := newWSTarget(t, "127.0.0.1"), newWSTarget(t, "127.0.0.1")
	page := wsPage(t, "127.0.0.1", fmt.Sprintf("ws://ads.localhost:%d/track", evil.port()), fmt.Sprintf("ws://api.localhost:%d/ok", ok.port()))
	p, err := NewPolicy([]string{"localhost"}, []string{"ads.localhost"})
	if err != nil {
		t.Fatal(err)
	}
	s := openSession(t, Options{Policy: p})
	navigate(t, s, fmt.Sprintf("http://localhost:%d/", page.Listener.Addr().(*net.TCPAddr).Port))
	if n := reached(t, ok, evil); n != 0 {
		t.Fatalf("a WebSocket reached ads.localhost, which blocked_domains lists (%d handshakes)", n)
	}
}

// TestPolicy_WebSocketToABlockedAddressIsRefused: with 127.0.0.1 blocked (and no allowed
// list), a page served from 127.0.0.2 opens WebSockets to 127.0.0.2 and 127.0.0.1: only the
// first gets through. Addresses are not names, so no resolver rule could refuse them.
func TestPolicy_WebSocketToABlockedAddressIsRefused(t *testing.T) {
	needChromium(t)
	ok, evil := newWSTarget(t, "127.0.0.2"), newWSTarget(t, "127.0.0.1")
	page := wsPage(t, "127.0.0.2", fmt.Sprintf("ws://127.0.0.1:%d/steal", evil.port()), fmt.Sprintf("ws://127.0.0.2:%d/ok", ok.port()))
	p, err := NewPolicy(nil, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	s := openSession(t, Options{Policy: p})
	navigate(t, s, page.URL+"/")
	if n := reached(t, ok, evil); n != 0 {
		t.Fatalf("a WebSocket reached 127.0.0.1, which blocked_domains lists (%d handshakes)", n)
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
