package mcptool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/provider"
	"massgen/internal/tool"
)

// Statuses reported through Options.OnStatus.
const (
	StatusStarting = "starting" // detail: the command line (unexpanded) or URL
	StatusReady    = "ready"    // detail: "N tools"
	StatusFailed   = "failed"   // detail: why, with the stderr tail of a stdio server
	StatusDied     = "died"     // detail: how it ended, with the stderr tail; reported once
	StatusStopped  = "stopped"  // detail: empty, or the shutdown error
)

// ErrClosed is returned by Tools after Close.
var ErrClosed = errors.New("mcptool: manager closed")

// Options configure a Manager. The zero value is usable.
type Options struct {
	// OnStatus receives each server's lifecycle changes (the Status* constants). It is called
	// from several goroutines, possibly concurrently, and must return quickly. nil discards.
	OnStatus func(server, status, detail string)
	// OnStderr receives every stderr line of stdio servers, for a debug log. This package never
	// prints server output. nil discards.
	OnStderr func(server, line string)
	// Getenv resolves ${VAR} in server configs; nil means os.Getenv.
	Getenv func(string) string
	// Environ is the environment stdio servers inherit (minus secret-looking variables); nil
	// means os.Environ.
	Environ func() []string
	// StartTimeout bounds starting one server and listing its tools; zero means 60 s (npx may
	// have to download the package first).
	StartTimeout time.Duration
	// ShutdownGrace is how long Close waits after closing a stdio server's stdin, and again
	// after SIGTERM, before escalating; zero means 2 s.
	ShutdownGrace time.Duration
	// StderrLines is how many stderr lines of a stdio server are kept for error messages; zero
	// means 20.
	StderrLines int
	// ClientVersion is sent to servers as the client's version; empty means "dev".
	ClientVersion string
}

// Manager starts the MCP servers of one session and closes them. Servers are started lazily by
// Tools and shared: declarations with the same name and the same command, args, env, cwd, url
// and headers (after ${VAR} expansion) get one process or session. A Manager is safe for
// concurrent use. Close must be called, and it is safe to call it more than once.
type Manager struct {
	opts   Options
	ctx    context.Context // lives until Close; starts run under it
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	conns  map[string]*conn
	order  []*conn

	starts sync.WaitGroup // start goroutines
	bg     sync.WaitGroup // watchers and calls

	closeOnce sync.Once
	closeErr  error
}

// NewManager returns a Manager with no server running.
func NewManager(opts Options) *Manager {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 2 * time.Second
	}
	if opts.StderrLines <= 0 {
		opts.StderrLines = 20
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{opts: opts, ctx: ctx, cancel: cancel, conns: map[string]*conn{}}
}

func (m *Manager) status(server, status, detail string) {
	if m.opts.OnStatus != nil {
		m.opts.OnStatus(server, status, detail)
	}
}

// Tools starts (or reuses) the given servers of one agent and returns their tools, named
// mcp__<server>__<tool>, in server order then the server's order. allowed and excluded are
// the backend-level filters (see Server.AllowedTools). Servers are started concurrently; one
// that is invalid yields a *FieldError, one that cannot be used (it fails to start, or died)
// a *StartError, and a tool left out a *ToolWarning; each names its server and says why, and
// the others are unaffected. Waiting stops early when ctx is done, but the servers keep starting (they belong
// to the Manager, and a later call reuses them).
func (m *Manager) Tools(ctx context.Context, servers []Server, allowed, excluded []string) (tool.Set, []error) {
	var errs []error
	type pending struct {
		decl Server
		c    *conn
	}
	var todo []pending
	names := map[string]bool{}
	for _, s := range servers {
		if err := Validate(s); err != nil {
			errs = append(errs, err)
			continue
		}
		if names[s.Name] {
			errs = append(errs, &FieldError{Server: s.Name, Field: "name", Msg: "declared twice for this agent", Hint: "give each server its own name"})
			continue
		}
		names[s.Name] = true
		xs, err := Expand(s, m.opts.Getenv)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c, err := m.conn(s, xs)
		if err != nil {
			return nil, append(errs, err)
		}
		todo = append(todo, pending{xs, c})
	}
	var set tool.Set
	have := map[string]bool{}
	for _, p := range todo {
		select {
		case <-p.c.ready:
		case <-ctx.Done():
			errs = append(errs, &StartError{Server: p.decl.Name, Target: p.c.shown, Command: p.c.program, Err: context.Cause(ctx)})
			continue
		}
		if p.c.err != nil {
			errs = append(errs, p.c.err)
			continue
		}
		select {
		case <-p.c.dead: // it died since another agent started it
			errs = append(errs, &StartError{Server: p.decl.Name, Target: p.c.shown, Command: p.c.program,
				Err: fmt.Errorf("not running (%s)", p.c.deadMsg)})
			continue
		default:
		}
		f := newToolFilter(p.decl, allowed, excluded)
		if bad := f.unmatched(p.c.tools); len(bad) > 0 {
			errs = append(errs, &ToolWarning{Server: p.decl.Name,
				Msg: fmt.Sprintf("allowed_tools: unknown tool %s (the server has %s)", strings.Join(bad, ", "), p.c.toolNames())})
		}
		for _, t := range p.c.tools {
			if !f.keep(t.Name) {
				continue
			}
			tt := p.c.tool(p.decl, t)
			if have[tt.Spec.Name] {
				errs = append(errs, &ToolWarning{Server: p.decl.Name, Msg: fmt.Sprintf("tool %q: name %s is already taken; tool skipped", t.Name, tt.Spec.Name)})
				continue
			}
			have[tt.Spec.Name] = true
			set = append(set, tt)
		}
	}
	return set, errs
}

