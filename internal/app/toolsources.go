package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"massgen/internal/command"
	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/customtool"
	"massgen/internal/event"
	"massgen/internal/filetool"
	"massgen/internal/mcptool"
	"massgen/internal/private"
	"massgen/internal/skill"
	"massgen/internal/tool"
	"massgen/internal/workspace"
	"massgen/internal/worktree"
)

// A toolSource adds one kind of tool to an agent's set. A new kind (memory, computer use,
// skills) is a new source and one more row of toolSources.
type toolSource func(b *toolBuild, ctx context.Context, at *agentTools) error

// toolSources are where an agent's tools come from, in the order the agent is offered them.
// The workspace comes first: the sources after it work in it.
var toolSources = []toolSource{
	(*toolBuild).skillTools,      // read_skill and the skills' list (skills.go), before the workspace that reads them
	(*toolBuild).workspaceTools,  // its folders, and the file tools or a coding-agent CLI bound to them
	(*toolBuild).codeTools,       // MCP tools as code the commands call (codetools.go), before the commands
	(*toolBuild).commandTools,    // execute_command and the background shells
	(*toolBuild).mcpTools,        // the user's MCP servers
	(*toolBuild).mediaTools,      // image, audio and video tools
	(*toolBuild).computerTools,   // browser_automation and computer use: a browser, a desktop
	(*toolBuild).customTools,     // custom_tools, run in Python
	(*toolBuild).subagentTools,   // spawn_subagents (subagents.go)
	(*toolBuild).memoryFileTools, // create_memory and the others of filesystem memory (memfiles.go)
}

// toolBuild is what the tool sources share while newToolbox runs.
type toolBuild struct {
	tb       *toolbox
	cfg      *config.Config
	o        Options
	runID    string
	clis     map[string]cliBinder
	hide     []string // the files a sandbox hides (keyFiles)
	previous string   // this run's copy of the previous turn's workspace
	lost     serversLost
	skills   *skill.Set // the run's skills (use_skills), loaded by the first agent's skillTools
}

// agentTools is one agent's tools as the sources gather them.
type agentTools struct {
	index int
	agent config.Agent
	cli   cliBinder        // nil: not a coding-agent CLI
	ws    *workspace.Agent // nil: no workspace (needsWorkspace)
	paths []workspace.ContextPath
	set   tool.Set
	notes []string             // added to the agent's system message
	code  *command.ToolChannel // how its commands call its tools as code (codeTools)
}

// workspaceTools gives the agent its workspace, when it needs one, and the file tools in it;
// a coding-agent CLI is bound to the workspace instead and works with its own tools.
func (b *toolBuild) workspaceTools(ctx context.Context, at *agentTools) error {
	a, t := at.agent, at.agent.Backend.Tools
	if !needsWorkspace(a, b.cfg) {
		return nil
	}
	if err := b.openRun(); err != nil {
		return err
	}
	ws, err := b.tb.run.Agent(a.ID, coord.Label(at.index))
	if err != nil {
		return errorf(ExitExecution, "agent %s: workspace: %v", a.ID, err)
	}
	paths := workspace.MergeContextPaths(contextPaths(b.cfg.Orchestrator.ContextPaths), contextPaths(t.ContextPaths))
	if b.previous != "" {
		if err := ws.Seed(b.previous); err != nil {
			return errorf(ExitExecution, "agent %s: cannot start from the previous turn's workspace: %v", a.ID, err)
		}
		paths = append(paths, workspace.ContextPath{Path: b.previous})
	}
	if o := b.cfg.Orchestrator; worktree.Isolating(o.WriteMode) {
		if b.tb.iso == nil {
			b.tb.iso = newIsolation(o.WriteMode, o.DriftPolicy, b.tb.run.Dir(), filepath.Dir(b.tb.run.Dir()))
		}
		if paths, err = b.tb.iso.isolate(ctx, a.ID, ws.Dir(), paths); err != nil {
			return errorf(ExitExecution, "agent %s: write_mode %s: %v", a.ID, o.WriteMode, err)
		}
	}
	if b.skills != nil {
		paths = append(paths, workspace.ContextPath{Path: b.skills.Dir}) // read-only: no write permission
	}
	at.paths = paths
	if err := ws.SetContextPaths(paths); err != nil {
		return errorf(ExitConfig, "agent %s: %v", a.ID, err)
	}
	ws.SetReadBeforeDelete(t.EnforceReadBeforeDelete)
	at.ws, b.tb.ws[a.ID] = ws, ws
	if at.cli == nil {
		at.set = append(at.set, filetool.Tools(ws)...)
		return nil
	}
	if err := bindCLI(at.cli, b.tb.run, ws, paths); err != nil {
		return errorf(ExitExecution, "agent %s: %v", a.ID, err)
	}
	if err := sandboxCLI(at.cli, ws, sandboxOptions(t, b.hide)); err != nil {
		return errorf(ExitConfig, "agent %s: %v", a.ID, err)
	}
	return nil
}

