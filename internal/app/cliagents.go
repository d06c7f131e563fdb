package app

import (
	"errors"
	"os"
	"path/filepath"

	"massgen/internal/childproc"
	"massgen/internal/cliagent"
	"massgen/internal/command"
	"massgen/internal/config"
	"massgen/internal/mcptool"
	"massgen/internal/provider"
	"massgen/internal/workspace"
)

// newCLIAgent builds a coding-agent CLI agent (claude_code, codex, gemini_cli, copilot). Without a key
// it runs on the CLI's own login, with the user's real HOME.
func newCLIAgent(b config.Backend, key, keyEnv string) (provider.Provider, error) {
	home, _ := os.UserHomeDir()
	return cliagent.New(cliagent.Options{Type: b.Type, Model: b.Model, APIKey: key, KeyEnv: keyEnv, BaseURL: b.BaseURL,
		UseLogin: key == "", UserHome: home, PathEnv: os.Getenv("PATH"),
		SystemPrompt: b.CLI.SystemPrompt,
		AllowedTools: b.Tools.AllowedTools, DisallowedTools: b.CLI.DisallowedTools,
		PermissionMode: b.CLI.PermissionMode, MaxThinkingTokens: b.CLI.MaxThinkingTokens, ReasoningEffort: b.CLI.ReasoningEffort,
		PermissionPolicy: b.CLI.PermissionPolicy, WebSearch: b.Hosted.WebSearch})
}

// cliBinder is a provider that runs a CLI in the agent's workspace (cliagent.Agent).
type cliBinder interface {
	Bind(ws cliagent.Workspace, home string)
	UseMCPServers(servers []mcptool.Server, exclude []string)
	UseSandbox(fn cliagent.SandboxFunc)
	OnLogin() bool
	Close() error
}

// isCLI reports whether an agent's backend is a coding-agent CLI, which brings its own file
// and shell tools: massgen's are not offered to it.
func isCLI(a config.Agent) bool {
	return config.BackendTypes[a.Backend.Type].Protocol == config.ProtocolCLI
}

// bindCLI gives a CLI agent its workspace: the CLI runs in it and may read the others'
// snapshots and the context paths. Context paths stay read-only for a CLI, even for the final
// presenter: its own tools cannot be granted a path for one call only, as massgen's can. Its
// HOME lives under the run's folder, which no other agent can read.
func bindCLI(b cliBinder, run *workspace.Run, ws *workspace.Agent, paths []workspace.ContextPath) error {
	w := cliagent.Workspace{Dir: ws.Dir(), Read: []string{filepath.Dir(ws.SnapshotDir())}}
	for _, p := range paths {
		abs, err := filepath.Abs(p.Path)
		if err != nil {
			return err
		}
		w.Read = append(w.Read, abs)
	}
	home := filepath.Join(run.Dir(), "cli", ws.ID())
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	b.Bind(w, home)
	return nil
}

// sandboxCLI runs a CLI agent in massgen's sandbox under command_line_execution_mode: srt:
// its own tools then reach what the agent's grants give, whatever its permission flags let
// through. The CLI shares the network, to reach its model and massgen's tool server.
func sandboxCLI(b cliBinder, ws *workspace.Agent, opts *command.SandboxOptions) error {
	if opts == nil {
		return nil
	}
	if len(opts.AllowedDomains) > 0 {
		return errors.New("command_line_srt_network_allowed_domains cannot apply to a coding-agent CLI: the CLI itself must reach its model's API (remove it; the CLI's sandbox shares the network)")
	}
	if b.OnLogin() {
		return errors.New("command_line_execution_mode: srt needs an API key for a coding-agent CLI: on its own login the CLI needs the home folder the sandbox hides (set the backend's key, or leave the sandbox out)")
	}
	if err := opts.Ready(); err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	b.UseSandbox(func(state string, programs []string) (*childproc.Sandbox, error) {
		return command.CLISandbox(ws, opts, home, state, programs)
	})
	return nil
}

// closeCLIs ends every CLI agent's process tree and tool server.
func closeCLIs(clis map[string]cliBinder) error {
	var errs []error
	for _, b := range clis {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}
