package browser

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Policy is where the browser may go: the config's allowed_domains and blocked_domains. A
// domain covers itself and every subdomain (example.com covers www.example.com); "*.name"
// is accepted for the same. With Allowed set, only those hosts are reached; Blocked hosts
// never are, even when allowed. A nil Policy allows every host.
//
// Whatever the lists say, a page never reaches file: URLs (the machine's files, keys
// included, are not the browser's to show: serve them over http or read them with the file
// tools) or link-local addresses (the cloud metadata service).
type Policy struct {
	Allowed, Blocked []string
}

// NewPolicy checks and normalises the two lists as a config gives them.
func NewPolicy(allowed, blocked []string) (*Policy, error) {
	p := &Policy{}
	for _, l := range []struct {
		key  string
		in   []string
		into *[]string
	}{{"allowed_domains", allowed, &p.Allowed}, {"blocked_domains", blocked, &p.Blocked}} {
		for _, d := range l.in {
			n, err := domainName(d)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.key, err)
			}
			*l.into = append(*l.into, n)
		}
	}
	return p, nil
}

func domainName(d string) (string, error) {
	n := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	n = strings.TrimPrefix(n, "*.")
	switch {
	case n == "" || n == "*":
		return "", fmt.Errorf("%q would match every host; list host names such as example.com", d)
	case strings.ContainsAny(n, "/:@ ?#*"):
		if net.ParseIP(strings.Trim(n, "[]")) != nil {
			return strings.Trim(n, "[]"), nil
		}
		return "", fmt.Errorf("%q is not a host name: write it without scheme, port or path (example.com)", d)
	}
	return n, nil
}

func covers(list []string, host string) bool {
	for _, d := range list {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// Check says why the browser must not fetch rawURL, or "" when it may.
func (p *Policy) Check(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Sprintf("%q is not a URL", clip(rawURL, 200))
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	case "data", "blob", "about", "javascript":
		return "" // content the page already holds
	case "file":
		return "file: URLs are not opened (the browser does not read the machine's files); serve the page over http, or read files with the file tools"
	default:
		return fmt.Sprintf("%s: URLs are not opened; use http or https", u.Scheme)
	}
	return p.checkHost(u.Hostname())
}

// checkHost says why the browser must not reach host (a name or an address), or "".
func (p *Policy) checkHost(host string) string {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip := net.ParseIP(host); ip != nil {
		if why := p.checkIP(ip); why != "" {
			return why
		}
	}
	if p == nil {
		return ""
	}
	if covers(p.Blocked, host) {
		return fmt.Sprintf("%s is in blocked_domains", host)
	}
	if len(p.Allowed) > 0 && !covers(p.Allowed, host) {
		return fmt.Sprintf("%s is not in allowed_domains (%s)", host, strings.Join(p.Allowed, ", "))
	}
	return ""
}

// checkIP says why the browser must not connect to ip, whatever name led there, or "": the
// local link (the cloud metadata service) never, and an address blocked_domains lists, by
// any name.
func (p *Policy) checkIP(ip net.IP) string {
	if ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() {
		return fmt.Sprintf("%s is a link-local address (such as the cloud metadata service), which the browser never reaches", ip)
	}
	if p == nil {
		return ""
	}
	for _, d := range p.Blocked {
		if b := net.ParseIP(d); b != nil && b.Equal(ip) {
			return fmt.Sprintf("%s is in blocked_domains", ip)
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
