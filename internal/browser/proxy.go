package browser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"massgen/internal/netproxy"
)

// gate is the one way out of a session's Chromium: an HTTP proxy (internal/netproxy) on a
// loopback port of its own, which Chromium is told to use for everything, loopback included,
// and which checks every connection's host against the Policy, names and addresses alike,
// and then the address it dials (so a name that leads to the local link, or to an address
// blocked_domains lists, reaches nothing). Request interception alone never saw WebSockets,
// workers' requests or what a redirect led to, and name rules never covered addresses.
//
// Other programs on the machine can connect to the port too, so the proxy asks every request
// for a password made for this session: Chromium does not know it, and the proxy's 407
// reaches the session as a Fetch.authRequired event, answered with the password over
// DevTools (session.go). Chromium keeps the credentials for the proxy and sends them with its
// next connections (WebSockets too), and a connection that comes without them is refused: the
// proxy relays nothing for anyone else.
type gate struct {
	p              *netproxy.Proxy
	addr           string // host:port of the proxy
	user, password string
}

// gateUser is the user name the session gives the proxy; the password is the secret.
const gateUser = "massgen"

func startGate(policy *Policy) (*gate, error) {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("the browser's proxy: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the browser's proxy: %w", err)
	}
	g := &gate{addr: ln.Addr().String(), user: gateUser, password: hex.EncodeToString(raw)}
	d := &net.Dialer{Timeout: 30 * time.Second, ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("%s is not an address", host)
		}
		if why := policy.checkIP(ip); why != "" {
			return netproxy.Refusal(why)
		}
		return nil
	}}
	g.p = netproxy.Serve(ln, netproxy.Rules{Name: "massgen browser", Check: policy.checkHost,
		Auth: netproxy.BasicAuth(g.user, g.password),
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			// Every name under localhost is this machine, as Chromium (and RFC 6761) take it.
			if host, port, err := net.SplitHostPort(address); err == nil && strings.HasSuffix(strings.ToLower(host), ".localhost") {
				address = net.JoinHostPort("localhost", port)
			}
			return d.DialContext(ctx, network, address)
		}})
	return g, nil
}

// args are Chromium's flags that send everything through the gate.
func (g *gate) args() []string {
	return []string{
		"--proxy-server=http://" + g.addr,
		// Without this, Chromium reaches loopback addresses directly.
		"--proxy-bypass-list=<-loopback>",
		// WebRTC would otherwise send UDP around any proxy.
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
		// Chromium resolves no name itself (the gate does), so a path that went around the
		// proxy would reach no host by name.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE " + strings.Split(g.addr, ":")[0],
	}
}

// owns reports whether an authentication challenge's origin is the gate.
func (g *gate) owns(origin string) bool {
	return strings.TrimSuffix(strings.TrimPrefix(origin, "http://"), "/") == g.addr
}

// Close stops the proxy and every connection through it.
func (g *gate) Close() error { return g.p.Close() }
