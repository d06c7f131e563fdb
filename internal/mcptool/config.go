package mcptool

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"massgen/internal/lazy"
)

// Server types.
const (
	TypeStdio          = "stdio"
	TypeStreamableHTTP = "streamable-http"
)

// Timeouts and the limits of MassGen's validator.
const (
	// DefaultTimeout bounds one tool call when Server.Timeout is zero. MassGen's own default
	// (400 s) exceeds the engine's per-call bound; two minutes leaves room for slow tools
	// (search, browsers) without letting a stuck server hold an agent for long.
	DefaultTimeout = 120 * time.Second
	// MaxTimeout is the largest Server.Timeout Validate accepts.
	MaxTimeout = 300 * time.Second

	maxNameLen = 100
	maxArgs    = 50
	maxArgLen  = 500
)

// Server is one entry of a backend's mcp_servers list, as written in the config. Fields holding
// ${VAR} references are expanded by the Manager at start (see [Expand]).
type Server struct {
	// Name identifies the server: [A-Za-z0-9_-]+, at most 100 characters, unique per backend.
	// It is the <server> part of every exposed tool name.
	Name string
	// Type is "stdio" (the default when empty) or "streamable-http". "sse" is refused.
	Type string

	// Command is the executable of a stdio server, looked up in PATH. Required for stdio.
	Command string
	// Args are the command's arguments; ${VAR} is expanded in each.
	Args []string
	// Env is added to the server's environment; ${VAR} is expanded in the values. Variables set
	// here are passed even when they look like secrets (see [Manager]).
	Env map[string]string
	// Cwd is the working directory of a stdio server; empty means massgen's. No "..".
	Cwd string

	// URL is the endpoint of a streamable-http server: http or https. Required for that type.
	URL string
	// Headers are sent with every HTTP request; ${VAR} is expanded in the values.
	Headers map[string]string

	// Timeout bounds each tool call; zero means DefaultTimeout. At most MaxTimeout.
	Timeout time.Duration

	// AllowedTools, when not empty, replaces the backend-level allow-list for this server.
	// ExcludeTools is added to the backend-level exclude list. Both name the server's own tool
	// names; the exposed form mcp__<server>__<tool> is accepted too.
	AllowedTools, ExcludeTools []string
}

// kind returns the effective type.
func (s Server) kind() string {
	if s.Type == "" {
		return TypeStdio
	}
	return s.Type
}

// CallTimeout is the effective per-call timeout, for clients that call the server themselves
// (the coding-agent CLIs).
func (s Server) CallTimeout() time.Duration { return s.timeout() }

// timeout returns the effective per-call timeout.
func (s Server) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

// key is the canonical identity of a running server: two declarations with the same key share
// one process or session. Filters and timeouts are per declaration and not part of it.
func (s Server) key() string {
	type canon struct {
		Name, Type, Command string
		Args                []string
		Env                 [][2]string
		Cwd, URL            string
		Headers             [][2]string
	}
	pairs := func(m map[string]string) [][2]string {
		var out [][2]string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, [2]string{k, m[k]})
		}
		return out
	}
	c := canon{s.Name, s.kind(), s.Command, s.Args, pairs(s.Env), s.Cwd, s.URL, pairs(s.Headers)}
	if c.Type == TypeStreamableHTTP {
		c.Command, c.Args, c.Env, c.Cwd = "", nil, nil, ""
	} else {
		c.URL, c.Headers = "", nil
	}
	b, _ := json.Marshal(c) // cannot fail: strings only
	return string(b)
}

// FieldError is one problem with one field of a Server, so that the config loader can point at
// the right line. Validate and Expand return these joined with errors.Join.
type FieldError struct {
	Server string // the server's name, possibly empty
	Field  string // the config key: "name", "type", "command", "args[2]", "env.TOKEN", ...
	Msg    string // what is wrong
	Hint   string // how to fix it; may be empty
}

