package command

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// withTestHosts makes the proxy reach srv for every host name, as if each resolved to it.
func withTestHosts(t *testing.T, srv *httptest.Server) {
	old := proxyDial
	addr := strings.TrimPrefix(srv.URL, "http://")
	proxyDial = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	t.Cleanup(func() { proxyDial = old })
}

// viaProxy sends raw, an HTTP request, to the proxy and returns its whole answer.
func viaProxy(t *testing.T, p *netProxy, raw string) string {
	t.Helper()
	c, err := net.Dial("unix", p.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second)) // a tunnel opened by mistake waits for more
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

func TestProxy_AllowsOnlyTheListedHosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "reached "+r.Host+r.URL.Path)
	}))
	defer srv.Close()
	withTestHosts(t, srv)
	p, err := startProxy([]string{"pypi.org", "*.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct {
		name, raw, want string
	}{
		{"http to a listed host", "GET http://pypi.org/simple HTTP/1.1\r\nHost: pypi.org\r\n\r\n", "reached pypi.org/simple"},
		{"http to a subdomain", "GET http://files.example.com/a HTTP/1.1\r\nHost: files.example.com\r\n\r\n", "reached files.example.com/a"},
		{"the bare domain of a wildcard", "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "403 Forbidden"},
		{"another host", "GET http://evil.test/x HTTP/1.1\r\nHost: evil.test\r\n\r\n", "evil.test is not in command_line_srt_network_allowed_domains"},
		{"a lookalike", "GET http://pypi.org.evil.test/ HTTP/1.1\r\nHost: pypi.org.evil.test\r\n\r\n", "403 Forbidden"},
		{"connect to another host", "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", "403 Forbidden"},
		{"not a proxy request", "GET /x HTTP/1.1\r\nHost: pypi.org\r\n\r\n", "400 Bad Request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := viaProxy(t, p, c.raw); !strings.Contains(got, c.want) {
				t.Errorf("answer %q does not contain %q", got, c.want)
			}
		})
	}
	// A CONNECT tunnel to a listed host carries whatever goes through it.
	c, err := net.Dial("unix", p.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: pypi.org\r\nConnection: close\r\n\r\n")
	br := bufio.NewReader(c)
	if line, _ := br.ReadString('\n'); !strings.Contains(line, "200") {
		t.Fatalf("CONNECT answered %q", line)
	}
	if rest, _ := io.ReadAll(br); !strings.Contains(string(rest), "reached pypi.org/tunnel") {
		t.Errorf("through the tunnel: %q", rest)
	}
}

// An allowed name that resolves to this machine reaches nothing.
func TestProxy_RefusesThisMachine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "reached") }))
	defer srv.Close()
	p, err := startProxy([]string{"localhost", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	for _, host := range []string{"localhost", "127.0.0.1"} {
		got := viaProxy(t, p, "GET http://"+host+":"+port+"/ HTTP/1.1\r\nHost: x\r\n\r\n")
		if !strings.Contains(got, "502 Bad Gateway") || strings.Contains(got, "reached") {
			t.Errorf("%s: %q", host, got)
		}
	}
}
