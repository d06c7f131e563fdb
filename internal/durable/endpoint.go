package durable

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"massgen/internal/config"
)

// AllowBaseURLEnv lists, space- or comma-separated, base URLs a worker may call besides the
// backends' own (as --allow-base-url does).
const AllowBaseURLEnv = "MASSGEN_WORKER_ALLOW_BASE_URLS"

// endpoint is a base URL reduced to what decides where requests go.
type endpoint struct {
	scheme, host, port, path string // host lower-case, port explicit, path without a trailing /
}

// parseEndpoint reads an http(s) URL that may serve as a base URL: no credentials, query or
// fragment, and no . or .. path segments (written or %-encoded) that would leave its path.
func parseEndpoint(raw string) (endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return endpoint{}, errors.New("not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return endpoint{}, errors.New("not an http or https URL")
	case u.Hostname() == "":
		return endpoint{}, errors.New("no host")
	case u.User != nil:
		return endpoint{}, errors.New("credentials in the URL")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return endpoint{}, errors.New("a query or fragment")
	}
	for seg := range strings.SplitSeq(u.EscapedPath(), "/") {
		if s := strings.ToLower(strings.ReplaceAll(seg, "%2e", ".")); s == "." || s == ".." {
			return endpoint{}, errors.New("a . or .. path segment")
		}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return endpoint{scheme: scheme, host: strings.ToLower(u.Hostname()), port: port,
		path: strings.TrimRight(u.EscapedPath(), "/")}, nil
}

// within reports whether e is at or below allowed: the same scheme, host and port, and a path
// that is allowed's or continues it after a /.
func (e endpoint) within(allowed endpoint) bool {
	if e.scheme != allowed.scheme || e.host != allowed.host || e.port != allowed.port {
		return false
	}
	return e.path == allowed.path || strings.HasPrefix(e.path, allowed.path+"/")
}

// Allowlist is where a worker sends requests: the backend types' own base URLs and those its
// operator allowed.
type Allowlist struct {
	extra []endpoint
	raw   []string
}

// NewAllowlist checks the base URLs an operator allows (--allow-base-url); an entry that is
// not a plain http(s) URL is an error naming it.
func NewAllowlist(urls []string) (*Allowlist, error) {
	a := &Allowlist{}
	for _, u := range urls {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		e, err := parseEndpoint(u)
		if err != nil {
			return nil, fmt.Errorf("allowed base URL %q (--allow-base-url, %s): %v; give a base URL such as https://gateway.example.com/v1", u, AllowBaseURLEnv, err)
		}
		a.extra, a.raw = append(a.extra, e), append(a.raw, u)
	}
	return a, nil
}

// URLs lists the base URLs the operator allowed, as given.
func (a *Allowlist) URLs() []string { return slices.Clone(a.raw) }

// SplitList splits the value of AllowBaseURLEnv.
func SplitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// ownEndpoints are where the key in variable keyEnv may go: the default base URL of every
// backend type that reads that variable (OPENAI_API_KEY goes to OpenAI, GROQ_API_KEY to
// Groq), or, for an agent without a key, its own type's default. A coding-agent CLI's key
// variables are one vendor's keys (CLAUDE_CODE_API_KEY is an Anthropic key), so any of them
// goes where the others go. A local server's default (localhost) counts under 127.0.0.1 and
// [::1] too.
func ownEndpoints(typ, keyEnv string) []endpoint {
	var urls []string
	if keyEnv == "" {
		urls = append(urls, config.BackendTypes[typ].DefaultBaseURL)
	} else {
		envs := []string{keyEnv}
		if bt := config.BackendTypes[typ]; bt.Protocol == config.ProtocolCLI && slices.Contains(bt.APIKeyEnv, keyEnv) {
			envs = bt.APIKeyEnv
		}
		for _, bt := range config.BackendTypes {
			if bt.DefaultBaseURL != "" && slices.ContainsFunc(envs, func(v string) bool { return slices.Contains(bt.APIKeyEnv, v) }) {
				urls = append(urls, bt.DefaultBaseURL)
			}
		}
	}
	var out []endpoint
	for _, u := range urls {
		e, err := parseEndpoint(u)
		if err != nil {
			continue
		}
		out = append(out, e)
		if e.host == "localhost" {
			for _, h := range []string{"127.0.0.1", "::1"} {
				l := e
				l.host = h
				out = append(out, l)
			}
		}
	}
	return out
}

// Check refuses agent's endpoint unless the worker may call it with the key read from
// keyEnv ("" for none). The error names the agent, the endpoint (without credentials) and the
// flag that allows it; it never holds a key.
func (a *Allowlist) Check(agent config.Agent, keyEnv string) error {
	b := agent.Backend
	switch config.BackendTypes[b.Type].Protocol {
	case config.ProtocolScripted:
		return nil
	case config.ProtocolResponses, config.ProtocolChat, config.ProtocolMessages, config.ProtocolGemini:
	case config.ProtocolCLI:
		if b.BaseURL == "" {
			return nil // the CLI calls its vendor's own API, as it does when run by hand
		}
	default:
		return fmt.Errorf("agent %s: backend type %s does not run on Temporal workers", agent.ID, b.Type)
	}
	raw := cmpOr(b.BaseURL, config.BackendTypes[b.Type].DefaultBaseURL)
	shown := shownURL(raw)
	e, err := parseEndpoint(raw)
	if err != nil {
		return fmt.Errorf("agent %s: this worker does not send requests to base_url %s: %v", agent.ID, shown, err)
	}
	var allowed []endpoint
	if a != nil {
		allowed = a.extra
	}
	for _, ok := range append(ownEndpoints(b.Type, keyEnv), allowed...) {
		if e.within(ok) {
			return nil
		}
	}
	whose := "its requests"
	if keyEnv != "" {
		whose = "the key in its " + keyEnv
	}
	return fmt.Errorf("agent %s: this worker does not send %s to %s: that is not %s's own endpoint; "+
		"if you run this worker and trust that server, start it with --allow-base-url %s (or set %s)",
		agent.ID, whose, shown, b.Type, shown, AllowBaseURLEnv)
}

// shownURL is raw for messages: without credentials, query or fragment, which may hold keys.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an invalid URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}
