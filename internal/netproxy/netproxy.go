// Package netproxy is the filtering HTTP proxy massgen puts between a confined program and
// the network: the srt sandbox's commands (internal/command) and the browser's Chromium
// (internal/browser). It forwards CONNECT tunnels (HTTPS, WebSockets, anything over TCP) and
// plain HTTP requests to the hosts its Rules let through, dialling them itself, and answers
// everything else with a refusal the program can show. It is the one enforcement point every
// connection of the program passes, whatever made it (a page, a worker, a WebSocket).
package netproxy

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Rules are what a Proxy lets through, and how it reaches it.
type Rules struct {
	// Check says why host (a name or an address, no port) is not to be reached, or "".
	// Required.
	Check func(host string) string
	// Dial connects to host:port once Check let it through; it is where addresses the names
	// lead to are checked (a Control on the dialer). Required.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Auth, when set, is the Proxy-Authorization value every request must carry (see
	// BasicAuth); a request without it is answered 407, so that a proxy listening where other
	// programs can reach it relays for none of them.
	Auth string
	// Name is who refuses, in the text of refusals ("massgen sandbox").
	Name string
}

// Refusal is a Dial error that is the rules' refusal (an address a name led to that the
// rules do not let through), answered as Check's refusals are; its text is the reason.
type Refusal string

func (r Refusal) Error() string { return string(r) }

// headerWait bounds how long a client may take to send its request line and headers.
const headerWait = 30 * time.Second

// Proxy serves one listener. Close stops it.
type Proxy struct {
	r  Rules
	ln net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup // serve and the connection handlers
}

// Serve answers the clients of ln by r until Close. The proxy owns ln.
func Serve(ln net.Listener, r Rules) *Proxy {
	p := &Proxy{r: r, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve() // ends when Close closes the listener
	return p
}

// BasicAuth is the Proxy-Authorization value of user and password.
func BasicAuth(user, password string) string {
	r := http.Request{Header: http.Header{}}
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

// Close stops the proxy and every connection through it, and waits for their goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// track registers c, to be closed by Close; false once the proxy is closed (c is closed then).
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go func() { // ends when either side closes, or Close closes c
			defer p.wg.Done()
			defer p.untrack(c)
			p.handle(c)
		}()
	}
}

func (p *Proxy) handle(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(headerWait))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if p.r.Auth != "" && subtle.ConstantTimeCompare([]byte(req.Header.Get("Proxy-Authorization")), []byte(p.r.Auth)) != 1 {
		p.refuse(c, http.StatusProxyAuthRequired, "this proxy serves only the program massgen started it for")
		return
	}
	addr := req.Host // CONNECT's authority, or the absolute URL's host
	if req.Method != http.MethodConnect {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			p.refuse(c, http.StatusBadRequest, "this proxy takes CONNECT (for https) and absolute http:// URLs")
			return
		}
		addr = req.URL.Host
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "80"
	}
	host = strings.Trim(host, "[]")
	if why := p.r.Check(host); why != "" {
		p.refuse(c, http.StatusForbidden, why)
		return
	}
	up, err := p.r.Dial(context.Background(), "tcp", net.JoinHostPort(host, port))
	var no Refusal
	switch {
	case errors.As(err, &no):
		p.refuse(c, http.StatusForbidden, string(no))
		return
	case err != nil:
		p.refuse(c, http.StatusBadGateway, fmt.Sprintf("cannot reach %s: %v", addr, err))
		return
	}
	if !p.track(up) {
		return
	}
	defer p.untrack(up)
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
			return
		}
	} else {
		// One request per connection: the reply ends when the server closes. A second request
		// on the client's side would reach this same server, never another one.
		req.Header.Del("Proxy-Connection")
		req.Header.Del("Proxy-Authorization")
		req.Close = true
		req.RequestURI = ""
		if err := req.Write(up); err != nil {
			return
		}
	}
	splice(c, br, up)
}

// splice copies both ways until both directions end; in holds what was read from c already.
func splice(c net.Conn, in io.Reader, up net.Conn) {
	done := make(chan struct{})
	go func() { // ends when c's side ends or the connections close
		_, _ = io.Copy(up, in)
		if tc, ok := up.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(c, up)
	if uc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = uc.CloseWrite()
	}
	<-done
}

// RefusedHeader is on every answer the proxy gives itself rather than relays (its value is
// the reason), so that a client that sees the answers of plain http requests as pages can
// tell a refusal from a server's page.
const RefusedHeader = "X-Massgen-Proxy-Refused"

func (p *Proxy) refuse(c net.Conn, code int, msg string) {
	body := p.r.Name + ": " + msg + "\n"
	h := http.Header{"Content-Type": {"text/plain"}, "Connection": {"close"}, RefusedHeader: {strings.ToValidUTF8(strings.ReplaceAll(msg, "\n", " "), "?")}}
	if code == http.StatusProxyAuthRequired {
		h.Set("Proxy-Authenticate", fmt.Sprintf("Basic realm=%q", p.r.Name))
	}
	resp := http.Response{StatusCode: code, ProtoMajor: 1, ProtoMinor: 1, Header: h, ContentLength: int64(len(body)),
		Body: io.NopCloser(strings.NewReader(body)), Close: true}
	_ = c.SetWriteDeadline(time.Now().Add(headerWait))
	_ = resp.Write(c)
}