func (e *FieldError) Error() string {
	s := fmt.Sprintf("mcp server %q: %s: %s", e.Server, e.Field, e.Msg)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

var nameRE = lazy.Regexp(`^[A-Za-z0-9_-]+$`)

// Validate reports every problem with s (unexpanded, as written in the config) joined with
// errors.Join; each is a *FieldError. It does not check that the command exists.
func Validate(s Server) error {
	var errs []error
	add := func(field, hint, format string, a ...any) {
		errs = append(errs, &FieldError{Server: s.Name, Field: field, Msg: fmt.Sprintf(format, a...), Hint: hint})
	}
	switch {
	case s.Name == "":
		add("name", "give every MCP server a name such as weather", "missing")
	case len(s.Name) > maxNameLen:
		add("name", "", "%d characters, at most %d allowed", len(s.Name), maxNameLen)
	case !nameRE().MatchString(s.Name):
		add("name", "use letters, digits, _ and -", "%q has invalid characters", s.Name)
	case strings.Trim(s.Name, "_-") == "":
		add("name", "", "%q needs at least one letter or digit", s.Name)
	}
	switch s.kind() {
	case TypeStdio:
		if strings.TrimSpace(s.Command) == "" {
			add("command", "for example command: npx", "missing; stdio servers need a command")
		}
		if len(s.Args) > maxArgs {
			add("args", "", "%d arguments, at most %d allowed", len(s.Args), maxArgs)
		}
		for i, a := range s.Args {
			if len(a) > maxArgLen {
				add(fmt.Sprintf("args[%d]", i), "", "%d characters, at most %d allowed", len(a), maxArgLen)
			}
		}
		if slices.Contains(strings.FieldsFunc(s.Cwd, func(r rune) bool { return r == '/' || r == '\\' }), "..") {
			add("cwd", "use a path without ..", "%q must not contain ..", s.Cwd)
		}
	case TypeStreamableHTTP:
		if s.URL == "" {
			add("url", "for example url: http://localhost:8000/mcp", "missing; streamable-http servers need a url")
		} else if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("url", "", "%q is not an http(s) URL", s.URL)
		}
	case "sse":
		add("type", "use type: streamable-http; most servers serve it at /mcp", "sse is deprecated and not supported")
	default:
		add("type", "", "unknown %q (want stdio or streamable-http)", s.Type)
	}
	if s.Timeout < 0 || s.Timeout > MaxTimeout {
		add("timeout", "", "%s out of range (want a positive duration of at most %s)", s.Timeout, MaxTimeout)
	}
	return errors.Join(errs...)
}

// Expand returns s with ${VAR} replaced by getenv("VAR") in Args, Env values and Headers values;
// nothing else is expanded. A missing or empty variable is an error naming it and the server
// (a *FieldError per occurrence, joined). Text without ${ is left as is.
func Expand(s Server, getenv func(string) string) (Server, error) {
	var errs []error
	exp := func(field, v string) string {
		out, err := expandString(v, getenv)
		if err != nil {
			errs = append(errs, &FieldError{Server: s.Name, Field: field, Msg: err.Error(), Hint: "set it in the environment or in a .env file"})
		}
		return out
	}
	if s.Args != nil {
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = exp(fmt.Sprintf("args[%d]", i), a)
		}
		s.Args = args
	}
	expMap := func(field string, m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out[k] = exp(field+"."+k, m[k])
		}
		return out
	}
	s.Env = expMap("env", s.Env)
	s.Headers = expMap("headers", s.Headers)
	return s, errors.Join(errs...)
}

var varRE = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expandString replaces each ${NAME} in v.
func expandString(v string, getenv func(string) string) (string, error) {
	if !strings.Contains(v, "${") {
		return v, nil
	}
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			break
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", v)
		}
		name := v[i+2 : i+j]
		if !varRE().MatchString(name) {
			return "", fmt.Errorf("invalid variable name %q in ${...}", name)
		}
		val := getenv(name)
		if val == "" {
			missing = append(missing, name)
		}
		b.WriteString(v[:i])
		b.WriteString(val)
		v = v[i+j+1:]
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set or empty", strings.Join(missing, ", "))
	}
	return b.String(), nil
}
