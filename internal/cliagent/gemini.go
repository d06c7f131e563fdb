package cliagent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/provider"
)

// Gemini CLI 0.61: `gemini -p PROMPT --output-format stream-json` prints JSON lines (init
// with the session id, message deltas, tool_use and tool_result, error, and a result with
// stats); --resume SESSION continues a session. Its settings live in HOME/.gemini.
var geminiFlavour = flavour{
	binary: "gemini", npm: "@google/gemini-cli", minVersion: "0.61.0",
	invocation: geminiInvocation,
	newParser:  func(*Agent) parser { return &geminiParser{tools: map[string]provider.ToolCall{}} },
}

func geminiInvocation(a *Agent, req provider.Request, prompt, resume string) (invocation, error) {
	home, err := a.home()
	if err != nil {
		return invocation{}, err
	}
	servers := map[string]any{ServerName: map[string]any{
		"httpUrl": a.tools.url, "headers": map[string]string{secretHeader: a.tools.secret},
		"timeout": 86400000, "trust": true,
	}}
	names := []string{ServerName}
	for _, s := range a.mcp {
		servers[s.Name] = geminiMCP(s)
		names = append(names, s.Name)
	}
	settings := map[string]any{
		"mcpServers": servers,
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"telemetry":  map[string]any{"enabled": false},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
	}
	if a.o.APIKey != "" {
		settings["security"] = map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}
	}
	tools := map[string]any{}
	if native := nativeTools(a.o.AllowedTools); len(native) > 0 {
		// Gemini CLI registers only these of its built-in tools, and its policy denies every
		// other tool, MCP servers' too: theirs are allowed back by server, each still
		// limited by its own includeTools and excludeTools.
		core := append(native, "mcp_"+ServerName+"_*")
		for _, s := range a.mcp {
			core = append(core, "mcp_"+s.Name+"_*")
		}
		tools["core"] = core
	}
	if len(a.o.DisallowedTools) > 0 {
		tools["exclude"] = a.o.DisallowedTools
	}
	if len(tools) > 0 {
		settings["tools"] = tools
	}
	if !a.o.UseLogin {
		dir := filepath.Join(home, ".gemini")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return invocation{}, fmt.Errorf("gemini settings: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(mustJSON(settings)), 0o600); err != nil {
			return invocation{}, fmt.Errorf("gemini settings: %w", err)
		}
	}
	// Gemini CLI has no flag for an added system prompt: massgen's goes before the task on
	// the first run of a session (a resumed session has it already).
	if resume == "" || req.Stage == provider.StagePresentation {
		prompt = a.systemText(req) + "\n\n" + prompt
	}
	args := []string{"-p", prompt, "--output-format", "stream-json", "--approval-mode", "yolo",
		"--allowed-mcp-server-names", strings.Join(names, ",")}
	if a.o.Model != "" {
		args = append(args, "-m", a.o.Model)
	}
	if len(a.ws.Read) > 0 {
		args = append(args, "--include-directories", strings.Join(append(append([]string{}, a.ws.Read...), a.ws.Write...), ","))
	}
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	// Without NO_RELAUNCH the CLI starts node a second time only to raise its heap limit:
	// that doubles the start-up, which is most of a short run.
	env := append(a.baseEnv(home), "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true")
	if a.o.APIKey != "" {
		env = append(env, "GEMINI_API_KEY="+a.o.APIKey)
	}
	if a.o.BaseURL != "" {
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+a.o.BaseURL)
	}
	return invocation{args: args, env: env}, nil
}

type geminiParser struct {
	tools map[string]provider.ToolCall
}

type geminiLine struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Message    string          `json:"message"`
	Error      *struct {
		Message string `json:"message"`
	} `json:"error"`
	Stats struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
		Input        int64 `json:"input"`
	} `json:"stats"`
}

func (p *geminiParser) parse(line []byte) ([]event, error) {
	var l geminiLine
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, err
	}
	var out []event
	if l.SessionID != "" {
		out = append(out, event{session: l.SessionID})
	}
	switch l.Type {
	case "message":
		if l.Role == "assistant" && l.Content != "" {
			out = append(out, event{chunk: provider.TextDelta{Text: l.Content}})
		}
	case "tool_use":
		// massgen's own tools reach the engine through the tool server, not as the CLI's.
		if !isWorkflowName(l.ToolName) {
			p.tools[l.ToolID] = provider.ToolCall{ID: l.ToolID, Name: l.ToolName, Arguments: string(l.Parameters)}
		}
	case "tool_result":
		if call, ok := p.tools[l.ToolID]; ok {
			delete(p.tools, l.ToolID)
			result := l.Output
			if l.Error != nil && result == "" {
				result = l.Error.Message
			}
			out = append(out, event{chunk: provider.HostedToolChunk{Call: call, Result: provider.Clip(result, provider.MaxHostedOutput), Failed: l.Status != "success"}})
		}
	case "error":
		msg := l.Message
		if l.Error != nil && msg == "" {
			msg = l.Error.Message
		}
		out = append(out, event{chunk: provider.ReasoningDelta{Text: "gemini: " + msg + "\n"}})
	case "result":
		u := provider.Usage{InputTokens: l.Stats.InputTokens, CachedInputTokens: l.Stats.Cached, OutputTokens: l.Stats.OutputTokens}
		if u != (provider.Usage{}) {
			out = append(out, event{chunk: provider.UsageChunk{Usage: u}})
		}
		if l.Status != "" && l.Status != "success" {
			msg := l.Status
			if l.Error != nil {
				msg = l.Error.Message
			}
			out = append(out, event{err: geminiError(msg)})
		}
	}
	return out, nil
}

func isWorkflowName(name string) bool {
	return strings.HasSuffix(name, "new_answer") || strings.HasSuffix(name, "vote")
}

// geminiError explains a failed Gemini CLI run; a rejected key or a missing login is fatal.
func geminiError(msg string) error {
	low := strings.ToLower(msg)
	if strings.Contains(low, "api key") || strings.Contains(low, "auth") || strings.Contains(low, "login") {
		return &fatalError{fmt.Sprintf("Gemini CLI is not logged in or its key was rejected: %s (set GEMINI_API_KEY, or run `gemini` once to log in)", provider.Clip(msg, 500))}
	}
	return fmt.Errorf("Gemini CLI reported: %s", provider.Clip(msg, 1000))
}
