package app

import (
	"errors"
	"os"
	"path/filepath"

	"massgen/internal/cliagent"
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
		SystemPrompt: b.CLI.SystemPrompt, AppendSystemPrompt: b.CLI.AppendSystemPrompt,
		AllowedTools: b.Tools.AllowedTools, DisallowedTools: b.CLI.DisallowedTools,
		PermissionMode: b.CLI.PermissionMode, MaxThinkingTokens: b.CLI.MaxThinkingTokens, ReasoningEffort: b.CLI.ReasoningEffort,
		PermissionPolicy: b.CLI.PermissionPolicy})
}

// cliBinder is a provider that runs a CLI in the agent's workspace (cliagent.Agent).
type cliBinder interface {
	Bind(ws cliagent.Workspace, home string)
	UseMCPServers(servers []mcptool.Server, exclude []string)
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

// closeCLIs ends every CLI agent's process tree and tool server.
func closeCLIs(clis map[string]cliBinder) error {
	var errs []error
	for _, b := range clis {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}
