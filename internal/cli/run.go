package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
	"massgen/internal/runlog"
	"massgen/internal/usage"
	"massgen/internal/view"
)

// Exit codes (design.md section 4).
const (
	ExitOK          = 0
	ExitConfig      = 1
	ExitExecution   = 2
	ExitTimeout     = 3
	ExitInterrupted = 4
)

// runOptions are the flags of a run.
type runOptions struct {
	configPath          string
	backend, model      string
	baseURL, sysMessage string
	automation          bool
	noDisplay, noLogs   bool
	debug               bool
	orchestratorTimeout int
	logRoot             string
	args                []string
}

// exitError carries an exit code with the message printed for it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// loadConfig resolves the config from --config, the quick-setup flags or the default places,
// printing warnings to stderr.
func loadConfig(o runOptions, stderr io.Writer) (*config.Config, error) {
	var cfg *config.Config
	var rep config.Report
	switch {
	case o.configPath != "":
		cfg, rep = config.Load(o.configPath)
	case o.backend != "" || o.model != "":
		backend := o.backend
		if backend == "" {
			if backend = inferBackend(o.model); backend == "" {
				return nil, exitf(ExitConfig, "cannot tell which backend serves model %q: add --backend TYPE (one of %s)",
					o.model, strings.Join(config.BackendTypeNames(), ", "))
			}
		}
		cfg, rep = config.QuickAgent(backend, o.model, o.baseURL, o.sysMessage)
	default:
		if path := defaultConfig(); path != "" {
			cfg, rep = config.Load(path)
			break
		}
		team, err := defaultTeam(os.Getenv)
		if err != nil {
			return nil, &exitError{code: ExitConfig, err: err}
		}
		cfg, rep = config.Parse("", []byte(team))
	}
	if !rep.OK() {
		fmt.Fprint(stderr, rep.Text())
		return nil, &exitError{code: ExitConfig, err: errors.New("invalid configuration")}
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w.String())
	}
	return cfg, nil
}

// defaultConfig returns the first default config that exists: ./.massgen/config.yaml, then
// ~/.config/massgen/config.yaml.
func defaultConfig() string {
	candidates := []string{filepath.Join(".massgen", "config.yaml")}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "massgen", "config.yaml"))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// newProvider builds the backend of one agent.
func newProvider(b config.Backend) (provider.Provider, error) {
	switch b.Type {
	case "scripted":
		if b.Script == nil {
			return nil, errors.New("scripted backend without a script")
		}
		return scripted.New(*b.Script, b.Model), nil
	}
	return nil, fmt.Errorf("backend type %q is not supported yet in this build (use type: scripted for offline agents)", b.Type)
}

// logDir creates .massgen/massgen_logs/log_<timestamp>/turn_1 under root, never reusing a
// folder another run made: two runs started in the same microsecond get different names.
func logDir(root string, now time.Time) (string, string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", "", err
	}
	base := "log_" + strings.Replace(now.Format("20060102_150405.000000"), ".", "_", 1)
	name := base
	for n := 2; ; n++ {
		err := os.Mkdir(filepath.Join(root, name), 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || n > 1000 {
			return "", "", err
		}
		name = fmt.Sprintf("%s_%d", base, n)
	}
	turn := filepath.Join(root, name, "turn_1")
	if err := os.Mkdir(turn, 0o755); err != nil {
		return "", "", err
	}
	return name, turn, nil
}

// run executes one question; the error carries the exit code.
func run(ctx context.Context, o runOptions, question string, stdout, stderr io.Writer) error {
	if err := loadDotEnv(); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	cfg, err := loadConfig(o, stderr)
	if err != nil {
		return err
	}
	if o.orchestratorTimeout < 0 {
		return exitf(ExitConfig, "--orchestrator-timeout must be a positive number of seconds")
	}
	if o.orchestratorTimeout > 0 {
		cfg.Timeouts.Orchestrator = time.Duration(o.orchestratorTimeout) * time.Second
	}
	display := cfg.UI.DisplayType
	logging := cfg.UI.LoggingEnabled
	switch {
	case o.automation:
		display, logging = "silent", true
	case o.noDisplay:
		display = "simple"
	}
	if o.noLogs && !o.automation {
		logging = false
	}
	if o.debug {
		logging = true
	}

	agents := make([]engine.Agent, len(cfg.Agents))
	for i, a := range cfg.Agents {
		p, err := newProvider(a.Backend)
		if err != nil {
			return exitf(ExitConfig, "agents[%d] (%s): %v", i, a.ID, err)
		}
		agents[i] = engine.Agent{ID: a.ID, Backend: a.Backend.Type, Model: a.Backend.Model, System: a.SystemMessage, Params: a.Backend.Params, Provider: p}
	}

	bus := event.NewBus(nil)
	sessionID, turnDir := "", ""
	var closers []func() error
	if logging {
		root := o.logRoot
		if root == "" {
			root = filepath.Join(".massgen", "massgen_logs")
		}
		sessionID, turnDir, err = logDir(root, time.Now())
		if err != nil {
			return exitf(ExitExecution, "cannot create the log directory under %s: %v (fix its permissions, run from a writable folder, or pass --no-logs)", root, err)
		}
		rec, err := runlog.NewRecorder(turnDir, runlog.Meta{Version: Version, ConfigPath: cfg.Path, Config: redacted(cfg), Args: o.args})
		if err != nil {
			return exitf(ExitExecution, "cannot write the log directory %s: %v (fix its permissions or pass --no-logs)", turnDir, err)
		}
		bus.Subscribe(rec)
		closers = append(closers, rec.Close)
		logFile, err := os.Create(filepath.Join(turnDir, logName(o.debug)))
		if err != nil {
			return exitf(ExitExecution, "cannot write the log directory %s: %v", turnDir, err)
		}
		lv := view.NewPlain(logFile)
		lv.Timestamps, lv.Reasoning, lv.Calls = true, o.debug, o.debug
		bus.Subscribe(lv)
		closers = append(closers, logFile.Close)
	}
	switch display {
	case "silent":
		bus.Subscribe(view.NewAutomation(stdout))
	default:
		bus.Subscribe(view.NewPlain(stdout))
	}

	res := engine.Run(ctx, engine.Options{
		Question:     question,
		SessionID:    sessionID,
		LogDir:       turnDir,
		Agents:       agents,
		Orchestrator: cfg.Orchestrator,
		Timeouts:     cfg.Timeouts,
		Bus:          bus,
		Price:        usage.Cost,
	})
	var closeErr error
	for _, c := range closers {
		closeErr = errors.Join(closeErr, c())
	}
	if closeErr != nil {
		fmt.Fprintf(stderr, "massgen: some log files could not be written: %v\n", closeErr)
	}
	if display != "silent" && turnDir != "" {
		fmt.Fprintf(stdout, "logs: %s\n", turnDir)
	}
	if res.ExitCode != ExitOK {
		return &exitError{code: res.ExitCode, err: res.Err}
	}
	if closeErr != nil {
		return &exitError{code: ExitExecution, err: closeErr}
	}
	return nil
}

func logName(debug bool) string {
	if debug {
		return "massgen_debug.log"
	}
	return "massgen.log"
}
