package command

import (
	"errors"
	"os"
	"path/filepath"

	"massgen/internal/childproc"
	"massgen/internal/workspace"
)

// cliAddressSpace bounds a sandboxed CLI's virtual memory: in effect, not at all.
const cliAddressSpace = 1 << 46

// CLISandbox is the sandbox a coding-agent CLI runs in under command_line_execution_mode: srt:
// what the agent's commands would see (its workspace writable, the snapshots and context paths
// as granted, the system read-only per o, massgen's own trees and secrets hidden, also below
// the program folders), plus the CLI's state folder writable (its HOME and config) and
// programs (the CLI's install and node) read-only.
// The CLI's own file and shell tools, and everything they start, stay inside. It shares the
// network: the CLI calls its model's API and massgen's tool server on loopback itself, so
// command_line_srt_network_allowed_domains cannot apply (the caller refuses it).
func CLISandbox(ws *workspace.Agent, o *SandboxOptions, userHome, state string, programs []string) (*childproc.Sandbox, error) {
	if o == nil {
		return nil, errors.New("no sandbox options")
	}
	a := &agent{ws: ws} // without proxies: the CLI shares the network
	opts := *o
	opts.AllowedDomains = nil
	sb, m, err := a.sandboxMounts(&opts, userHome)
	if err != nil {
		return nil, err
	}
	sb.Network = true
	// Node reserves address space by the gigabyte for each WebAssembly instance (undici's
	// HTTP parser is one): the commands' bound would stop the CLI from starting.
	sb.Limits.AddressSpace = max(sb.Limits.AddressSpace, cliAddressSpace)
	home := cleanHome(userHome)
	for _, p := range programs {
		p = expandHome(p, userHome)
		// A program folder that holds the home folder (a ~/bin/claude's prefix is ~) would
		// show all of it, ~/.ssh included: the narrower folders in the list show the program.
		if p == "" || p == string(filepath.Separator) || home != "" && workspace.Within(p, home) || !exists(p) {
			continue
		}
		m.tree(childproc.ReadOnly, p, p) // what the sandbox hides below stays hidden
	}
	state = filepath.Clean(state)
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(state); err == nil {
		state = real
	}
	// Last: the state folder lies in the run's folder, which the view above hides.
	m.tree(childproc.Writable, state, state)
	sb.Mounts = m.list
	return sb, nil
}
