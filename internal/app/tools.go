package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"massgen/internal/codetool"
	"massgen/internal/config"
	"massgen/internal/customtool"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/mcptool"
	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// toolbox owns the session's tool resources: the MCP servers and the agents' workspaces.
type toolbox struct {
	mcp  *mcptool.Manager
	conv *Conversation // owns mcp when set
	run  *workspace.Run
	ws   map[string]*workspace.Agent
	iso  *isolation // write_mode; nil for legacy
	// custom are the agents' custom_tools processes, stopped with the session.
	custom []*customtool.Tools
	// code are the servers of the agents' tools as code, by agent id, stopped with the session.
	code map[string]*codetool.Server

	winnerDir string // the winner's workspace, once finish has run

	memoryFiles bool // enable_memory_filesystem_mode: finish gathers the memories

	confinementNoted bool // the weaker confinement of commands was reported

	mu       sync.Mutex
	preamble []event.Payload // statuses reported before the session started
	bus      *event.Bus      // set once the session runs
	closed   bool
}

// status reports an MCP server's lifecycle as an event: queued until the session has started,
// dropped once it has ended.
func (tb *toolbox) status(server, status, detail string) {
	tb.publish(event.ToolServerStatus{Server: server, Status: status, Detail: detail})
}

// codeCall reports each call the agent's code makes through its tools' socket as a tool
// result of that agent, marked from_code: the model did not make it, so no ToolCalled comes
// before it, and its id is unique in the session's log (a resumed process counts anew).
func (tb *toolbox) codeCall(agent string) func(string, tool.Result, time.Duration) {
	var n atomic.Int64
	run := make([]byte, 3)
	_, _ = rand.Read(run)
	return func(name string, res tool.Result, d time.Duration) {
		ev := event.ToolResult{Agent: agent, CallID: fmt.Sprintf("code-%x-%d", run, n.Add(1)), Tool: name,
			IsError: res.IsError, DurationMS: float64(d.Microseconds()) / 1000, FromCode: true}
		ev.SetContent(res.Content)
		tb.publish(ev)
	}
}

// publish puts p on the session's bus: queued until the session has started, dropped once it
// has ended.
func (tb *toolbox) publish(p event.Payload) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch {
	case tb.closed:
	case tb.bus == nil:
		tb.preamble = append(tb.preamble, p)
	default:
		tb.bus.Publish(p)
	}
}

// start hands the queued statuses to the engine and publishes later ones on bus.
func (tb *toolbox) start(bus *event.Bus) []event.Payload {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.bus = bus
	pre := tb.preamble
	tb.preamble = nil
	return pre
}

// checkTools finds what would stop the tools before anything starts: a ${VAR} the config
// needs and the machine lacks is a config error, reported before any model is called.
func checkTools(cfg *config.Config, getenv func(string) string) error {
	for _, a := range cfg.Agents {
		for _, s := range a.Backend.Tools.MCPServers {
			if _, err := mcptool.Expand(mcpServer(s), getenv); err != nil {
				return errorf(ExitConfig, "agent %s: %v", a.ID, err)
			}
		}
	}
	return nil
}

// needsWorkspace reports whether an agent gets a working directory.
func needsWorkspace(a config.Agent, cfg *config.Config) bool {
	t := a.Backend.Tools
	return isCLI(a) || t.Cwd != "" || t.CommandLine || len(t.ContextPaths) > 0 || len(cfg.Orchestrator.ContextPaths) > 0 || cfg.Orchestrator.MemoryFiles ||
		t.Media.Over(cfg.Orchestrator.Media).Enabled() || slices.ContainsFunc(t.CustomTools, isMediaTool) ||
		slices.ContainsFunc(t.CustomTools, isComputerTool)
}

