package cliagent

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/provider"
)

// GitHub Copilot CLI 1.0: `copilot -p PROMPT --output-format json` prints JSON lines (session
// events: assistant.message with the whole text and its tool requests, tool.execution_start
// and tool.execution_complete, session.error, and a result line with the session id);
// --resume SESSION continues a session. With COPILOT_PROVIDER_BASE_URL it talks to that
// endpoint (BYOK) instead of GitHub's model routing, needing no GitHub login; its config and
// state live in COPILOT_HOME.
var copilotFlavour = flavour{
	binary: "copilot", npm: "@github/copilot", minVersion: "1.0.102",
	invocation: copilotInvocation,
	newParser: func(a *Agent) parser {
		return &copilotParser{tools: map[string]provider.ToolCall{}, usageFile: copilotUsageFile(a)}
	},
}

// maxUsageFile caps what is read of the usage file the CLI writes.
const maxUsageFile = 1 << 20

// copilotUsageFile is where a run writes its token counts as it ends: the JSON stream has
// none.
func copilotUsageFile(a *Agent) string { return filepath.Join(a.o.Home, "copilot-usage.json") }

// copilotDenied are the permission kinds a copilot_permission_policy of deny refuses: the
// CLI may then read inside its workspace and call massgen's tools, nothing else.
var copilotDenied = []string{"shell", "write", "url", "memory"}

func copilotInvocation(a *Agent, req provider.Request, prompt, resume string) (invocation, error) {
	home, err := a.home()
	if err != nil {
		return invocation{}, err
	}
	// A previous run's counts must not be taken for this one's.
	if err := os.Remove(copilotUsageFile(a)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return invocation{}, fmt.Errorf("copilot usage file: %w", err)
	}
	servers := map[string]any{ServerName: map[string]any{
		"type": "http", "url": a.tools.url, "headers": map[string]string{secretHeader: a.tools.secret}, "tools": []string{"*"},
	}}
	for _, s := range a.mcp {
		servers[s.Name] = copilotMCP(s)
	}
	mcpCfg := map[string]any{"mcpServers": servers}
	// Copilot CLI has no flag for a system prompt of its own: massgen's goes before the task
	// on the first run of a session (a resumed session has it already), which is MassGen's
	// "append" mode; "replace" is refused by the config.
	if resume == "" || req.Stage == provider.StagePresentation {
		prompt = a.systemText(req) + "\n\n" + prompt
	}
	args := []string{"-p", prompt, "--output-format", "json", "--stream", "off",
		"--additional-mcp-config", mustJSON(mcpCfg),
		"--no-ask-user", "--no-auto-update", "--no-custom-instructions", "--disable-builtin-mcps",
		"--disable-client-telemetry", "--no-remote", "--no-color", "--usage-output-file", copilotUsageFile(a)}
	if a.o.PermissionPolicy == "deny" {
		args = append(args, "--allow-tool", ServerName)
		for _, s := range a.mcp {
			args = append(args, "--allow-tool", s.Name)
		}
		for _, d := range copilotDenied {
			args = append(args, "--deny-tool", d)
		}
	} else {
		// Nobody is there to approve a tool: the CLI's file tools stay confined to the
		// workspace and the --add-dir folders, as no --allow-all-paths is given.
		args = append(args, "--allow-all-tools")
	}
	for _, t := range a.o.DisallowedTools {
		args = append(args, "--deny-tool", t)
	}
	for _, s := range a.mcp {
		for _, t := range serverTools(s, s.ExcludeTools) {
			args = append(args, "--deny-tool", s.Name+"("+t+")")
		}
	}
	if native := nativeTools(a.o.AllowedTools); len(native) > 0 {
		// The list covers MCP servers' tools too: massgen's and the user's stay available,
		// each limited by its own config.
		available := append(native, ServerName)
		for _, s := range a.mcp {
			available = append(available, s.Name)
		}
		args = append(args, "--available-tools", strings.Join(available, ","))
	}
	if a.o.Model != "" {
		args = append(args, "--model", a.o.Model)
	}
	for _, d := range append(append([]string{}, a.ws.Read...), a.ws.Write...) {
		args = append(args, "--add-dir", d)
	}
	// The stream names the session only in its last line, long after the CLI waits on
	// new_answer: a new session gets its id from massgen instead.
	session := ""
	if resume == "" {
		session = newSessionID()
		args = append(args, "--session-id", session)
	} else {
		args = append(args, "--resume", resume)
	}
	env := append(a.baseEnv(home), "COPILOT_AUTO_UPDATE=false")
	if !a.o.UseLogin {
		env = append(env, "COPILOT_HOME="+filepath.Join(home, ".copilot"))
	}
	if a.o.BaseURL != "" {
		typ, wire := copilotProvider(a.o.Model)
		env = append(env, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL="+a.o.BaseURL, "COPILOT_PROVIDER_TYPE="+typ)
		if wire != "" {
			env = append(env, "COPILOT_PROVIDER_WIRE_API="+wire)
		}
		if a.o.APIKey != "" {
			env = append(env, "COPILOT_PROVIDER_API_KEY="+a.o.APIKey)
		}
	}
	return invocation{args: args, env: env, session: session}, nil
}

// newSessionID is a random (version 4) UUID, the form Copilot CLI takes for a session id.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// copilotProvider is the provider type (and OpenAI wire API) of a custom endpoint, from the
// model: Claude models speak Anthropic's Messages API, the rest OpenAI's Responses API.
func copilotProvider(model string) (typ, wire string) {
	if strings.HasPrefix(model, "claude") {
		return "anthropic", ""
	}
	return "openai", "responses"
}

type copilotParser struct {
	tools     map[string]provider.ToolCall
	usageFile string
}

// copilotLine is one line of the stream. Its data is read only for the types parsed below:
// other events (model.call_final_result, session.*) give data fields other shapes.
type copilotLine struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionId"`
	ExitCode  int             `json:"exitCode"`
	Data      json.RawMessage `json:"data"`
}

