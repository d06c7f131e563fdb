// Package web is `massgen serve`: an OpenAI-compatible chat API where each configured team is a
// model, and a dashboard that lists the sessions in the log directory, starts runs, shows a
// running session live over server-sent events and replays finished ones from their
// events.jsonl. Only running sessions live in memory; everything else is read from the log
// directory, so every view is a projection of the same event stream the CLI writes.
package web

import (
	"massgen/internal/httpserve"
	"massgen/internal/lazy"

	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
)

// RunFunc runs one turn of a team; app.Run is the real one.
type RunFunc func(ctx context.Context, cfg *config.Config, o app.Options) (app.Result, error)

// Options configure a Server. The zero value of every field but Teams is usable.
type Options struct {
	// Teams maps a team name (the `model` of the chat API) to its config. Names are 1 to 64
	// letters, digits, '.', '_' or '-', starting with a letter or digit; TeamName gives the
	// usual one. The configs are read, never modified.
	Teams map[string]*config.Config
	// LogRoot is the log directory every session is written to and the dashboard reads
	// (default .massgen/massgen_logs). Nothing outside it is ever served.
	LogRoot string
	// Token, when set, is required as "Authorization: Bearer <Token>" by every request (the
	// dashboard also accepts it once as ?token= and then keeps it in a cookie).
	Token string
	// NoToken serves without a token: only on loopback addresses, and any local process may
	// then start runs as the user (massgen's --no-token). It must be chosen: an empty Token
	// alone is refused, so a caller that forgets the token fails at start instead of serving.
	NoToken bool
	// Version is shown by the dashboard and written to each session's metadata.json.
	Version string
	// MaxSessions caps the sessions running at once (each one spends tokens); a request for one
	// more is answered 429 with Retry-After. Zero means no cap.
	MaxSessions int
	// ReadTimeout bounds how long a client may take to send a request, headers and body
	// (default 30 s; headers alone at most 10 s): a client that trickles one is cut off. It
	// never limits how long an answer takes or a stream stays open.
	ReadTimeout time.Duration
	// Run runs a session; nil means app.Run. Tests inject their own.
	Run RunFunc
	// Now is the clock for response timestamps; nil means time.Now.
	Now func() time.Time
	// SetupDir is the only folder the setup wizard may save configs to; "" means it saves
	// nothing. A saved config becomes a team at once.
	SetupDir string
	// Getenv tells the wizard which providers have keys (only whether, never the value); nil
	// means os.Getenv.
	Getenv func(string) string
	// Log, when set, gets a line as each session starts and ends (massgen serve's stdout).
	Log io.Writer
	// MemoryDir is the persistent memory store the Memory page lists and forgets from, as
	// `massgen memory` does; "" means ~/.massgen/memory (app.StoreDir).
	MemoryDir string
}

// Server serves the chat API and the dashboard. Its methods are safe for concurrent use.
type Server struct {
	teamMu   sync.RWMutex
	teams    map[string]*config.Config // guarded by teamMu: the wizard adds teams
	names    []string                  // team names, sorted; guarded by teamMu
	byPath   map[string]string         // config path (as given and absolute) -> team name; guarded by teamMu
	setupDir string
	getenv   func(string) string
	log      *lineLog
	logRoot  string
	token    string
	version  string
	run      RunFunc
	now      func() time.Time
	created  int64 // Unix time the server was made: the models' "created"
	handler  http.Handler

	// memoryDir is the memory store's folder; "" when there is none (memoryErr says why).
	memoryDir, memoryErr string

	base   context.Context // parent of every session; cancelled by Close
	cancel context.CancelFunc

	maxSessions int
	readTimeout time.Duration

	mu      sync.Mutex
	closed  bool
	active  int                 // sessions started and not yet ended, counted against maxSessions
	running map[string]*session // by id, log_<ts>/turn_<n>
	wg      sync.WaitGroup      // session goroutines
}

