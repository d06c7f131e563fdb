package mcpserve

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askSchema is ask_team's input schema, written out for the enum and descriptions the
// inferred one would not have. Unknown arguments are refused, so a misspelt one ("prompt")
// is an error instead of a question asked without it.
func (s *Server) askSchema() map[string]any {
	paths := func(what string) map[string]any {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": what}
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"question": map[string]any{"type": "string", "description": fmt.Sprintf(
				"the question or task for the team, self-contained: the agents see only it and the files shared (at most %d bytes)", s.maxQ)},
			"team": map[string]any{"type": "string", "description": "the team to ask (list_teams names them); default the first, " + s.teams[0].Name},
			"files": paths("files or folders every agent may read (read-only), absolute or relative to the server's folder; " +
				"each must exist inside a folder the server allows: " + strings.Join(s.allowed, ", ") + " (MassGen's @path)"),
			"context_paths": paths("the same as files (MassGen's context_paths)"),
			"cwd_context": map[string]any{"type": "string", "enum": []any{"ro", "rw"}, "description": "share the server's folder " +
				s.dir + ": ro read-only, rw also writable by the agent presenting the final answer (MassGen's --cwd-context)"},
		},
		"required":             []any{"question"},
		"additionalProperties": false,
	}
}

func (s *Server) addTools() {
	yes, no := true, false
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "ask_team",
		Title: "Ask a massgen team",
		Description: "Runs one massgen session: several LLM agents answer the question, read each other's answers, " +
			"improve them and vote; the most-voted agent presents the final answer, which is returned with the winner, " +
			"the votes, the cost and the log folder. It takes minutes and spends the agents' tokens. Progress " +
			"notifications report each answer and vote when the call sends a progressToken; cancelling the call " +
			"interrupts the session (its log keeps what it produced).",
		InputSchema: s.askSchema(),
		// Not read-only: with cwd_context rw the presenter may write the shared folder.
		Annotations: &mcp.ToolAnnotations{Title: "Ask a massgen team", OpenWorldHint: &yes},
	}, s.askTeam)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "list_teams",
		Title:       "List the massgen teams",
		Description: "The teams ask_team can run: each one's name, config file and agents (id, backend, model).",
		Annotations: &mcp.ToolAnnotations{Title: "List the massgen teams", ReadOnlyHint: true, OpenWorldHint: &no},
	}, s.listTeams)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "read_session",
		Title: "Read a massgen session",
		Description: "Summarises a past massgen session from its log folder: for each turn the question, status, " +
			"agents, votes, winner, final answer, tokens and cost. Pass the log_dir ask_team returned, or a " +
			"session_id (log_<timestamp>); with neither, the newest session.",
		Annotations: &mcp.ToolAnnotations{Title: "Read a massgen session", ReadOnlyHint: true, OpenWorldHint: &no},
	}, s.readSession)
}

// TeamsResult is list_teams' result.
type TeamsResult struct {
	Teams []TeamInfo `json:"teams"`
}

// TeamInfo describes one team.
type TeamInfo struct {
	Name       string      `json:"name"`
	Default    bool        `json:"default"`
	ConfigPath string      `json:"config_path"`
	Agents     []AgentInfo `json:"agents"`
}

// AgentInfo is one agent of a team.
type AgentInfo struct {
	ID      string `json:"id"`
	Backend string `json:"backend"`
	Model   string `json:"model"`
}

func (s *Server) listTeams(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, TeamsResult, error) {
	out := TeamsResult{Teams: []TeamInfo{}}
	for i, t := range s.teams {
		info := TeamInfo{Name: t.Name, Default: i == 0, ConfigPath: t.Config.Path, Agents: []AgentInfo{}}
		for _, a := range t.Config.Agents {
			info.Agents = append(info.Agents, AgentInfo{ID: a.ID, Backend: a.Backend.Type, Model: a.Backend.Model})
		}
		out.Teams = append(out.Teams, info)
	}
	return nil, out, nil
}
