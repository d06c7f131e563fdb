package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
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
	display             string
	debug               bool
	orchestratorTimeout int
	timeoutSet          bool
	logRoot             string
	args                []string

	outputFile        string
	streamEvents      bool
	cwdContext        string
	noAtRefs          bool
	skipValidation    bool
	strictValidation  bool
	skipAgentSelector bool
	noSessionRegistry bool

	quick            bool
	singleAgent      optionalValue
	coordinationMode string
	personas         string
	broadcast        string // --broadcast agents|human|false
	inboxDir         string // --inbox-dir DIR

	// Plan-then-execute (plan.go): --plan [--plan-depth D --plan-steps N], --execute-plan P.
	plan        bool
	planDepth   string
	planSteps   int
	executePlan string

	web webOptions
	// trust is --trust and how a config massgen found is trusted (trust.go).
	trust trustOptions
	// sessions are --continue and --session-id (sessions.go); nil without them.
	sessions *sessionFlags
	temporal temporalFlags
}

// exitError carries an exit code with the message printed for it ("" when already printed).
type exitError struct {
	code int
	err  error
	// summary is what an automation ERROR: line says when err's message is "" (printed
	// already, line by line).
	summary string
	// reported: the session ended with this error, and its automation view printed the
	// ERROR: line already.
	reported bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// errPrinted is an error whose message is already on stderr.
var errPrinted = errors.New("")

// dispatch runs what the root's flags ask for: a listing, --validate, writing a config, or a
// run of the team.
func (o *rootOptions) dispatch(cmd *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f := cmd.Flags()
	if err := refuseUnbuilt(f); err != nil {
		return err
	}
	r := &o.run
	r.timeoutSet = f.Changed("orchestrator-timeout")
	// The commands that print something and exit; none takes a question.
	for _, c := range []struct {
		on   bool
		flag string
		run  func() error
	}{
		{o.version, "--version", func() error { _, err := fmt.Fprintf(stdout, "massgen %s\n", version()); return err }},
		{o.listExamples, "--list-examples", func() error { return listExamples(stdout) }},
		{o.example != "", "--example", func() error { return printExample(o.example, stdout) }},
		{o.listBackends, "--list-backends", func() error { return listBackends(stdout) }},
		{o.showSchema, "--show-schema", func() error { return showSchema(stdout, o.asJSON, o.schemaBackend, o.withExamples) }},
	} {
		if !c.on {
			continue
		}
		if len(args) > 0 {
			return exitf(ExitConfig, "%s takes no question (got %q)", c.flag, strings.Join(args, " "))
		}
		return c.run()
	}
	switch {
	case o.validate.set:
		files := args
		if o.validate.value != "" {
			files = append([]string{o.validate.value}, args...)
		}
		switch len(files) {
		case 0:
			return exitf(ExitConfig, "--validate needs a config file: massgen --validate FILE [--strict] [--json]")
		case 1:
			return runValidate(files[0], o.strict, o.asJSON, stdout)
		}
		return exitf(ExitConfig, "--validate checks one file; got %s", strings.Join(files, ", "))
	case o.strict || o.asJSON:
		return exitf(ExitConfig, "--strict and --json go with --validate FILE (--json also with --show-schema)")
	case o.schemaBackend != "" || o.withExamples:
		return exitf(ExitConfig, "--schema-backend and --with-examples go with --show-schema")
	}
	if o.setup.requested() {
		if len(args) > 0 {
			return exitf(ExitConfig, "%s writes a config and takes no question (got %q)", o.setup.flagName(), strings.Join(args, " "))
		}
		return o.setup.run(cmd, stdin, stdout, stderr)
	}
	if err := o.setup.strayFlags(f); err != nil {
		return err
	}
	if err := r.web.strayFlags(f); err != nil {
		return err
	}
	if err := checkOneWord(cmd, args); err != nil {
		return err
	}
	r.args = os.Args
	question := strings.TrimSpace(strings.Join(args, " "))
	if len(args) > 0 && question == "" {
		return exitf(ExitConfig, "the question is empty: pass a non-empty question, or none for interactive mode")
	}
	return run(cmd.Context(), *r, question, stdin, stdout, stderr)
}

func runValidate(path string, strict, asJSON bool, stdout io.Writer) error {
	_, rep, _ := loadFile(path)
	if strict {
		rep.Errors = append(rep.Errors, rep.Warnings...)
		rep.Warnings = nil
	}
	if asJSON {
		fmt.Fprintf(stdout, "%s\n", rep.JSON())
	} else {
		fmt.Fprint(stdout, rep.Text())
	}
	if !rep.OK() {
		return &exitError{code: ExitConfig, err: errPrinted}
	}
	return nil
}

// quickFlags name the quick-setup flags in their config's issues, so that an error about a
// flag reads as one: "--backend nosuch: unknown backend type ...".
var quickFlags = map[string]string{
	"agents[0].backend.type":     "--backend",
	"agents[0].backend.model":    "--model",
	"agents[0].backend.base_url": "--base-url",
	"agents[0].system_message":   "--system-message",
}

// loadConfig resolves the config from --config, the quick-setup flags or the default places,
// printing warnings to stderr. It returns the warnings it printed too ("warning: ..."), for the
// live view, which would hide them.
func loadConfig(o runOptions, stderr io.Writer) (*config.Config, []string, error) {
	var cfg *config.Config
	var rep config.Report
	if o.configPath != "" {
		// MassGen documents these as exclusive yet silently prefers the config; a run that
		// ignores the model the user named is a surprise on the bill.
		for _, q := range []struct{ flag, value string }{{"--backend", o.backend}, {"--model", o.model}, {"--base-url", o.baseURL}, {"--system-message", o.sysMessage}} {
			if q.value != "" {
				return nil, nil, exitf(ExitConfig, "%s cannot be combined with --config: --backend, --model, --base-url and --system-message build a one-agent team without a file; "+
					"to change the team in %s, edit its backend keys (model, base_url) or system_message", q.flag, o.configPath)
			}
		}
	}
	switch {
	case o.configPath != "":
		var note string
		cfg, rep, note = loadFile(o.configPath)
		if note != "" {
			fmt.Fprintf(stderr, "note: %s\n", note)
		}
	case o.backend != "" || o.model != "":
		backend := o.backend
		if backend == "" {
			if backend = config.InferType(o.model); backend == "" {
				return nil, nil, exitf(ExitConfig, "cannot tell which backend serves model %q: add --backend TYPE (one of %s)",
					o.model, strings.Join(config.BackendTypeNames(), ", "))
			}
		}
		cfg, rep = config.QuickAgent(backend, o.model, o.baseURL, o.sysMessage)
		if !rep.OK() {
			values := map[string]string{"--backend": backend, "--model": o.model, "--base-url": o.baseURL, "--system-message": o.sysMessage}
			var lines []string
			for _, is := range rep.Errors {
				if flag, ok := quickFlags[is.Location]; ok {
					is.Location = fmt.Sprintf("%s %s", flag, values[flag])
				}
				lines = append(lines, is.String())
			}
			return nil, nil, exitf(ExitConfig, "%s", strings.Join(lines, "\nmassgen: "))
		}
	default:
		if path := defaultConfig(); path != "" {
			cfg, rep = config.Load(path)
			break
		}
		team, err := app.DefaultTeam(os.Getenv)
		if err != nil {
			return nil, nil, &exitError{code: ExitConfig, err: err}
		}
		cfg, rep = config.Parse("", []byte(team))
	}
	if !rep.OK() {
		// The run stops here: each error on its line, without --validate's summary.
		for _, is := range rep.Errors {
			fmt.Fprintf(stderr, "error: %s\n", is.String())
		}
		summary := rep.Errors[0].String()
		if n := len(rep.Errors) - 1; n > 0 {
			summary += fmt.Sprintf(" (and %d more on stderr)", n)
		}
		return nil, nil, &exitError{code: ExitConfig, err: errPrinted, summary: summary}
	}
	found, err := o.trust.found(o, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := o.trust.check(cfg, found, stderr); err != nil {
		return nil, nil, err
	}
	o.trust.vouch(o, cfg)
	if o.strictValidation && len(rep.Warnings) > 0 {
		for _, w := range rep.Warnings {
			fmt.Fprintf(stderr, "error: %s\n", w.String())
		}
		return nil, nil, exitf(ExitConfig, "--strict-validation: the config has %s; fix them, or run without --strict-validation", plural(len(rep.Warnings), "warning"))
	}
	var warnings []string
	if !o.skipValidation {
		for _, w := range rep.Warnings {
			line := "warning: " + w.String()
			fmt.Fprintln(stderr, line)
			warnings = append(warnings, line)
		}
	}
	return cfg, warnings, nil
}

// defaultConfig returns the first default config that exists: ./.massgen/config.yaml, then
// ~/.config/massgen/config.yaml.
func defaultConfig() string {
	candidates := []string{defaultConfigPath}
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

// defaultConfigPath is the project config massgen finds by itself, and --init writes.
var defaultConfigPath = filepath.Join(".massgen", "config.yaml")

// run executes one question, or the interactive loop when question is empty; the error
// carries the exit code.
func run(ctx context.Context, o runOptions, question string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := checkModeFlags(&o); err != nil {
		return err
	}
	if err := checkPlanFlags(&o); err != nil {
		return err
	}
	if err := app.LoadDotEnv(stderr); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	o.trust.offerFlag = true
	if !o.automation && !o.streamEvents {
		o.trust.ask = terminalPrompt(ctx, stdin, stderr) // nil without a person at a terminal
	}
	cfg, warnings, err := loadConfig(o, stderr)
	if err != nil {
		return err
	}
	if err := applyOverrides(cfg, &o); err != nil {
		return err
	}
	if err := checkTemporal(o.temporal, cfg); err != nil {
		return err
	}
	if o.web.on && o.temporal.addr != "" {
		return exitf(ExitConfig, "--web runs the session in this process; for a dashboard of sessions on Temporal use massgen serve --temporal %s", o.temporal.addr)
	}
	remote, closeRemote, err := o.temporal.remote(ctx)
	if err != nil {
		return err
	}
	defer closeRemote()
	out, err := prepareOutputFile(o.outputFile)
	if err != nil {
		return err
	}
	display := cfg.UI.DisplayType
	logging := cfg.UI.LoggingEnabled
	switch {
	case o.automation || o.streamEvents:
		display, logging = "silent", true
	case o.display != "":
		display = "rich_terminal" // --display wins over --no-display, as in MassGen
	case o.noDisplay:
		display = "simple"
	}
	if o.noLogs && display != "silent" {
		logging = false
	}
	if o.debug {
		logging = true
	}
	if o.logRoot == "" {
		// Absolute, as MassGen prints LOG_DIR (Path(log_dir).resolve()): the paths printed
		// mean the same from any folder.
		if o.logRoot, err = filepath.Abs(filepath.Join(".massgen", "massgen_logs")); err != nil {
			return exitf(ExitExecution, "cannot tell the current directory: %v", err)
		}
	}
	var exec *executePlan
	if o.executePlan != "" {
		if exec, err = loadExecutePlan(o.executePlan, o.logRoot); err != nil {
			return err
		}
		question = exec.apply(cfg, question)
		fmt.Fprintf(stderr, "massgen: executing the plan in %s (%d tasks)\n", exec.path, len(exec.project.Tasks))
	}
	if err := o.sessions.resolve(o, cfg, logging, stderr); err != nil {
		return err
	}
	// The automation lines go to stdout, or to stderr when stdout carries the events.
	lines := stdout
	if o.streamEvents {
		lines = stderr
	}
	prep := turnPrep{o: o, cfg: cfg, stderr: stderr, out: out, lines: lines, display: display}
	if o.web.on {
		return runWeb(ctx, o, prep, question, stdout, stderr)
	}
	live := isLiveDisplay(display) && isTerminal(stdout, stdin)
	var box *inbox
	if o.inboxDir != "" {
		if box, err = newInbox(o.inboxDir, stderr); err != nil {
			return exitf(ExitConfig, "%v", err)
		}
		if display == "silent" {
			fmt.Fprintf(lines, "RUNTIME_INBOX: %s\n", box.dir)
		} else {
			fmt.Fprintf(stderr, "massgen: answering from msg_*.json files in %s (--inbox-dir)\n", box.dir)
		}
	}
	turn := func(opts app.Options) (app.Result, error) {
		turnCfg, err := prep.config(opts.Question)
		if err != nil {
			return app.Result{}, err
		}
		opts.Question = prep.question(opts.Question)
		opts.Logging, opts.LogRoot, opts.Debug, opts.Version, opts.Args = logging, o.logRoot, o.debug, Version, o.args
		opts.Remote = remote
		if live {
			lt := newLiveTurn(turnCfg, warnings, question != "")
			opts.Approvals = lt.asks // the live view's y and n answer the permission asks
			defer box.serve(ctx, &opts)()
			res, err := runLive(ctx, func(ctx context.Context, sinks []event.Sink) (app.Result, error) {
				opts.Sinks = sinks
				return app.Run(ctx, turnCfg, opts)
			}, stdin, stdout, lt)
			if err == nil {
				err = prep.finish(res, stdout)
			}
			return res, exitErr(err)
		}
		opts.Sinks = prep.sinks(stdout)
		if display != "silent" {
			if asker := newTermAsker(stdin, stderr); asker != nil {
				// A person at the terminal answers the asks; --automation never waits on one.
				actx, stop := context.WithCancel(ctx)
				var wg sync.WaitGroup
				wg.Go(func() { asker.run(actx) })
				defer wg.Wait()
				defer stop()
				opts.Approvals, opts.Sinks = asker.broker, append(opts.Sinks, asker)
			}
		}
		defer box.serve(ctx, &opts)()
		res, err := app.Run(ctx, turnCfg, opts)
		if err == nil {
			err = prep.finish(res, stdout)
		}
		return res, exitErr(err)
	}
	if pr := newPlanRun(&o, cfg); pr != nil {
		turn = planTurn(pr, prep, turn)
	}
	if exec != nil {
		inner := turn
		turn = func(opts app.Options) (app.Result, error) {
			opts.PlanSeed = exec.project.Tasks
			return inner(opts)
		}
	}
	if question == "" && o.sessions != nil && o.sessions.resume != nil {
		question = o.sessions.resume.State.Question // --continue of an interrupted turn
	}
	if question == "" && o.plan {
		return exitf(ExitConfig, "--plan needs a question: massgen --plan \"what to plan\"")
	}
	if question == "" {
		if display == "silent" {
			return exitf(ExitConfig, "--automation needs a question: pass it as an argument")
		}
		return interactive(ctx, cfg, o.sessions.setup(o.logRoot, logging), stdin, stdout, turn)
	}
	res, err := o.sessions.once(question, turn)
	if err != nil {
		return err
	}
	return resultErr(res)
}

// resultErr is the error carrying a finished run's exit code.
func resultErr(res app.Result) error {
	if res.ExitCode != ExitOK {
		return &exitError{code: res.ExitCode, err: res.Err, reported: true}
	}
	if res.CloseErr != nil {
		return &exitError{code: ExitExecution, err: res.CloseErr}
	}
	return nil
}

func isLiveDisplay(display string) bool {
	switch display {
	case "rich_terminal", "terminal", "textual_terminal":
		return true
	}
	return false
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
