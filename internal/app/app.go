// Package app runs one turn of a configured team: it builds each agent's provider, resolves
// its key, prepares the log directory and the recorder, runs the engine with the caller's views
// attached, and closes everything. The command line, interactive mode and the web server all
// run sessions through it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/private"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/runlog"
	"massgen/internal/subagent"
	"massgen/internal/taskplan"
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

// Error is a session that could not start; Code is the exit code it maps to.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Options configure one turn.
type Options struct {
	Question string
	// History holds earlier turns (interactive mode, the chat API).
	History []provider.Message
	// Logging writes the log directory: <LogRoot>/log_<timestamp>/turn_<Turn>. With Session
	// set, the turn goes into that existing log_<timestamp> folder instead (multi-turn).
	Logging bool
	LogRoot string // default .massgen/massgen_logs
	Session string // an existing log_<timestamp> folder under LogRoot, or "" for a new one
	Turn    int    // default 1
	Debug   bool
	// Sinks receive every event (the views).
	Sinks []event.Sink
	// Getenv reads API keys; nil means os.Getenv.
	Getenv  func(string) string
	Version string
	Args    []string
	// WorkspaceRoot holds the agents' workspaces, a folder per run; default .massgen/workspaces.
	WorkspaceRoot string
	// Conversation, shared by the turns of an interactive session, keeps their MCP servers
	// running and starts each turn from the previous winner's workspace; nil for a lone turn.
	Conversation *Conversation
	// NewProvider overrides the backend factory (tests); nil means the built-in one.
	NewProvider func(b config.Backend, key, keyEnv string) (provider.Provider, error)
	// Secrets are values to redact besides the keys the config and environment hold (the
	// serve token).
	Secrets []string
	// Approvals carries a person's answers to the permission engine's asks, from a view that
	// can take them (the live view, the dashboard); nil means nobody can answer, so asks
	// follow automation_default at once (--automation, plain output). AskTimeout bounds each
	// ask (0: permission.AskTimeout). The same broker takes the person's answers to the
	// agents' ask_others questions (broadcast: human), each bounded by broadcast_timeout.
	Approvals  *permission.Broker
	AskTimeout time.Duration
	// Steering, when set, lets the caller steer the running session (engine.Steering).
	Steering *engine.Steering
	// Remote, when set, runs the session somewhere else (on Temporal workers, which build
	// the agents and read the keys): this process writes the log and runs the views only.
	Remote func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result
	// ParaphraseCache is where orchestrator.dspy keeps checked paraphrases; "" means
	// .massgen/cache/paraphrases.
	ParaphraseCache string
	// Resume, when set, finishes the interrupted turn it read (massgen resume) instead of
	// starting one: Question, History, Session and Turn are taken from its log. It needs
	// Logging.
	Resume *runlog.Interrupted
	// PlanSeed and CheckAnswer are the engine's (engine.Options): the plan every agent of an
	// execution run starts with, and the check a planning run's answers pass.
	PlanSeed    []taskplan.Task
	CheckAnswer func(content string) error

	// A subagent's session (subagents.go): how deep it is nested, the name of its workspace
	// folder, and, while the session is set up, its manager.
	depth int
	runID string
	// codeTokens are the code-based tools' tokens by agent, made before the redactor.
	codeTokens map[string]string
	subagents  *subagent.Manager
}

// Result is how a turn ended.
type Result struct {
	engine.Result
	// Session is the log_<timestamp> folder name and Dir the turn folder ("" without logs).
	Session, Dir string
	// CloseErr reports log files that could not be written; the run itself went on.
	CloseErr error
}