var teamName = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// TeamName returns the name a config is served under by default: its file's base name without
// the extension ("examples/demo.yaml" is "demo").
func TeamName(cfg *config.Config) string {
	base := filepath.Base(cfg.Path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// NewServer checks opts and returns a server. It starts nothing: call Serve, or mount Handler
// and call Close when done.
func NewServer(opts Options) (*Server, error) {
	if len(opts.Teams) == 0 && opts.SetupDir == "" {
		// With a setup folder the wizard can add the first team; without, nothing could run.
		return nil, errors.New("no team configured: pass at least one config")
	}
	if opts.MaxSessions < 0 {
		return nil, fmt.Errorf("max sessions is %d: use 0 for no cap or a positive number", opts.MaxSessions)
	}
	if (opts.Token == "") != opts.NoToken {
		return nil, errors.New("set either a token or NoToken (serving without one, on loopback only)")
	}
	teams := make(map[string]*config.Config, len(opts.Teams))
	for k, v := range opts.Teams {
		teams[k] = v
	}
	s := &Server{
		teams:    teams,
		setupDir: opts.SetupDir,
		getenv:   opts.Getenv,
		log:      &lineLog{w: opts.Log},
		byPath:   map[string]string{},
		logRoot:  opts.LogRoot,
		token:    opts.Token,
		version:  opts.Version,
		run:      opts.Run,
		now:      opts.Now,
		running:  map[string]*session{},

		maxSessions: opts.MaxSessions,
		readTimeout: opts.ReadTimeout,
	}
	if opts.ReadTimeout < 0 {
		return nil, fmt.Errorf("read timeout is %v: use 0 for the default or a positive duration", opts.ReadTimeout)
	}
	if s.readTimeout == 0 {
		s.readTimeout = defaultReadTimeout
	}
	for name, cfg := range opts.Teams {
		if !teamName().MatchString(name) {
			return nil, fmt.Errorf("team name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
		}
		if cfg == nil {
			return nil, fmt.Errorf("team %q has no config", name)
		}
		s.names = append(s.names, name)
		if cfg.Path != "" {
			s.byPath[cfg.Path] = name
			if abs, err := filepath.Abs(cfg.Path); err == nil {
				s.byPath[abs] = name
			}
		}
	}
	sort.Strings(s.names)
	if s.logRoot == "" {
		s.logRoot = filepath.Join(".massgen", "massgen_logs")
	}
	if s.run == nil {
		s.run = app.Run
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.getenv == nil {
		s.getenv = os.Getenv
	}
	if s.memoryDir = opts.MemoryDir; s.memoryDir == "" {
		if dir, err := app.StoreDir(); err != nil {
			s.memoryErr = err.Error()
		} else {
			s.memoryDir = dir
		}
	}
	s.created = s.now().Unix()
	s.base, s.cancel = context.WithCancel(context.Background())
	s.handler = s.routes()
	return s, nil
}

// Handler returns the server's HTTP handler: the chat API under /v1, the dashboard's JSON API
// under /api and the dashboard itself.
func (s *Server) Handler() http.Handler { return s.handler }

// Close cancels every running session and waits until each has finished writing its log
// directory (they end as interrupted). Sessions cannot be started afterwards. Close is
// idempotent and always returns nil.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// shutdownGrace bounds how long Serve waits for open requests after the sessions ended.
const shutdownGrace = 10 * time.Second

// Listen checks that addr may be served (a loopback address, or any address with a token) and
// listens on it.
func (s *Server) Listen(addr string) (net.Listener, error) {
	if err := s.checkAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serving the dashboard: %w", err)
	}
	return ln, nil
}

// Serve listens on addr and serves until ctx is done, then shuts down as ServeListener does.
func (s *Server) Serve(ctx context.Context, addr string) error {
	ln, err := s.Listen(addr)
	if err != nil {
		return err
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener serves on ln until ctx is done or ln fails, and closes ln. On the way out it
// cancels the running sessions and waits for them to write their logs (Close), then waits up
// to 10 s for open requests. It returns nil after a shutdown asked for by ctx.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	if err := s.checkAddr(ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	// No WriteTimeout: answers take as long as their sessions and streams stay open; writes
	// to streams have their own deadline (stallWriter). ReadTimeout does not cut long
	// requests short: net/http lifts it once the body has been read to the end (readBody).
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: min(maxHeaderWait, s.readTimeout),
		ReadTimeout:       s.readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	served := false
	select {
	case <-ctx.Done():
	case err = <-errc:
		served = true
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		srv.Close()
	}
	if !served {
		err = <-errc
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("serving the dashboard: %w", err)
	}
	return nil
}

func (s *Server) checkAddr(addr string) error { return httpserve.CheckAddr(addr, s.token) }

// routes builds the handler: security checks first, then the routes.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handleIndex)
	mux.Handle("GET /static/", staticHandler())

	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /v1/models/{model}", s.handleModel)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("/v1/", s.handleAPINotFound)

	mux.HandleFunc("GET /api/teams", s.handleTeams)
	mux.HandleFunc("GET /api/sessions", s.handleSessions)
	mux.HandleFunc("POST /api/runs", s.handleStartRun)
	mux.HandleFunc("GET /api/sessions/{log}/{turn}", s.handleSession)
	mux.HandleFunc("GET /api/sessions/{log}/{turn}/events", s.handleEvents)
	mux.HandleFunc("GET /api/sessions/{log}/{turn}/stream", s.handleStream)
	mux.HandleFunc("POST /api/sessions/{log}/{turn}/cancel", s.handleCancel)
	mux.HandleFunc("POST /api/sessions/{log}/{turn}/permissions/{ask_id}", s.handleAnswer)
	mux.HandleFunc("POST /api/sessions/{log}/{turn}/questions/{ask_id}", s.handleReply)
	mux.HandleFunc("POST /api/sessions/{log}/{turn}/agents/{agent}/stop", s.handleStopAgent)
	mux.HandleFunc("POST /api/sessions/{log}/{turn}/answer-now", s.handleAnswerNow)
	mux.HandleFunc("POST /api/sessions/{log}/{turn}/messages", s.handleMessage)
	mux.HandleFunc("POST /api/sessions/{log}/{turn}/followup", s.handleFollowUp)
	mux.HandleFunc("GET /api/sessions/{log}/{turn}/files", s.handleFiles)
	mux.HandleFunc("GET /api/sessions/{log}/{turn}/file", s.handleFile)
	mux.HandleFunc("GET /api/setup", s.handleSetup)
	mux.HandleFunc("POST /api/setup/validate", s.handleValidate)
	mux.HandleFunc("POST /api/setup/save", s.handleSave)
	mux.HandleFunc("GET /api/examples/{name}", s.handleExample)
	mux.HandleFunc("GET /api/memory", s.handleMemory)
	mux.HandleFunc("POST /api/memory/forget", s.handleForget)
	mux.HandleFunc("/api/", s.handleAPINotFound)
	return s.guard(mux)
}

// team returns the config of team name.
func (s *Server) team(name string) (*config.Config, bool) {
	s.teamMu.RLock()
	defer s.teamMu.RUnlock()
	cfg, ok := s.teams[name]
	return cfg, ok
}

// teamList returns the team names, sorted, and their configs.
func (s *Server) teamList() ([]string, []*config.Config) {
	s.teamMu.RLock()
	defer s.teamMu.RUnlock()
	cfgs := make([]*config.Config, len(s.names))
	for k, n := range s.names {
		cfgs[k] = s.teams[n]
	}
	return slices.Clone(s.names), cfgs
}

// addTeam serves cfg as team name from now on; false when the name is taken.
func (s *Server) addTeam(name string, cfg *config.Config) bool {
	s.teamMu.Lock()
	defer s.teamMu.Unlock()
	if _, ok := s.teams[name]; ok {
		return false
	}
	s.teams[name] = cfg
	s.names = append(s.names, name)
	sort.Strings(s.names)
	if cfg.Path != "" {
		s.byPath[cfg.Path] = name
		if abs, err := filepath.Abs(cfg.Path); err == nil {
			s.byPath[abs] = name
		}
	}
	return true
}

// teamByPath names the team served from config file path.
func (s *Server) teamByPath(path string) (string, bool) {
	s.teamMu.RLock()
	defer s.teamMu.RUnlock()
	name, ok := s.byPath[path]
	return name, ok
}