// conn returns the connection for xs (decl expanded), starting it on first use.
func (m *Manager) conn(decl, xs Server) (*conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	k := xs.key()
	if c, ok := m.conns[k]; ok {
		return c, nil
	}
	c := &conn{m: m, srv: xs, shown: target(decl), ready: make(chan struct{}), dead: make(chan struct{})}
	if xs.kind() != TypeStreamableHTTP {
		c.program = decl.Command
	}
	m.conns[k] = c
	m.order = append(m.order, c)
	m.starts.Add(1)
	go func() {
		defer m.starts.Done()
		c.start()
	}()
	return c, nil
}

// Retry forgets the servers that failed to start or died, so that the next Tools call starts
// them afresh: a new turn of a conversation gets another chance. Running servers are kept.
func (m *Manager) Retry() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, c := range m.conns {
		select {
		case <-c.ready:
		default:
			continue // still starting
		}
		select {
		case <-c.dead:
			delete(m.conns, k)
			continue
		default:
		}
		if c.err != nil {
			delete(m.conns, k)
		}
	}
}

// goBG runs f on a goroutine that Close waits for; it reports false after Close began.
func (m *Manager) goBG(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		f()
	}()
	return true
}

// Close stops every server and waits until they are gone: stdio servers get their stdin
// closed, then SIGTERM and finally SIGKILL sent to their whole process group. Servers still
// starting are cancelled. It does not depend on any caller context, so it works after a
// cancellation (Ctrl-C). Calling it again returns the first result.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		m.cancel()
		m.starts.Wait()
		var wg sync.WaitGroup
		errs := make([]error, len(m.order))
		for i, c := range m.order {
			if c.err != nil {
				continue
			}
			wg.Go(func() {
				err := c.shutdown()
				detail := ""
				if err != nil {
					errs[i] = fmt.Errorf("mcp server %q: stop: %w", c.srv.Name, err)
					detail = err.Error()
				}
				m.status(c.srv.Name, StatusStopped, detail)
			})
		}
		wg.Wait()
		m.bg.Wait()
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}

// conn is one running server, shared by every agent that declares it.
type conn struct {
	m     *Manager
	srv   Server // expanded
	shown string // the command line or URL as configured, without expanded secrets
	// program is the command of a stdio server as configured, "" for streamable-http.
	program string

	ready chan struct{} // closed when start has finished; then err, session and tools are set
	err   error
	cs    *mcp.ClientSession
	proc  *process       // stdio only
	httpT *httpTransport // streamable-http only
	tools []*mcp.Tool

	dead         chan struct{} // closed when the server died or was stopped
	deadMsg      string        // why; valid after dead is closed
	deadOnce     sync.Once
	shutdownOnce sync.Once
	shutdownErr  error
}

// start connects and lists the tools, then closes ready.
func (c *conn) start() {
	defer close(c.ready)
	name := c.srv.Name
	c.m.status(name, StatusStarting, c.shown)
	ctx, cancel := context.WithTimeout(c.m.ctx, c.m.opts.StartTimeout)
	defer cancel()
	err := c.connect(ctx)
	if err == nil {
		for t, lerr := range c.cs.Tools(ctx, nil) {
			if lerr != nil {
				err = fmt.Errorf("list tools: %w", lerr)
				break
			}
			c.tools = append(c.tools, t)
		}
	}
	if err != nil {
		if c.m.ctx.Err() != nil {
			err = fmt.Errorf("%w (stopped while starting)", ErrClosed)
		} else if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", c.m.opts.StartTimeout, err)
		}
		if c.proc != nil {
			c.proc.waitExit(500 * time.Millisecond) // so that the exit status can be reported
			err = fmt.Errorf("%w; %s", err, c.proc.describe())
		}
		c.err = &StartError{Server: name, Target: c.shown, Command: c.program, Err: err}
		_ = c.shutdown()
		c.m.status(name, StatusFailed, err.Error())
		return
	}
	c.m.status(name, StatusReady, fmt.Sprintf("%d tools", len(c.tools)))
	sessDone := make(chan struct{})
	c.m.goBG(func() {
		_ = c.cs.Wait()
		close(sessDone)
	})
	c.m.goBG(func() { c.watch(sessDone) })
}

