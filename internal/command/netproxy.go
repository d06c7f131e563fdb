package command

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"massgen/internal/netproxy"
)

// netProxy is the way out of a sandbox whose config allows hosts
// (command_line_srt_network_allowed_domains), as srt's proxy is: an HTTP proxy
// (internal/netproxy) on a unix socket, which the sandbox offers its commands at
// childproc.ProxyAddr (HTTP_PROXY and HTTPS_PROXY say so). It forwards to the allowed hosts
// only, resolving names itself and refusing addresses of this machine (loopback, link-local
// such as the cloud metadata service), so that an allowed name pointed at them reaches
// nothing. Other traffic has no way out: the sandbox has no network of its own.
type netProxy struct {
	allow []string
	dir   string // private folder holding the socket
	path  string
	p     *netproxy.Proxy
}

// proxyDial connects to an allowed host; tests replace it.
var proxyDial = (&net.Dialer{Timeout: 30 * time.Second, ControlContext: refuseLocal}).DialContext

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
	p := &netProxy{allow: allow, dir: dir, path: filepath.Join(dir, "proxy.sock")}
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("the network proxy: %w", err)
	}
	p.p = netproxy.Serve(ln, netproxy.Rules{Name: "massgen sandbox", Check: p.check,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			return proxyDial(ctx, network, address)
		}})
	return p, nil
}

// Close stops the proxy and every connection through it, and waits for their goroutines.
func (p *netProxy) Close() error {
	return errors.Join(p.p.Close(), os.RemoveAll(p.dir))
}

func (p *netProxy) check(host string) string {
	if p.allowed(host) {
		return ""
	}
	return fmt.Sprintf("%s is not in command_line_srt_network_allowed_domains (%s)", host, strings.Join(p.allow, ", "))
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

// proxyEnv points HTTP clients in the sandbox at its proxy.
func proxyEnv(addr string) []string {
	u := "http://" + addr
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"}
}