// openRun creates the run's workspace folder on first use and carries the previous turn's
// workspace into it.
func (b *toolBuild) openRun() error {
	if b.tb.run != nil {
		return nil
	}
	root := b.o.WorkspaceRoot
	if root == "" {
		root = filepath.Join(".massgen", "workspaces")
	}
	if err := private.MkdirAll(root); err != nil {
		return errorf(ExitExecution, "cannot create the workspace folder %s: %v", root, err)
	}
	open := workspace.NewRun
	if b.o.Resume != nil {
		open = workspace.ReopenRun // the workspaces and snapshots the session had
	}
	run, err := open(root, b.runID)
	if err != nil {
		return errorf(ExitExecution, "cannot create the workspaces of this run: %v", err)
	}
	b.tb.run = run
	if prev := filepath.Join(run.Dir(), "previous_turn"); b.o.Resume != nil && isDir(prev) {
		b.previous = prev
	} else if src := b.tb.conv.previous(); src != "" {
		if b.previous, err = run.CopyPrevious(src); err != nil {
			return errorf(ExitExecution, "cannot carry the previous turn's workspace into this turn: %v (/reset starts from empty workspaces)", err)
		}
	}
	return nil
}

// commandTools gives execute_command and the background shells to an agent that enables them;
// a coding-agent CLI runs its commands with its own shell tool.
func (b *toolBuild) commandTools(_ context.Context, at *agentTools) error {
	t := at.agent.Backend.Tools
	if at.ws == nil || !t.CommandLine || at.cli != nil {
		return nil
	}
	opts := command.Options{Allowed: t.AllowedCommands, Blocked: t.BlockedCommands, PassEnv: t.CommandEnv,
		Sandbox: sandboxOptions(t, b.hide), Tools: at.code}
	if err := opts.Validate(); err != nil {
		return errorf(ExitConfig, "agent %s: %v", at.agent.ID, err)
	}
	at.set = append(at.set, command.Tools(at.ws, opts)...)
	if why := opts.ConfinementNote(); why != "" && !b.tb.confinementNoted {
		b.tb.confinementNoted = true
		b.tb.status(event.ServerCommands, "weaker confinement", why)
	}
	return nil
}

// mcpTools gives the tools of the agent's MCP servers. A server that cannot start is
// collected in b.lost, which stops the run once every agent is set up. A coding-agent CLI
// starts and calls the user's servers itself, from its own MCP config, as MassGen's CLI
// backends do; massgen does not serve them a second time.
func (b *toolBuild) mcpTools(ctx context.Context, at *agentTools) error {
	a, t := at.agent, at.agent.Backend.Tools
	if len(t.MCPServers) == 0 {
		return nil
	}
	if codeBased(t) {
		t.MCPServers = directServers(t) // the others are code (codeTools)
		if len(t.MCPServers) == 0 {
			return nil
		}
	}
	if at.cli != nil {
		servers := make([]mcptool.Server, len(t.MCPServers))
		for k, s := range t.MCPServers {
			exp, err := mcptool.Expand(mcpServer(s), b.o.Getenv)
			if err != nil {
				return errorf(ExitConfig, "agent %s: %v", a.ID, err)
			}
			servers[k] = exp
		}
		at.cli.UseMCPServers(servers, t.ExcludeTools)
		return nil
	}
	servers := make([]mcptool.Server, len(t.MCPServers))
	for k, s := range t.MCPServers {
		servers[k] = mcpServer(s)
	}
	allowed := t.AllowedTools
	if isCLI(a) {
		allowed = nil // a CLI's allowed_tools names its native tools
	}
	mcpTools, errs := b.tb.mcp.Tools(ctx, servers, allowed, t.ExcludeTools)
	if ctx.Err() != nil {
		return errorf(ExitInterrupted, "interrupted while the MCP servers were starting; no model was called")
	}
	for _, err := range errs {
		var w *mcptool.ToolWarning
		if errors.As(err, &w) {
			// The server works; the agent has fewer of its tools, and the event says why.
			b.tb.status(w.Server, "warning", fmt.Sprintf("agent %s: %s", a.ID, w.Msg))
			continue
		}
		b.lost.add(a.ID, err)
	}
	at.set = append(at.set, mcpTools...)
	return nil
}

// mediaTools gives the media tools (media.go).
func (b *toolBuild) mediaTools(_ context.Context, at *agentTools) error {
	set, err := addMediaTools(at.set, at.agent, b.cfg, at.ws, b.o.Getenv)
	at.set = set
	return err
}

// customTools starts the agent's custom_tools, and describes every tool, before any model
// call: a tool file that does not import stops the run here, naming the file and Python's
// error.
func (b *toolBuild) customTools(ctx context.Context, at *agentTools) error {
	a := at.agent
	python := slices.DeleteFunc(slices.Clone(a.Backend.Tools.CustomTools), func(c config.CustomTool) bool { return c.Builtin() })
	if len(python) == 0 {
		return nil
	}
	var dir string
	if at.ws != nil {
		dir = at.ws.Dir()
	}
	ct, err := customtool.Start(ctx, python, customtool.Options{AgentID: a.ID, Dir: dir, ConfigFile: b.cfg.Path})
	if ct != nil {
		b.tb.custom = append(b.tb.custom, ct) // close stops them, whatever happens next
	}
	switch {
	case ctx.Err() != nil:
		return errorf(ExitInterrupted, "interrupted while the custom tools were starting; no model was called")
	case err != nil:
		return errorf(ExitConfig, "agent %s: %v\nno model was called", a.ID, err)
	}
	at.set = append(at.set, ct.Set()...)
	return nil
}