// target describes what is started, for the "starting" status.
func target(s Server) string {
	if s.kind() == TypeStreamableHTTP {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

func (c *conn) connect(ctx context.Context) error {
	var tr mcp.Transport
	if c.srv.kind() == TypeStreamableHTTP {
		c.httpT = newHTTPTransport(c.srv.Headers)
		tr = &mcp.StreamableClientTransport{
			Endpoint:             c.srv.URL,
			HTTPClient:           &http.Client{Transport: c.httpT},
			DisableStandaloneSSE: true, // tools are listed once; no server-initiated messages needed
		}
	} else {
		var onLine func(string)
		if f := c.m.opts.OnStderr; f != nil {
			onLine = func(l string) { f(c.srv.Name, l) }
		}
		env := serverEnv(c.m.opts.Environ(), c.srv.Env)
		p, err := startProcess(c.srv, env, c.m.opts.StderrLines, onLine)
		if err != nil {
			return fmt.Errorf("start %s: %w", c.srv.Command, err)
		}
		c.proc = p
		tr = p.transport()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "massgen", Version: c.m.opts.ClientVersion}, nil)
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	c.cs = cs
	return nil
}

// watch waits for the session to end or the process to exit. Unless Close caused it, that is a
// death: it is reported once and the remains are cleaned up.
func (c *conn) watch(sessDone <-chan struct{}) {
	var exited <-chan struct{}
	if c.proc != nil {
		exited = c.proc.exited
	}
	select {
	case <-sessDone:
	case <-exited:
	}
	msg := "the connection closed"
	if c.proc != nil {
		c.proc.waitExit(500 * time.Millisecond)
		msg = c.proc.describe()
	}
	if c.markDead(msg, true) {
		_ = c.shutdown()
	}
}

// markDead records why the server is gone; it reports whether this call did it. A death is
// reported before dead is closed, so whoever sees a failed call has already seen the report.
func (c *conn) markDead(msg string, report bool) bool {
	did := false
	c.deadOnce.Do(func() {
		c.deadMsg = msg
		if report {
			c.m.status(c.srv.Name, StatusDied, msg)
		}
		close(c.dead)
		did = true
	})
	return did
}

// shutdown closes the session and stops the process; it runs once, later calls wait for it.
// A session that does not close within the grace period (an HTTP server slow to answer the
// closing DELETE, say) has its requests aborted.
func (c *conn) shutdown() error {
	c.shutdownOnce.Do(func() {
		c.markDead("it was stopped", false)
		grace := c.m.opts.ShutdownGrace
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			if c.cs != nil {
				_ = c.cs.Close() // errors here only say that the server was already gone
			}
		}()
		if c.proc != nil {
			c.shutdownErr = c.proc.stop(grace) // closes the pipes, which ends the session too
		}
		select {
		case <-closed:
		case <-time.After(grace):
			if c.httpT != nil {
				c.httpT.abort()
			}
			<-closed
		}
		if c.httpT != nil {
			c.httpT.abort()
		}
	})
	return c.shutdownErr
}

func (c *conn) toolNames() string {
	names := make([]string, len(c.tools))
	for i, t := range c.tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// tool builds the tool.Tool for t as declared by decl.
func (c *conn) tool(decl Server, t *mcp.Tool) tool.Tool {
	name, renamed := ToolName(decl.Name, t.Name)
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if renamed {
		desc = strings.TrimSpace(desc + fmt.Sprintf("\n\n(Tool %q of MCP server %q; renamed to fit provider name rules.)", t.Name, decl.Name))
	}
	timeout, raw := decl.timeout(), t.Name
	return tool.Tool{
		Spec: provider.ToolSpec{Name: name, Description: desc, Parameters: objectSchema(t.InputSchema)},
		Run: func(ctx context.Context, args string) tool.Result {
			return c.call(ctx, name, raw, timeout, args)
		},
	}
}
