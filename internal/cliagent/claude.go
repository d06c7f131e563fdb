package cliagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"massgen/internal/provider"
)

// Claude Code 2.1: `claude -p PROMPT --output-format stream-json --verbose`, one JSON object a
// line (system init, assistant and user messages, a result with usage and total_cost_usd),
// resumed with --resume SESSION.
var claudeFlavour = flavour{
	binary: "claude", npm: "@anthropic-ai/claude-code", minVersion: "2.1.0",
	invocation: claudeInvocation,
	newParser: func(*Agent) parser {
		return &claudeParser{tools: map[string]provider.ToolCall{}, calls: map[string]provider.Usage{}}
	},
}

// claudeNativeTools are the native tools a claude_code agent may use without asking, unless
// allowed_tools says otherwise: file tools and the shell, confined to the workspace by the
// permission mode and --add-dir.
var claudeNativeTools = []string{"Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "Bash", "TodoWrite", "NotebookEdit"}

// claudeWebSearch is Claude Code's web search tool, which enable_web_search switches on.
const claudeWebSearch = "WebSearch"

// claudeNeverTools are native tools that would take the CLI outside its run or ask a human:
// they are always disallowed.
var claudeNeverTools = []string{"AskUserQuestion", "EnterWorktree", "ExitWorktree", "CronCreate", "ScheduleWakeup"}

// mcpToolTimeout keeps the CLI waiting on a workflow call for as long as the engine takes to
// answer it (until the next turn): 24 hours, in milliseconds.
const mcpToolTimeout = "86400000"

func claudeInvocation(a *Agent, req provider.Request, prompt, resume string) (invocation, error) {
	home, err := a.home()
	if err != nil {
		return invocation{}, err
	}
	servers := map[string]any{ServerName: map[string]any{
		"type": "http", "url": a.tools.url, "headers": map[string]string{secretHeader: a.tools.secret},
	}}
	native := nativeTools(a.o.AllowedTools)
	allowed := claudeNativeTools
	if len(native) > 0 {
		allowed = native
	}
	allowed = append(append([]string{}, allowed...), "mcp__"+ServerName)
	disallowed := append(append([]string{}, claudeNeverTools...), a.o.DisallowedTools...)
	// WebSearch is Claude Code's own search (enable_web_search): allowed with the key, or when
	// allowed_tools names it; denied otherwise, so that no search leaves without the config
	// asking for it.
	switch {
	case slices.Contains(toolNames(native), claudeWebSearch):
	case a.o.WebSearch:
		allowed = append(allowed, claudeWebSearch)
		if len(native) > 0 {
			native = append(slices.Clone(native), claudeWebSearch)
		}
	default:
		disallowed = append(disallowed, claudeWebSearch)
	}
	for _, s := range a.mcp {
		servers[s.Name] = claudeMCP(s)
		if len(s.AllowedTools) == 0 {
			allowed = append(allowed, "mcp__"+s.Name)
		}
		for _, t := range serverTools(s, s.AllowedTools) {
			allowed = append(allowed, "mcp__"+s.Name+"__"+t)
		}
		for _, t := range serverTools(s, s.ExcludeTools) {
			disallowed = append(disallowed, "mcp__"+s.Name+"__"+t)
		}
	}
	mcpCfg := map[string]any{"mcpServers": servers}
	mode := a.o.PermissionMode
	if mode == "" || mode == "bypassPermissions" || mode == "default" {
		// Without a human to ask, "default" would refuse every edit; bypassPermissions is
		// refused for root and would lift the limits massgen sets: acceptEdits with the allowed
		// tools grants what massgen grants, and nothing waits.
		mode = "acceptEdits"
	}
	args := []string{"-p", prompt, "--output-format", "stream-json", "--verbose",
		"--mcp-config", mustJSON(mcpCfg), "--strict-mcp-config",
		"--permission-mode", mode,
		"--allowedTools", strings.Join(allowed, ","),
		"--disallowedTools", strings.Join(disallowed, ","),
	}
	if len(native) > 0 {
		// --allowedTools only spares a prompt (acceptEdits grants edits anyway): --tools is
		// what the model is offered of the built-in tools.
		args = append(args, "--tools", strings.Join(toolNames(native), ","))
	}
	if a.o.Model != "" {
		args = append(args, "--model", a.o.Model)
	}
	for _, d := range append(append([]string{}, a.ws.Read...), a.ws.Write...) {
		args = append(args, "--add-dir", d)
	}
	if a.o.SystemPrompt != "" {
		args = append(args, "--system-prompt", a.o.SystemPrompt)
	}
	args = append(args, "--append-system-prompt", a.systemText(req))
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	env := append(a.baseEnv(home),
		"MCP_TOOL_TIMEOUT="+mcpToolTimeout,
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ENABLE_TOOL_SEARCH=false")
	if a.o.APIKey != "" {
		env = append(env, "ANTHROPIC_API_KEY="+a.o.APIKey)
	}
	if a.o.BaseURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+a.o.BaseURL)
	}
	if a.o.MaxThinkingTokens > 0 {
		env = append(env, "MAX_THINKING_TOKENS="+strconv.Itoa(a.o.MaxThinkingTokens))
	}
	return invocation{args: args, env: env}, nil
}

