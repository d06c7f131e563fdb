package cliagent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/provider"
)

// Codex 0.171: `codex exec --json PROMPT` prints JSON lines (thread.started with the
// thread id, item.started/item.completed for messages, reasoning, commands, patches and MCP
// calls, turn.completed with usage, turn.failed and error); `codex exec resume ID PROMPT`
// continues a thread. Its config lives in CODEX_HOME/config.toml.
var codexFlavour = flavour{
	binary: "codex", npm: "@openai/codex", minVersion: "0.171.0",
	invocation: codexInvocation,
	newParser:  func(*Agent) parser { return &codexParser{} },
}

// codexKeyEnv is the variable the Codex config's provider reads the key from.
const codexKeyEnv = "OPENAI_API_KEY"

func codexInvocation(a *Agent, req provider.Request, prompt, resume string) (invocation, error) {
	home, err := a.home()
	if err != nil {
		return invocation{}, err
	}
	codexHome := filepath.Join(a.o.Home, "codex_home")
	if a.o.UseLogin && a.o.UserHome != "" {
		codexHome = filepath.Join(a.o.UserHome, ".codex")
	}
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return invocation{}, fmt.Errorf("CODEX_HOME: %w", err)
	}
	instructions := filepath.Join(a.o.Home, "instructions.md")
	if err := os.WriteFile(instructions, []byte(a.systemText(req)), 0o600); err != nil {
		return invocation{}, fmt.Errorf("codex instructions: %w", err)
	}
	cfg := codexConfig(a, instructions)
	if !a.o.UseLogin {
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg.file()), 0o600); err != nil {
			return invocation{}, fmt.Errorf("codex config: %w", err)
		}
	}
	args := []string{"exec"}
	if resume != "" {
		args = append(args, "resume")
	}
	args = append(args, "--json", "--skip-git-repo-check")
	if a.o.UseLogin {
		// The user's own config stays as it is; massgen's settings, its MCP servers included,
		// go on the command line, where they override the file's.
		args = append(args, cfg.flags()...)
	}
	if a.o.Model != "" {
		args = append(args, "--model", a.o.Model)
	}
	if resume != "" {
		args = append(args, resume)
	}
	args = append(args, prompt)
	// Codex's workspace-write sandbox lets commands write /tmp and $TMPDIR: /tmp is shut
	// (codexConfig), and $TMPDIR is a folder of this agent's own.
	tmp := filepath.Join(a.o.Home, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return invocation{}, fmt.Errorf("codex temporary folder: %w", err)
	}
	env := append(a.baseEnv(home), "CODEX_HOME="+codexHome, "TMPDIR="+tmp)
	if a.o.APIKey != "" {
		env = append(env, codexKeyEnv+"="+a.o.APIKey)
	}
	return invocation{args: args, env: env}, nil
}

type codexParser struct{}

type codexLine struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Message  string          `json:"message"`
	Item     json.RawMessage `json:"item"`
	Error    struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
		ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
}

type codexItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Text             string `json:"text"`
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	Status           string `json:"status"`
	Server           string `json:"server"`
	Tool             string `json:"tool"`
	Message          string `json:"message"`
	Changes          []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

func (p *codexParser) parse(line []byte) ([]event, error) {
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, err
	}
	switch l.Type {
	case "thread.started":
		return []event{{session: l.ThreadID}}, nil
	case "item.completed":
		var it codexItem
		if err := json.Unmarshal(l.Item, &it); err != nil {
			return nil, err
		}
		if ev, ok := codexItemEvent(it); ok {
			return []event{ev}, nil
		}
	case "turn.completed":
		u := provider.Usage{InputTokens: l.Usage.InputTokens, CachedInputTokens: l.Usage.CachedInputTokens,
			OutputTokens: l.Usage.OutputTokens, ReasoningTokens: l.Usage.ReasoningOutputTokens}
		if u != (provider.Usage{}) {
			return []event{{chunk: provider.UsageChunk{Usage: u}}}, nil
		}
	case "turn.failed":
		return []event{{err: codexError(l.Error.Message)}}, nil
	case "error":
		return []event{{err: codexError(l.Message)}}, nil
	}
	return nil, nil
}

func codexItemEvent(it codexItem) (event, bool) {
	switch it.Type {
	case "agent_message":
		return event{chunk: provider.TextDelta{Text: it.Text + "\n"}}, true
	case "reasoning":
		return event{chunk: provider.ReasoningDelta{Text: it.Text}}, true
	case "command_execution":
		failed := it.Status == "failed" || (it.ExitCode != nil && *it.ExitCode != 0)
		return event{chunk: provider.HostedToolChunk{Call: provider.ToolCall{ID: it.ID, Name: "shell", Arguments: provider.HostedArgs(map[string]string{"command": it.Command})},
			Result: provider.Clip(it.AggregatedOutput, provider.MaxHostedOutput), Failed: failed}}, true
	case "file_change":
		var files []string
		for _, c := range it.Changes {
			files = append(files, c.Kind+" "+c.Path)
		}
		return event{chunk: provider.HostedToolChunk{Call: provider.ToolCall{ID: it.ID, Name: "apply_patch", Arguments: provider.HostedArgs(map[string]any{"changes": files})},
			Result: it.Status, Failed: it.Status == "failed"}}, true
	case "mcp_tool_call":
		if it.Server == ServerName {
			return event{}, false
		}
		return event{chunk: provider.HostedToolChunk{Call: provider.ToolCall{ID: it.ID, Name: "mcp__" + it.Server + "__" + it.Tool, Arguments: "{}"},
			Result: it.Status, Failed: it.Status == "failed"}}, true
	case "error":
		return event{chunk: provider.ReasoningDelta{Text: "codex: " + it.Message + "\n"}}, true
	}
	return event{}, false
}

// codexError explains a failed Codex turn; a rejected key or a missing login is fatal.
func codexError(msg string) error {
	low := strings.ToLower(msg)
	if strings.Contains(low, "401") || strings.Contains(low, "unauthorized") || strings.Contains(low, "not logged in") || strings.Contains(low, "login") {
		return &fatalError{fmt.Sprintf("Codex is not logged in or its key was rejected: %s (set OPENAI_API_KEY, or run `codex login` and set cli_use_login: true)", provider.Clip(msg, 500))}
	}
	return fmt.Errorf("Codex reported: %s", provider.Clip(msg, 1000))
}
