package cliagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/provider"
)

// Options configure one CLI agent.
type Options struct {
	// Type is the backend type: claude_code, codex or gemini_cli.
	Type  string
	Model string
	// APIKey is given to the CLI in its own key variable; KeyEnv names where it came from.
	// Empty with UseLogin: the CLI uses the user's own login.
	APIKey, KeyEnv string
	// BaseURL points the CLI at another endpoint of its vendor's API ("" for the default).
	BaseURL string
	// Binary is the CLI to run (a name looked up in PATH, or a path); "" for the type's own.
	Binary string
	// Home is set by Bind.
	Home string
	// UseLogin passes the user's real HOME instead, for the CLI's own login (no API key).
	UseLogin bool
	// UserHome is the user's home folder, for UseLogin.
	UserHome string
	// PathEnv is the PATH the CLI gets (node and the tools it runs live there).
	PathEnv string

	// MassGen's backend keys of these types.
	// SystemPrompt replaces the CLI's system prompt where it allows (claude_code). The
	// config's append_system_prompt is part of the agent's system message, req.System.
	SystemPrompt      string
	AllowedTools      []string // the CLI's native tools it may use without asking
	DisallowedTools   []string // native tools it may not use
	PermissionMode    string   // claude_code: default, acceptEdits, plan (bypassPermissions maps to acceptEdits + allowed tools)
	MaxThinkingTokens int      // claude_code thinking budget
	ReasoningEffort   string   // codex model_reasoning_effort
	PermissionPolicy  string   // copilot: approve (default) or deny
	WebSearch         bool     // claude_code: its WebSearch tool is allowed (enable_web_search); else denied
}

func (o Options) check() error {
	if o.APIKey == "" && !o.UseLogin {
		return errors.New("cliagent: no API key and no login")
	}
	if o.Type == "copilot" {
		if o.SystemPrompt != "" {
			return errors.New("copilot: system_prompt is not supported: Copilot CLI cannot replace its own system message; use append_system_prompt")
		}
		if o.APIKey != "" && o.BaseURL == "" {
			return errors.New("copilot: an API key is for a custom endpoint: set base_url (an OpenAI- or Anthropic-compatible API), or leave the key out to use the GitHub login of `copilot login`")
		}
	}
	return nil
}

// invocation is how one run is started.
type invocation struct {
	args []string
	env  []string
	// session is the id of the new session the run starts, when massgen chose it.
	session string
}

// flavour is what differs between the CLIs: how a run is started, and how its output reads.
type flavour struct {
	binary, npm, minVersion string
	invocation              func(a *Agent, req provider.Request, prompt, resume string) (invocation, error)
	newParser               func(a *Agent) parser
}

// parser reads the CLI's JSON stream one line at a time.
type parser interface {
	parse(line []byte) ([]event, error)
}

var flavours = map[string]flavour{
	"claude_code": claudeFlavour,
	"codex":       codexFlavour,
	"gemini_cli":  geminiFlavour,
	"copilot":     copilotFlavour,
}

// home is the HOME the CLI runs with, created on first use.
func (a *Agent) home() (string, error) {
	if a.o.UseLogin && a.o.UserHome != "" {
		return a.o.UserHome, nil
	}
	h := filepath.Join(a.o.Home, "home")
	if err := os.MkdirAll(h, 0o700); err != nil {
		return "", fmt.Errorf("the CLI's home folder: %w", err)
	}
	return h, nil
}

// baseEnv is the environment every CLI gets: not massgen's, which holds every provider's key,
// but a PATH, a HOME, and what keeps a terminal program quiet.
func (a *Agent) baseEnv(home string) []string {
	path := a.o.PathEnv
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{"PATH=" + path, "HOME=" + home, "TERM=dumb", "NO_COLOR=1", "CI=1", "LANG=C.UTF-8"}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return env
}

// systemText is massgen's system prompt for the CLI: the coordination prompt (the agent's
// system message, append_system_prompt included, then the rules), then where it works.
func (a *Agent) systemText(req provider.Request) string {
	parts := []string{}
	if req.System != "" {
		parts = append(parts, req.System)
	}
	parts = append(parts, workspaceNote(a.ws))
	if a.sandbox != nil {
		parts = append(parts, "You run in a sandbox: outside your workspace and the folders you may write, files are read-only or hidden.")
	}
	return strings.Join(parts, "\n\n")
}

// workspaceNote tells the model where it works and what it may read, since the CLI's own
// tools, not massgen's, touch the files.
func workspaceNote(ws Workspace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your workspace is %s (the current directory): write your files there with your own tools.", ws.Dir)
	if len(ws.Read) > 0 {
		fmt.Fprintf(&b, " You may read, but not change: %s.", strings.Join(ws.Read, ", "))
	}
	if len(ws.Write) > 0 {
		fmt.Fprintf(&b, " You may also write in: %s.", strings.Join(ws.Write, ", "))
	}
	b.WriteString(" Finish every turn by calling one of massgen's tools (new_answer or vote); text alone is not an answer.")
	return b.String()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "{}" // maps and slices of strings cannot fail
	}
	return string(b)
}
