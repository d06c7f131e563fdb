package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// netProxy is the way out of a sandbox whose config allows hosts
// (command_line_srt_network_allowed_domains), as srt's proxy is: an HTTP proxy on a unix
// socket, which the sandbox offers its commands at childproc.ProxyAddr (HTTP_PROXY and
// HTTPS_PROXY say so). It forwards CONNECT tunnels (HTTPS and anything else over TCP) and plain
// HTTP requests to the allowed hosts only, resolving names itself and refusing addresses of
// this machine (loopback, link-local such as the cloud metadata service), so that an allowed
// name pointed at them reaches nothing. Other traffic has no way out: the sandbox has no
// network of its own.
type netProxy struct {
	allow []string
	dir   string // private folder holding the socket
	path  string
	ln    net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup // serve and the connection handlers
}

// proxyDial connects to an allowed host; tests replace it.
var proxyDial = (&net.Dialer{Timeout: 30 * time.Second, ControlContext: refuseLocal}).DialContext

// proxyHeaderWait bounds how long a client may take to send its request line and headers.
const proxyHeaderWait = 30 * time.Second

// refuseLocal refuses to connect to this machine's own addresses, whatever name led there.
func refuseLocal(_ context.Context, _, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() {
		return fmt.Errorf("%s is an address of this machine or its local link, which sandboxed commands never reach", host)
	}
	return nil
}

func startProxy(allow []string) (*netProxy, error) {
	dir, err := os.MkdirTemp("", "massgen-proxy-")
	if err != nil {
		return nil, fmt.Errorf("the network proxy: %w", err)
	}
	p := &netProxy{allow: allow, dir: dir, path: filepath.Join(dir, "proxy.sock"), conns: map[net.Conn]struct{}{}}
	if p.ln, err = net.Listen("unix", p.path); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("the network proxy: %w", err)
	}
	p.wg.Add(1)
	go p.serve() // ends when Close closes the listener
	return p, nil
}

// Close stops the proxy and every connection through it, and waits for their goroutines.
func (p *netProxy) Close() error {
	p.mu.Lock()
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return errors.Join(err, os.RemoveAll(p.dir))
}

// track registers c, to be closed by Close; false once the proxy is closed (c is closed then).
func (p *netProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *netProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *netProxy) serve() {
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

// allowed reports whether host (no port) is one of the allowed domains: a name listed, or a
// subdomain of one listed as *.name.
func (p *netProxy) allowed(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, d := range p.allow {
		if suffix, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == d {
			return true
		}
	}
	return false
}

func (p *netProxy) handle(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(proxyHeaderWait))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	addr := req.Host // CONNECT's authority, or the absolute URL's host
	if req.Method != http.MethodConnect {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			refuse(c, http.StatusBadRequest, "the sandbox's proxy takes CONNECT (for https) and absolute http:// URLs")
			return
		}
		addr = req.URL.Host
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "80"
	}
	if !p.allowed(host) {
		refuse(c, http.StatusForbidden, fmt.Sprintf("%s is not in command_line_srt_network_allowed_domains (%s)", host, strings.Join(p.allow, ", ")))
		return
	}
	up, err := proxyDial(context.Background(), "tcp", net.JoinHostPort(host, port))
	if err != nil {
		refuse(c, http.StatusBadGateway, fmt.Sprintf("cannot reach %s: %v", addr, err))
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
		// One request per connection: the reply ends when the server closes.
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

func refuse(c net.Conn, code int, msg string) {
	body := "massgen sandbox: " + msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

// proxyEnv points HTTP clients in the sandbox at its proxy.
func proxyEnv(addr string) []string {
	u := "http://" + addr
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"}
}
