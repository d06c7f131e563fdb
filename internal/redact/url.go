package redact

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// secretParam matches query parameter names whose values are credentials (?key=, ?api-key=,
// ?access_token=, ?sig=, ...).
var secretParam = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(key|token|secret|pass|pwd|auth|sig|credential|session)`)
})

// URL returns raw as it may be shown: the userinfo (user:password@, or a token given as the
// user) and the values of credential-like query parameters replaced by Marker. Text that does
// not parse as a URL loses what lies between "://" and the last "@" before its query, which
// is where a password would be, and its credential-like query values.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return unparsedURL(raw)
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" {
		return raw
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme + ":")
	}
	if u.Opaque != "" {
		b.WriteString(u.Opaque)
	} else {
		if u.Scheme != "" || u.Host != "" || u.User != nil {
			b.WriteString("//")
		}
		if u.User != nil {
			b.WriteString(Marker + "@")
		}
		b.WriteString(u.Host)
		b.WriteString(u.EscapedPath())
	}
	if u.ForceQuery || u.RawQuery != "" {
		b.WriteString("?" + redactQuery(u.RawQuery))
	}
	if u.Fragment != "" {
		b.WriteString("#" + redactQuery(u.EscapedFragment()))
	}
	return b.String()
}

// unparsedURL redacts a URL that does not parse: everything before the last '@' ahead of the
// query is taken as userinfo, and the query as parameters.
func unparsedURL(raw string) string {
	rest, query, hasQuery := strings.Cut(raw, "?")
	if i := strings.Index(rest, "://"); i >= 0 {
		if j := strings.LastIndex(rest[i:], "@"); j >= 0 {
			rest = rest[:i+3] + Marker + rest[i+j:]
		}
	}
	if hasQuery {
		return rest + "?" + redactQuery(query)
	}
	return rest
}

// redactQuery replaces the values of credential-like parameters in a raw query, keeping the
// order and spelling of everything else.
func redactQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if secretParam().MatchString(name) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + Marker
		}
	}
	return strings.Join(parts, "&")
}

// URLSecrets returns the secret parts of raw (the user and password, credential-like query
// values), both as written and decoded, so a Redactor also removes them from text that quotes
// the URL, such as a connection error.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	add := func(escaped, plain string) {
		out = append(out, escaped)
		if plain != escaped {
			out = append(out, plain)
		}
	}
	if u.User != nil {
		user := u.User.Username()
		if pw, ok := u.User.Password(); ok {
			add(url.PathEscape(pw), pw)
			add(url.QueryEscape(pw), pw)
		} else {
			// A lone user is usually a token (https://TOKEN@host).
			add(url.PathEscape(user), user)
		}
	}
	for _, q := range []string{u.RawQuery, u.EscapedFragment()} {
		for _, p := range strings.Split(q, "&") {
			name, val, ok := strings.Cut(p, "=")
			if !ok || val == "" {
				continue
			}
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if !secretParam().MatchString(name) {
				continue
			}
			plain := val
			if v, err := url.QueryUnescape(val); err == nil {
				plain = v
			}
			add(val, plain)
		}
	}
	return out
}
