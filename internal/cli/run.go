package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// Exit codes (design.md section 4).
const (
	ExitOK          = app.ExitOK
	ExitConfig      = app.ExitConfig
	ExitExecution   = app.ExitExecution
	ExitTimeout     = app.ExitTimeout
	ExitInterrupted = app.ExitInterrupted
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
	if o.configPath != "" {
		// MassGen documents these as exclusive yet silently prefers the config; a run that
		// ignores the model the user named is a surprise on the bill.
		for _, q := range []struct{ flag, value string }{{"--backend", o.backend}, {"--model", o.model}, {"--base-url", o.baseURL}, {"--system-message", o.sysMessage}} {
			if q.value != "" {
				return nil, exitf(ExitConfig, "%s cannot be combined with --config: --backend, --model, --base-url and --system-message build a one-agent team without a file; "+
					"to change the team in %s, edit its backend keys (model, base_url) or system_message", q.flag, o.configPath)
			}
		}
	}
	switch {
	case o.configPath != "":
		cfg, rep = config.Load(o.configPath)
	case o.backend != "" || o.model != "":
		backend := o.backend
		if backend == "" {
			if backend = app.InferBackend(o.model); backend == "" {
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
		team, err := app.DefaultTeam(os.Getenv)
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

// run executes one question, or the interactive loop when question is empty; the error
// carries the exit code.
func run(ctx context.Context, o runOptions, question string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := app.LoadDotEnv(); err != nil {
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
	live := (display == "rich_terminal" || display == "terminal") && isTerminal(stdout, stdin)
	turn := func(opts app.Options) (app.Result, error) {
		opts.Logging, opts.LogRoot, opts.Debug, opts.Version, opts.Args = logging, o.logRoot, o.debug, Version, o.args
		if live {
			res, err := runLive(ctx, func(ctx context.Context, sinks []event.Sink) (app.Result, error) {
				opts.Sinks = sinks
				return app.Run(ctx, cfg, opts)
			}, stdin, stdout)
			if err == nil {
				err = finishTurn(res, display, stdout, stderr)
			}
			return res, exitErr(err)
		}
		var sink event.Sink = view.NewPlain(stdout)
		if display == "silent" {
			sink = view.NewAutomation(stdout)
		}
		opts.Sinks = []event.Sink{sink}
		res, err := app.Run(ctx, cfg, opts)
		if err == nil {
			err = finishTurn(res, display, stdout, stderr)
		}
		return res, exitErr(err)
	}
	if question == "" {
		if display == "silent" {
			return exitf(ExitConfig, "--automation needs a question: pass it as an argument")
		}
		return interactive(ctx, cfg, stdin, stdout, turn)
	}
	res, err := turn(app.Options{Question: question})
	if err != nil {
		return err
	}
	if res.ExitCode != ExitOK {
		return &exitError{code: res.ExitCode, err: res.Err}
	}
	if res.CloseErr != nil {
		return &exitError{code: ExitExecution, err: res.CloseErr}
	}
	return nil
}

// exitErr turns a session that could not start into the error carrying its exit code.
func exitErr(err error) error {
	if err == nil {
		return nil
	}
	var ae *app.Error
	if errors.As(err, &ae) {
		return &exitError{code: ae.Code, err: ae.Err}
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: ExitExecution, err: err}
}

// finishTurn reports what a plain or automation view does not: unwritable log files and, for
// people, where the logs are.
func finishTurn(res app.Result, display string, stdout, stderr io.Writer) error {
	if res.CloseErr != nil {
		fmt.Fprintf(stderr, "massgen: some log files could not be written: %v\n", res.CloseErr)
	}
	if display != "silent" && res.Dir != "" {
		fmt.Fprintf(stdout, "logs: %s\n", res.Dir)
	}
	return nil
}
