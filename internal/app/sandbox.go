package app

import (
	"bytes"
	"os"
	"slices"

	"massgen/internal/command"
	"massgen/internal/config"
)

// sandboxOptions are an agent's command_line_execution_mode: srt settings, or nil when its
// commands run on this machine. keyFiles are the files the sandbox must hide (keyFiles).
func sandboxOptions(t config.Tools, keyFiles []string) *command.SandboxOptions {
	if !command.Sandboxed(t.ExecutionMode) {
		return nil
	}
	return &command.SandboxOptions{ReadMode: t.SrtReadMode, AllowRead: t.SrtAllowRead, DenyRead: t.SrtDenyRead,
		AllowedDomains: t.SrtAllowedDomains, Hide: keyFiles}
}

// keyFiles are the files massgen reads keys from, which no sandboxed command may read: the
// .env files LoadDotEnv reads, and the config file when it holds a secret itself rather than
// a ${VAR} (or cannot be read to tell).
func keyFiles(cfg *config.Config, getenv func(string) string) []string {
	out := dotEnvFiles()
	if cfg.Path == "" {
		return out
	}
	data, err := os.ReadFile(cfg.Path)
	if err != nil || slices.ContainsFunc(sessionSecrets(cfg, getenv, nil), func(s string) bool { return s != "" && bytes.Contains(data, []byte(s)) }) {
		out = append(out, cfg.Path)
	}
	return out
}
