package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"massgen/internal/codetool"
	"massgen/internal/command"
	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/mcptool"
	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// codeTools gives the agent its MCP tools as code (enable_code_based_tools): the tools of its
// servers but those in direct_mcp_servers become Python wrappers in its workspace (or in
// shared_tools_directory), which its commands import and call back through a tool server
// of its own, with the token only its commands get. The model is not offered those tools.
func (b *toolBuild) codeTools(ctx context.Context, at *agentTools) error {
	a, t := at.agent, at.agent.Backend.Tools
	if !codeBased(t) || at.ws == nil {
		return nil
	}
	layout := codetool.Layout{CustomToolsPath: t.CustomToolsPath, ExcludeCustomTools: t.ExcludeCustomTools}
	var set tool.Set
	for _, s := range t.MCPServers {
		if slices.Contains(t.DirectMCPServers, s.Name) {
			continue
		}
		tools, errs := b.tb.mcp.Tools(ctx, []mcptool.Server{mcpServer(s)}, t.AllowedTools, t.ExcludeTools)
		if ctx.Err() != nil {
			return errorf(ExitInterrupted, "interrupted while the MCP servers were starting; no model was called")
		}
		for _, err := range errs {
			var w *mcptool.ToolWarning
			if errors.As(err, &w) {
				b.tb.status(w.Server, "warning", fmt.Sprintf("agent %s: %s", a.ID, w.Msg))
				continue
			}
			b.lost.add(a.ID, err)
		}
		layout.Servers = append(layout.Servers, codetool.MCPServer{Name: s.Name, Tools: tools.Specs()})
		set = append(set, tools...)
	}
	dir := at.ws.Dir()
	if t.SharedToolsDir != "" {
		sum, _ := json.Marshal(layout)
		h := sha256.Sum256(sum)
		abs, err := filepath.Abs(filepath.Join(t.SharedToolsDir, hex.EncodeToString(h[:4])))
		if err != nil {
			return errorf(ExitConfig, "agent %s: shared_tools_directory: %v", a.ID, err)
		}
		dir = abs
	}
	if err := codetool.Write(dir, layout); err != nil {
		return errorf(ExitConfig, "agent %s: %v\nno model was called", a.ID, err)
	}
	if dir != at.ws.Dir() {
		at.paths = append(at.paths, workspace.ContextPath{Path: dir}) // read-only for the agent
		if err := at.ws.SetContextPaths(at.paths); err != nil {
			return errorf(ExitConfig, "agent %s: shared_tools_directory: %v", a.ID, err)
		}
	}
	srv, err := codetool.Serve(set, codetool.Options{Token: b.o.codeTokens[a.ID], OnCall: b.tb.codeCall(a.ID)})
	if err != nil {
		return errorf(ExitExecution, "agent %s: %v", a.ID, err)
	}
	if b.tb.code == nil {
		b.tb.code = map[string]*codetool.Server{}
	}
	b.tb.code[a.ID] = srv
	at.code = &command.ToolChannel{Socket: srv.Socket(), Token: srv.Token(), PythonPath: dir}
	at.notes = append(at.notes, codetool.Prompt(dir, layout))
	return nil
}

// codeToolTokens makes the token of each agent with code-based tools, before the session's
// redactor is built: its commands hold the token (MASSGEN_TOOLS_TOKEN), so whatever they print
// (env) would carry it into the tool results, and from there into events.jsonl, the logs and
// the pages. As a secret of the session it is redacted there, as keys are; the model does not
// need it either (the generated code reads it from the environment).
func codeToolTokens(cfg *config.Config) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range cfg.Agents {
		if !codeBased(a.Backend.Tools) {
			continue
		}
		t, err := codetool.NewToken()
		if err != nil {
			return nil, errorf(ExitExecution, "agent %s: %v", a.ID, err)
		}
		out[a.ID] = t
	}
	return out, nil
}

// codeBased reports whether the agent's MCP tools are code: enable_code_based_tools, with the
// commands that run the code (config warns when they are missing).
func codeBased(t config.Tools) bool { return t.CodeTools && t.CommandLine }

// directServers are the agent's MCP servers whose tools stay the model's own
// (direct_mcp_servers) when the others are code.
func directServers(t config.Tools) []config.MCPServer {
	return slices.DeleteFunc(slices.Clone(t.MCPServers), func(s config.MCPServer) bool { return !slices.Contains(t.DirectMCPServers, s.Name) })
}

// permitCode puts the calls from the agents' code through their permission gate, as the
// engine does with the model's calls.
func (tb *toolbox) permitCode(agents []engine.Agent) {
	for _, a := range agents {
		if s := tb.code[a.ID]; s != nil && a.Permit != nil {
			s.SetPermit(a.Permit)
		}
	}
}