// Run runs one turn of cfg. An error means the turn could not start (an *Error with its exit
// code); a turn that ran reports how it ended in Result, its exit code included.
func Run(ctx context.Context, cfg *config.Config, o Options) (Result, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.NewProvider == nil {
		o.NewProvider = NewProvider
	}
	if o.Turn == 0 {
		o.Turn = 1
	}
	if o.Remote != nil && o.CheckAnswer != nil {
		// A function of this process: the workers that check each new_answer cannot call it.
		return Result{}, errorf(ExitConfig, "a planning run (--plan) checks every answer in this process: run it without --temporal")
	}
	cfg, err := withBaseURLs(cfg, o.Getenv) // OPENAI_BASE_URL and the like (providers.go)
	if err != nil {
		return Result{}, err
	}
	if o.Resume != nil && o.Resume.ConfigHash != "" && ConfigHash(cfg) != o.Resume.ConfigHash {
		return Result{}, errorf(ExitConfig, "the config is not the one the session ran with (metadata.json's config_hash differs): "+
			"resume with the same config file and flags, from the folder the session started in; or start over with massgen --session-id %s \"question\"",
			filepath.Base(filepath.Dir(o.Resume.Dir)))
	}
	if o.codeTokens, err = codeToolTokens(cfg); err != nil {
		return Result{}, err
	}
	red := redact.New(sessionSecrets(cfg, o.Getenv, append(slices.Clone(o.Secrets), slices.Collect(maps.Values(o.codeTokens))...))...)
	agents := make([]engine.Agent, len(cfg.Agents))
	var missing []string // every agent without a key, so one run tells the user all of them
	clis := map[string]cliBinder{}
	keys, froms := make([]string, len(cfg.Agents)), make([]string, len(cfg.Agents)) // upload_files' vector stores need them
	var closers []func() error
	for i, a := range cfg.Agents {
		if o.Remote != nil {
			agents[i] = engine.Agent{ID: a.ID, Backend: a.Backend.Type, Model: a.Backend.Model}
			continue
		}
		key, from, err := APIKey(a.Backend, o.Getenv)
		if err != nil {
			missing = append(missing, fmt.Sprintf("agent %s: %v", a.ID, err))
			continue
		}
		if len(missing) > 0 {
			continue
		}
		keys[i], froms[i] = key, from
		p, err := o.NewProvider(a.Backend, key, from)
		if err != nil {
			closeCLIs(clis)
			return Result{}, errorf(ExitConfig, "agent %s: %v", a.ID, red.Error(err))
		}
		if b, ok := p.(cliBinder); ok {
			clis[a.ID] = b
		}
		if !red.Empty() {
			p = redacting(p, red)
		}
		agents[i] = engine.Agent{ID: a.ID, Backend: a.Backend.Type, Model: a.Backend.Model, System: a.SystemMessage, Params: a.Backend.Params, Provider: p,
			BaseURL: redact.URL(a.Backend.BaseURL), CustomEndpoint: CustomEndpoint(a.Backend), Unpriced: !usage.Known(a.Backend.Type, a.Backend.Model),
			VotingSensitivity: a.VotingSensitivity, HoldsSession: isCLI(a), Subtask: a.Subtask}
	}
	para, err := newParaphraser(cfg, o, red, &missing)
	if err != nil {
		closeCLIs(clis)
		return Result{}, err
	}
	if len(missing) > 0 {
		closeCLIs(clis)
		return Result{}, errorf(ExitConfig, "%s", strings.Join(missing, "\n"))
	}
	// The CLIs end (with everything they started) however the turn ends.
	closers = append(closers, func() error { return closeCLIs(clis) })
	files, err := startFiles(ctx, cfg, o)
	if err != nil {
		closeCLIs(clis)
		return Result{}, err
	}

	if o.Remote == nil {
		if err := checkTools(cfg, o.Getenv); err != nil {
			return Result{}, err
		}
	}
	var rs *resumed
	if o.Resume != nil {
		rs = &resumed{it: o.Resume}
		st := rs.started()
		o.Question, o.History, o.Turn, o.Session, o.Logging = st.Question, st.History, max(st.Turn, 1), rs.session(), true
	}
	bus := event.NewBus(nil)
	if rs != nil {
		bus.ResumeAt(rs.lastSeq())
	}
	// Every sink sees events through the redactor, whatever produced them.
	sinks := &redactingSinks{red: red}
	bus.Subscribe(sinks)
	var res Result
	closeAll := func() error {
		var err error
		for k := len(closers) - 1; k >= 0; k-- {
			err = errors.Join(err, closers[k]())
		}
		return err
	}
	if o.Logging {
		root := o.LogRoot
		if root == "" {
			root = filepath.Join(".massgen", "massgen_logs")
		}
		var err error
		host, _ := os.Hostname()
		meta := runlog.Meta{Version: o.Version, ConfigPath: cfg.Path, ConfigHash: ConfigHash(cfg), PID: os.Getpid(), Host: host,
			Config: redact.Value(red, Redacted(cfg)), Args: redact.Value(red, o.Args)}
		var rec *runlog.Recorder
		if rs != nil {
			res.Session, res.Dir = rs.session(), o.Resume.Dir
			meta.Args = o.Resume.Args // the command line that started the session
			rec, err = runlog.ResumeRecorder(o.Resume, meta)
		} else {
			res.Session, res.Dir, err = turnDir(root, o.Session, o.Turn, time.Now())
			if err != nil {
				return Result{}, errorf(ExitExecution, "cannot create the log directory under %s: %s (fix its permissions, run from a writable folder, or pass --no-logs)", root, pathTrouble(err))
			}
			rec, err = runlog.NewRecorder(res.Dir, meta)
		}
		if err != nil {
			return Result{}, errorf(ExitExecution, "cannot write the log directory %s: %s (fix its permissions or pass --no-logs)", res.Dir, pathTrouble(err))
		}
		// The log keeps the session's events; previews (a remote turn's events while it
		// runs) only the views show (event.ForLog).
		sinks.sinks = append(sinks.sinks, event.ForLog(rec))
		closers = append(closers, rec.Close)
		// massgen.log always; with Debug also massgen_debug.log, with reasoning and calls.
		for _, debug := range []bool{false, true} {
			if debug && !o.Debug {
				break
			}
			name := map[bool]string{false: "massgen.log", true: "massgen_debug.log"}[debug]
			flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if rs != nil {
				flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND // on after what the process before wrote
			}
			logFile, err := private.OpenFile(filepath.Join(res.Dir, name), flags)
			if err != nil {
				_ = closeAll()
				return Result{}, errorf(ExitExecution, "cannot write the log directory %s: %s (fix its permissions or pass --no-logs)", res.Dir, pathTrouble(err))
			}
			lv := view.NewPlain(logFile)
			lv.Timestamps, lv.Reasoning, lv.Calls = true, debug, debug
			sinks.sinks = append(sinks.sinks, event.ForLog(lv))
			closers = append(closers, logFile.Close)
		}
	}
	if rs != nil {
		rs.replay(o.Sinks)
	}
	for _, s := range o.Sinks {
		sinks.sinks = append(sinks.sinks, event.ForViews(s))
	}
	runID := res.Session
	if runID == "" {
		runID = "run_" + strings.Replace(time.Now().Format("20060102_150405.000000"), ".", "_", 1)
	} else if o.Turn > 1 {
		runID = fmt.Sprintf("%s_turn_%d", runID, o.Turn)
	}
	if o.runID != "" {
		runID = o.runID
	}
	closeLedger, err := openLedger(cfg, bus, res.Dir, runID)
	if err != nil {
		_ = closeAll()
		return Result{}, err
	}
	closers = append(closers, closeLedger)
	up, err := startUploads(ctx, cfg, agents, files, keys, froms, red)
	// Registered after the log's closers, so it runs before them and its report is logged.
	closers = append(closers, func() error { up.cleanup(ctx, bus, red); return nil })
	if err != nil {
		_ = closeAll()
		return Result{}, err
	}
	personas, personasTurn, err := keptPersonas(cfg, res.Dir, o.Turn)
	if err != nil {
		_ = closeAll()
		return Result{}, &Error{Code: ExitExecution, Err: err}
	}
	if o.Remote != nil {
		res.Result = o.Remote(ctx, cfg, engine.Options{Question: o.Question, History: o.History, Turn: o.Turn,
			SessionID: res.Session, LogDir: res.Dir, Agents: agents, Orchestrator: cfg.Orchestrator, Timeouts: cfg.Timeouts, Bus: bus,
			Steering: o.Steering, Asks: o.Approvals, Previous: o.Conversation.previous(), Personas: personas, PersonasTurn: personasTurn,
			PlanSeed: o.PlanSeed})
		if ws := filepath.Join(res.Dir, "final", res.Winner, "workspace"); res.Winner != "" && res.Dir != "" && isDir(ws) {
			o.Conversation.endTurn(ws) // the next turn starts from it, as after a local turn
		}
		res.CloseErr = closeAll()
		return res, nil
	}
	if o.subagents = startSubagents(cfg, o, bus, res.Dir, runID); o.subagents != nil {
		// Before the log closes: the subagents still running end and say so.
		closers = append(closers, o.subagents.Close)
	}
	tb, closeTools, err := equip(ctx, cfg, agents, runID, o, clis, bus, red)
	closers = append(closers, closeTools)
	if err != nil {
		_ = closeAll()
		return Result{}, err
	}
	mt, err := startMemory(cfg, agents, keys, froms, o, red, MemoryScope{Team: teamID(cfg), Run: cmp.Or(res.Session, runID)}, nil, time.Now())
	if err != nil {
		_ = closeAll()
		return Result{}, err
	}
	logSnapshots(agents, res.Dir, cfg.Orchestrator.MaxOrchestrationRestarts > 0)
	if ws := tb.run; ws != nil && res.Dir != "" {
		// The whole log root (<root>/<session>/turn_N): older sessions hold real ids and
		// every prompt too.
		_ = ws.HidePath(filepath.Dir(filepath.Dir(res.Dir)))
	}
	preamble := append(tb.start(bus), up.statuses...)
	preamble = append(preamble, lostSubagents(o.Resume)...)
	var recall func(context.Context, func(int, provider.Usage)) []string
	var remember func(context.Context, engine.Result, func(int, provider.Usage))
	if mt != nil {
		mt.bus = bus
		preamble = append(preamble, mt.troubles...)
		bus.Subscribe(mt)
		recall, remember = mt.recall(o.Question), mt.remember(o.Question)
	}
	var deliver func(context.Context, string) error
	if tb.iso != nil {
		preamble = append(preamble, tb.iso.statuses()...)
		deliver = func(ctx context.Context, presenter string) error { return tb.iso.deliver(ctx, presenter, bus) }
	}
	res.Result = engine.Run(ctx, engine.Options{
		Recall:       recall,
		Remember:     remember,
		Preamble:     preamble,
		Question:     o.Question,
		History:      o.History,
		Turn:         o.Turn,
		SessionID:    res.Session,
		LogDir:       res.Dir,
		Agents:       agents,
		Orchestrator: cfg.Orchestrator,
		Timeouts:     cfg.Timeouts,
		Bus:          bus,
		Price:        usage.Cost,
		Steering:     o.Steering,
		Asks:         o.Approvals, // the same answers reach ask_others questions (broadcast: human)
		Restore:      rs.restoreOrNil(),
		Deliver:      deliver,
		Paraphraser:  para,
		Subagent:     orchestratorSubagents(o.subagents),
		PlanSeed:     o.PlanSeed,
		CheckAnswer:  o.CheckAnswer,
		Personas:     personas,
		PersonasTurn: personasTurn,
	})
	// No CLI may write into a workspace while the winner's is copied out.
	cliErr := closeCLIs(clis)
	copyErr := errors.Join(tb.finish(res.Winner, res.Dir), cliErr)
	res.CloseErr = errors.Join(copyErr, closeAll())
	return res, nil
}

// turnDir creates <root>/log_<timestamp>/turn_<n>, or turn_<n> inside the existing session
// folder. A new session folder is never one another run made: two runs started in the same
// microsecond get different names.
func turnDir(root, session string, turn int, now time.Time) (string, string, error) {
	if err := private.MkdirAll(root); err != nil {
		return "", "", err
	}
	if session == "" {
		base := "log_" + strings.Replace(now.Format("20060102_150405.000000"), ".", "_", 1)
		session = base
		for n := 2; ; n++ {
			err := private.Mkdir(filepath.Join(root, session))
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrExist) || n > 1000 {
				return "", "", err
			}
			session = fmt.Sprintf("%s_%d", base, n)
		}
	}
	dir := filepath.Join(root, session, fmt.Sprintf("turn_%d", turn))
	if err := private.Mkdir(dir); err != nil {
		return "", "", err
	}
	return session, dir, nil
}