// newToolbox gives every agent its tools, from each of toolSources in turn. runID names the
// workspace folder of this run; it must be unique.
func newToolbox(ctx context.Context, cfg *config.Config, agents []engine.Agent, runID string, o Options, clis map[string]cliBinder) (*toolbox, error) {
	tb := &toolbox{ws: map[string]*workspace.Agent{}, conv: o.Conversation}
	if tb.conv != nil {
		tb.mcp = tb.conv.manager(o, tb.status)
	} else {
		tb.mcp = mcptool.NewManager(mcptool.Options{OnStatus: tb.status, Getenv: o.Getenv, ClientVersion: o.Version})
	}
	b := &toolBuild{tb: tb, cfg: cfg, o: o, runID: runID, clis: clis, hide: keyFiles(cfg, o.Getenv)}
	for i, a := range cfg.Agents {
		at := &agentTools{index: i, agent: a, cli: clis[a.ID]}
		for _, add := range toolSources {
			if err := add(b, ctx, at); err != nil {
				return tb, err
			}
		}
		if at.ws != nil {
			agents[i].Workspace = at.ws
		}
		for _, n := range at.notes {
			agents[i].System = strings.TrimSpace(agents[i].System + "\n\n" + n)
		}
		agents[i].Tools = at.set
	}
	if err := b.lost.err(); err != nil {
		return tb, err
	}
	return tb, nil
}

// serversLost collects the MCP servers that cannot be used, each once with the agents that
// declared it. A configured server is part of the task: a run without it would pay for
// answers made without the tools the config promised, so it stops before any model call.
type serversLost struct {
	order  []string
	errs   map[string]error
	agents map[string][]string
}

func (l *serversLost) add(agent string, err error) {
	key := err.Error()
	var se *mcptool.StartError
	var fe *mcptool.FieldError
	switch {
	case errors.As(err, &se):
		key = se.Server
	case errors.As(err, &fe):
		key = fe.Server + "\x00" + err.Error()
	}
	if l.errs == nil {
		l.errs, l.agents = map[string]error{}, map[string][]string{}
	}
	if _, ok := l.errs[key]; !ok {
		l.order = append(l.order, key)
		l.errs[key] = err
	}
	l.agents[key] = append(l.agents[key], agent)
}

// err is the configuration error that names every lost server, the command it runs and what
// to do; nil when every server started.
func (l *serversLost) err() error {
	if len(l.order) == 0 {
		return nil
	}
	var b strings.Builder
	for i, key := range l.order {
		if i > 0 {
			b.WriteString("\n")
		}
		err := l.errs[key]
		fmt.Fprintf(&b, "%s %s: %v", plural(len(l.agents[key]), "agent"), strings.Join(l.agents[key], ", "), err)
		var se *mcptool.StartError
		if errors.As(err, &se) {
			fmt.Fprintf(&b, "\n  %s", se.Hint())
		}
	}
	b.WriteString("\nno model was called")
	return &Error{Code: ExitConfig, Err: errors.New(b.String())}
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func mcpServer(s config.MCPServer) mcptool.Server {
	return mcptool.Server{Name: s.Name, Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd,
		URL: s.URL, Headers: s.Headers, Timeout: s.Timeout, AllowedTools: s.AllowedTools, ExcludeTools: s.ExcludeTools}
}

func contextPaths(cps []config.ContextPath) []workspace.ContextPath {
	out := make([]workspace.ContextPath, len(cps))
	for i, c := range cps {
		out[i] = workspace.ContextPath{Path: c.Path, Write: c.Write, Protected: c.Protected}
	}
	return out
}

// finish copies the winner's workspace into the log folder and keeps it for a conversation's
// next turn.
func (tb *toolbox) finish(winner, logDir string) error {
	ws, ok := tb.ws[winner]
	if !ok {
		return nil
	}
	tb.run.StopResidents() // a background shell must not write into the workspace being copied
	tb.winnerDir = ws.Dir()
	tb.gatherMemories(ws)
	if logDir == "" {
		return nil
	}
	if err := ws.CopyOut(filepath.Join(logDir, "final", winner, "workspace")); err != nil {
		return fmt.Errorf("copy the winner's workspace: %w", err)
	}
	return nil
}

// close stops the MCP servers, unless a conversation keeps them for its next turn, and releases
// the workspaces; nothing is reported afterwards.
func (tb *toolbox) close() error {
	tb.mu.Lock()
	tb.closed = true // the session has ended: its stream takes no more events
	tb.mu.Unlock()
	var err error
	for _, ct := range tb.custom {
		err = errors.Join(err, ct.Close())
	}
	for _, s := range tb.code {
		err = errors.Join(err, s.Close())
	}
	if tb.conv != nil {
		tb.conv.endTurn(tb.winnerDir)
	} else {
		err = errors.Join(err, tb.mcp.Close())
	}
	if tb.iso != nil {
		err = errors.Join(err, tb.iso.close())
	}
	if tb.run != nil {
		err = errors.Join(err, tb.run.Close())
	}
	return err
}

func isDir(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.IsDir()
}