type copilotData struct {
	Content       string          `json:"content"`
	ToolCallID    string          `json:"toolCallId"`
	ToolName      string          `json:"toolName"`
	Arguments     json.RawMessage `json:"arguments"`
	MCPServerName string          `json:"mcpServerName"`
	Success       bool            `json:"success"`
	Message       string          `json:"message"`
	Result        struct {
		Content string `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// copilotParsed are the line types whose data the parser reads.
var copilotParsed = map[string]bool{
	"assistant.message": true, "assistant.reasoning": true, "tool.execution_start": true,
	"tool.execution_complete": true, "session.error": true,
}

func (p *copilotParser) parse(line []byte) ([]event, error) {
	var l copilotLine
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, err
	}
	var d copilotData
	if copilotParsed[l.Type] {
		if err := json.Unmarshal(l.Data, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", l.Type, err)
		}
	}
	switch l.Type {
	case "assistant.message":
		if d.Content != "" {
			return []event{{chunk: provider.TextDelta{Text: d.Content + "\n"}}}, nil
		}
	case "assistant.reasoning":
		if d.Content != "" {
			return []event{{chunk: provider.ReasoningDelta{Text: d.Content}}}, nil
		}
	case "tool.execution_start":
		// massgen's own tools reach the engine through the tool server, not as the CLI's.
		if d.MCPServerName != ServerName {
			p.tools[d.ToolCallID] = provider.ToolCall{ID: d.ToolCallID, Name: d.ToolName, Arguments: string(d.Arguments)}
		}
	case "tool.execution_complete":
		call, ok := p.tools[d.ToolCallID]
		if !ok {
			return nil, nil
		}
		delete(p.tools, d.ToolCallID)
		result := d.Result.Content
		if d.Error != nil && result == "" {
			result = d.Error.Message
		}
		return []event{{chunk: provider.HostedToolChunk{Call: call, Result: provider.Clip(result, provider.MaxHostedOutput), Failed: !d.Success}}}, nil
	case "session.error":
		return []event{{err: copilotError(d.Message)}}, nil
	case "result":
		var out []event
		if l.SessionID != "" {
			out = append(out, event{session: l.SessionID})
		}
		if u := readCopilotUsage(p.usageFile); u != (provider.Usage{}) {
			out = append(out, event{chunk: provider.UsageChunk{Usage: u}})
		}
		if l.ExitCode != 0 {
			out = append(out, event{err: fmt.Errorf("Copilot CLI ended its run with exit code %d", l.ExitCode)})
		}
		return out, nil
	}
	return nil, nil
}

// readCopilotUsage sums the per-model token counts of the usage file the run wrote before
// its result line; a missing or unreadable file is no usage.
func readCopilotUsage(path string) provider.Usage {
	f, err := os.Open(path)
	if err != nil {
		return provider.Usage{}
	}
	defer f.Close()
	var file struct {
		ModelMetrics map[string]struct {
			Usage struct {
				InputTokens      int64 `json:"inputTokens"`
				OutputTokens     int64 `json:"outputTokens"`
				CacheReadTokens  int64 `json:"cacheReadTokens"`
				CacheWriteTokens int64 `json:"cacheWriteTokens"`
			} `json:"usage"`
		} `json:"modelMetrics"`
	}
	if json.NewDecoder(io.LimitReader(f, maxUsageFile)).Decode(&file) != nil {
		return provider.Usage{}
	}
	var u provider.Usage
	for _, m := range file.ModelMetrics {
		u.InputTokens += m.Usage.InputTokens
		u.OutputTokens += m.Usage.OutputTokens
		u.CachedInputTokens += m.Usage.CacheReadTokens
		u.CacheWriteTokens += m.Usage.CacheWriteTokens
	}
	return u
}

// copilotError explains a failed Copilot CLI run; a rejected key or a missing login is fatal.
func copilotError(msg string) error {
	low := strings.ToLower(msg)
	if strings.Contains(low, "401") || strings.Contains(low, "unauthorized") || strings.Contains(low, "authentication") || strings.Contains(low, "login") {
		return &fatalError{fmt.Sprintf("Copilot CLI is not logged in or its key was rejected: %s (check the key of base_url, or run `copilot login` and leave the key out)", provider.Clip(msg, 500))}
	}
	return fmt.Errorf("Copilot CLI reported: %s", provider.Clip(msg, 1000))
}
