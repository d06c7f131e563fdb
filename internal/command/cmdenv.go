package command

import (
	"fmt"
	"strings"

	"massgen/internal/childproc"
)

// commandEnvNames are the variables commands get from massgen's environment: where things are
// and how to print them. An allow-list, because no list of credential names is ever complete
// (OPENAI_KEY, DATABASE_URL, GH_PAT, SLACK_WEBHOOK...). A name ending in * is a prefix.
var commandEnvNames = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR", "COLUMNS", "LINES"}

// allowedEnv keeps the variables of env that commandEnvNames or pass name.
func allowedEnv(env, pass []string) []string {
	var out []string
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if ok && name != "" && (envNamed(name, commandEnvNames) || envNamed(name, pass)) {
			out = append(out, kv)
		}
	}
	return out
}

func envNamed(name string, patterns []string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}

// envNote tells the model what its commands' environment holds and how far they are confined.
func envNote(opts Options) string {
	names := strings.Join(append(append([]string{}, commandEnvNames...), opts.PassEnv...), ", ")
	note := "Commands get only these environment variables: " + names + " (no API keys)."
	if o := opts.Sandbox; o != nil {
		return note + " " + o.describe()
	}
	if ok, why := childproc.Confinement(); ok {
		note += " They see only their own processes."
	} else {
		note += " Note: " + why + "."
	}
	return note
}

// CommandConfinement is "" when commands run in namespaces of their own, and otherwise says, once
// per call, what they can reach for the user to see: a warning to show at startup.
func CommandConfinement() string {
	if ok, why := childproc.Confinement(); !ok {
		return "execute_command and background shells: " + why
	}
	return ""
}

// SandboxReady reports why command_line_execution_mode: srt cannot run here, or nil. It is
// checked once, by starting a sandbox (childproc.SandboxReady).
func SandboxReady() error {
	if err := childproc.SandboxReady(); err != nil {
		return fmt.Errorf("command_line_execution_mode: srt cannot run here: %w. "+
			"Fix that, or use command_line_execution_mode: local to run commands unsandboxed", err)
	}
	return nil
}

// SandboxNote is "" when the sandbox holds as documented here, and otherwise says what does not,
// for the user to see at startup.
func SandboxNote() string {
	if n := childproc.SandboxNote(); n != "" {
		return "execute_command and background shells: " + n
	}
	return ""
}
