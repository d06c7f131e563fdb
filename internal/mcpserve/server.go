// Package mcpserve is `massgen mcp`: an MCP server whose tools run massgen teams, so that a
// coding agent (Claude Code, Codex, Cursor, ...) can hand a question to a whole team and get
// back its final answer, winner and votes. ask_team runs one session, list_teams describes the
// teams and read_session summarises a past session from its log folder. It speaks stdio and
// streamable HTTP through the official go-sdk; every session is written to the log root as a
// command-line run is, so massgen logs, replay and serve show it too.
package mcpserve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"massgen/internal/lazy"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/app"
	"massgen/internal/config"
)

// RunFunc runs one turn of a team; app.Run is the real one.
type RunFunc func(ctx context.Context, cfg *config.Config, o app.Options) (app.Result, error)

// Team is a config served under a name.
type Team struct {
	Name   string
	Config *config.Config
}

// DefaultMaxQuestionBytes caps a question when Options.MaxQuestionBytes is 0: far above any
// prompt a person or an agent writes by hand, far below what would make every agent's every
// call an expensive mistake. Files belong in ask_team's files, which agents read as they need.
const DefaultMaxQuestionBytes = 256 << 10

// Options configure a Server. The zero value of every field but Teams is usable.
type Options struct {
	// Teams are the teams served, the first being the default of ask_team. Names are 1 to 64
	// letters, digits, '.', '_' or '-', starting with a letter or digit. The configs are
	// read, never modified.
	Teams []Team
	// LogRoot is where every session is written and read_session reads (default
	// .massgen/massgen_logs); it is made absolute.
	LogRoot string
	// Dir is the folder relative paths in ask_team's files are taken from and cwd_context
	// shares (default the current directory).
	Dir string
	// AllowPaths are the folders whose contents clients may share with ask_team's files,
	// context_paths and cwd_context (default Dir alone); each must be an existing folder.
	// Anything else a client names is refused: a client is not the server's owner.
	AllowPaths []string
	// Version is reported to clients and written to each session's metadata.json.
	Version string
	// MaxSessions caps the sessions running at once (each spends tokens); a call for one more
	// is a tool error saying the server is busy. Zero means no cap.
	MaxSessions int
	// MaxQuestionBytes caps a question's size (default DefaultMaxQuestionBytes).
	MaxQuestionBytes int
	// Token is the bearer token of the HTTP transport: required from every request when set
	// (without one the server listens on loopback only), and redacted from everything the
	// sessions write.
	Token string
	// Run runs a session; nil means app.Run. Tests inject their own.
	Run RunFunc
	// Now is the clock read_session judges running sessions by; nil means time.Now.
	Now func() time.Time
}

// Server is the MCP server. Its methods are safe for concurrent use.
type Server struct {
	teams    []Team
	byName   map[string]*config.Config
	logRoot  string
	dir      string
	allowed  []string // AllowPaths, absolute, symlinks resolved
	version  string
	token    string
	maxQ     int
	maxSess  int
	run      RunFunc
	now      func() time.Time
	mcp      *mcp.Server
	base     context.Context // parent of every session; cancelled by Close
	cancel   context.CancelFunc
	mu       sync.Mutex
	closed   bool
	active   int            // sessions running, counted against maxSess
	sessions sync.WaitGroup // the sessions' app.Run calls
}

var teamName = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// New checks opts and returns a server. It starts nothing: serve it with ServeStdio,
// ServeListener or Handler, or connect a transport with Connect.
func New(opts Options) (*Server, error) {
	if len(opts.Teams) == 0 {
		return nil, errors.New("mcpserve: no team configured: pass at least one config")
	}
	if opts.MaxSessions < 0 {
		return nil, fmt.Errorf("mcpserve: max sessions is %d: use 0 for no cap or a positive number", opts.MaxSessions)
	}
	if opts.MaxQuestionBytes < 0 {
		return nil, fmt.Errorf("mcpserve: max question size is %d: use 0 for the default or a positive number", opts.MaxQuestionBytes)
	}
	s := &Server{
		teams: opts.Teams, byName: map[string]*config.Config{},
		version: opts.Version, token: opts.Token, maxSess: opts.MaxSessions,
		maxQ: opts.MaxQuestionBytes, run: opts.Run, now: opts.Now,
	}
	for _, t := range opts.Teams {
		if !teamName().MatchString(t.Name) {
			return nil, fmt.Errorf("mcpserve: team name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", t.Name)
		}
		if t.Config == nil {
			return nil, fmt.Errorf("mcpserve: team %q has no config", t.Name)
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("mcpserve: two configs are served as team %q: name them NAME=FILE", t.Name)
		}
		s.byName[t.Name] = t.Config
	}
	var err error
	if s.logRoot, err = filepath.Abs(cmp.Or(opts.LogRoot, filepath.Join(".massgen", "massgen_logs"))); err != nil {
		return nil, fmt.Errorf("mcpserve: log root: %w", err)
	}
	if s.dir = opts.Dir; s.dir == "" {
		if s.dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("mcpserve: cannot tell the current directory: %w", err)
		}
	}
	if s.dir, err = filepath.Abs(s.dir); err != nil {
		return nil, fmt.Errorf("mcpserve: %w", err)
	}
	if s.allowed, err = allowedRoots(opts.AllowPaths, s.dir); err != nil {
		return nil, err
	}
	if s.maxQ == 0 {
		s.maxQ = DefaultMaxQuestionBytes
	}
	if s.run == nil {
		s.run = app.Run
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "massgen", Title: "MassGen", Version: s.version}, &mcp.ServerOptions{
		Instructions: instructions,
		// Tools only: no logging capability (the SDK's default) that would stay silent.
		Capabilities: &mcp.ServerCapabilities{},
	})
	s.addTools()
	return s, nil
}

const instructions = `massgen runs a team of LLM agents on one question: each writes an answer, reads the others'
(anonymised), improves on them or votes, and the most-voted agent presents the final answer.
Call ask_team with a self-contained question (a team run takes minutes, and costs what its
agents' calls cost); share files or folders read-only with files. list_teams names the teams;
read_session summarises a past session from its log_dir or session_id.`

// Connect serves one client over t until it disconnects; tests and embedders use it.
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	return s.mcp.Connect(ctx, t, nil)
}

// ServeStdio serves one client over in and out (newline-delimited JSON-RPC, as MCP's stdio
// transport) until the client closes in or ctx is done. On the way out it interrupts the
// running sessions and waits until each has written its log (Close).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	defer s.Close()
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil // asked to stop, or the client went away: both are a normal end
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Close interrupts every running session and waits until each has written its log
// directory; sessions cannot start afterwards. It is idempotent and returns nil.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.sessions.Wait()
	return nil
}

// errClosed refuses sessions once Close has begun.
var errClosed = errors.New("the massgen MCP server is shutting down")

// acquire takes a session slot; release gives it back.
func (s *Server) acquire() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errClosed
	case s.maxSess > 0 && s.active >= s.maxSess:
		return fmt.Errorf("busy: %d sessions are running, the most this server runs at once (massgen mcp --max-sessions); retry when one has ended", s.maxSess)
	}
	s.active++
	s.sessions.Add(1)
	return nil
}

func (s *Server) release() {
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
	s.sessions.Done()
}
