package app

import (
	"massgen/internal/config"
	"massgen/internal/workspace"
)

// sandboxOptions are an agent's command_line_execution_mode: srt settings, or nil when its
// commands run on this machine.
func sandboxOptions(t config.Tools) *workspace.SandboxOptions {
	if t.ExecutionMode != "srt" {
		return nil
	}
	return &workspace.SandboxOptions{ReadMode: t.SrtReadMode, AllowRead: t.SrtAllowRead, DenyRead: t.SrtDenyRead,
		AllowedDomains: t.SrtAllowedDomains}
}

// confinementNote says what of the commands' confinement does not hold here, or "".
func confinementNote(o workspace.CommandOptions) string {
	if o.Sandbox != nil {
		return workspace.SandboxNote()
	}
	return workspace.CommandConfinement()
}