type claudeParser struct {
	tools map[string]provider.ToolCall // the CLI's own tool calls awaiting their results
	// calls is the usage of each model call of the run so far, by message id: Claude Code
	// repeats a message's usage on every line of it, and reports the run's total only at
	// its end.
	calls map[string]provider.Usage
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func (u claudeUsage) neutral() provider.Usage {
	return provider.Usage{
		InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
		CacheWriteTokens:  u.CacheCreationInputTokens,
		OutputTokens:      u.OutputTokens,
	}
}

type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Message   struct {
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
		Usage   *claudeUsage    `json:"usage"`
	} `json:"message"`
	IsError      bool        `json:"is_error"`
	Result       string      `json:"result"`
	Errors       []string    `json:"errors"`
	TotalCostUSD float64     `json:"total_cost_usd"`
	Usage        claudeUsage `json:"usage"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (p *claudeParser) parse(line []byte) ([]event, error) {
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, err
	}
	var out []event
	if l.SessionID != "" {
		out = append(out, event{session: l.SessionID})
	}
	switch l.Type {
	case "assistant", "user":
		var blocks []claudeBlock
		if len(l.Message.Content) > 0 && l.Message.Content[0] == '[' {
			if err := json.Unmarshal(l.Message.Content, &blocks); err != nil {
				return nil, err
			}
		}
		for _, b := range blocks {
			if ev, ok := p.block(b); ok {
				out = append(out, ev)
			}
		}
		if l.Type == "assistant" && l.Message.ID != "" && l.Message.Usage != nil {
			p.calls[l.Message.ID] = l.Message.Usage.neutral()
			var sum provider.Usage
			for _, u := range p.calls {
				sum = sum.Add(u)
			}
			out = append(out, event{streamed: &sum})
		}
	case "result":
		clear(p.calls)
		u := l.Usage.neutral()
		u.CostUSD = l.TotalCostUSD
		if u != (provider.Usage{}) {
			out = append(out, event{chunk: provider.UsageChunk{Usage: u}})
		}
		if l.IsError || strings.HasPrefix(l.Subtype, "error") {
			msg := l.Result
			if msg == "" {
				msg = strings.Join(l.Errors, "; ")
			}
			out = append(out, event{err: claudeError(l.Subtype, msg)})
		}
	}
	return out, nil
}

func (p *claudeParser) block(b claudeBlock) (event, bool) {
	switch b.Type {
	case "text":
		if b.Text != "" {
			return event{chunk: provider.TextDelta{Text: b.Text + "\n"}}, true
		}
	case "thinking":
		if b.Thinking != "" {
			return event{chunk: provider.ReasoningDelta{Text: b.Thinking}}, true
		}
	case "tool_use":
		if strings.HasPrefix(b.Name, "mcp__"+ServerName+"__") {
			return event{}, false // massgen's own tools reach the engine through the tool server
		}
		p.tools[b.ID] = provider.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)}
	case "tool_result":
		call, ok := p.tools[b.ToolUseID]
		if !ok {
			return event{}, false
		}
		delete(p.tools, b.ToolUseID)
		return event{chunk: provider.HostedToolChunk{Call: call, Result: provider.Clip(blockText(b.Content), provider.MaxHostedOutput), Failed: b.IsError}}, true
	}
	return event{}, false
}

// blockText is a tool result's content, a string or a list of text blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type, Text string
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}

// claudeError explains a failed Claude Code result; a rejected key or a missing login is
// fatal and says what to do.
func claudeError(subtype, msg string) error {
	low := strings.ToLower(msg)
	switch {
	case strings.Contains(low, "invalid api key") || strings.Contains(low, "authentication") || strings.Contains(low, "/login"):
		return &fatalError{fmt.Sprintf("Claude Code is not logged in or its key was rejected: %s (set ANTHROPIC_API_KEY, or run `claude login` and set cli_use_login: true)", provider.Clip(msg, 500))}
	case msg == "":
		return errors.New("Claude Code reported " + subtype)
	}
	return fmt.Errorf("Claude Code reported %s: %s", subtype, provider.Clip(msg, 1000))
}

// toolNames are the tool names of permission rules: Bash for "Bash(git *)".
func toolNames(rules []string) []string {
	var out []string
	for _, r := range rules {
		name, _, _ := strings.Cut(r, "(")
		if name = strings.TrimSpace(name); name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
