package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// In automation every stdout line is KEY: value, an error included: a run stopped before its
// session started (a bad config, an unwritable log folder, a config not trusted, a bad flag)
// says why in one ERROR: line too, with stderr and the exit code as without automation. A
// session that failed says it once, from its automation view.
func TestAutomation_ErrorLine(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	tests := []struct {
		name  string
		setup func(t *testing.T) []string // the arguments
		code  int
		want  string // the ERROR: line starts with this
		also  string // and has this
	}{
		{"config error", func(t *testing.T) []string {
			return []string{"--config", writeConfig(t, "agents:\n  - id: a\n    bogus: 1\n    backend: {type: scripted, answers: [x]}\n"), "q"}
		}, ExitConfig, "ERROR: configuration error (exit 1): ", "unknown agent key `bogus`"},
		{"two config errors", func(t *testing.T) []string {
			return []string{"--config", writeConfig(t, "agents:\n  - id: a\n    bogus: 1\n    nosuch: 2\n    backend: {type: scripted, answers: [x]}\n"), "q"}
		}, ExitConfig, "ERROR: configuration error (exit 1): ", "(and 1 more on stderr)"},
		{"missing config", func(t *testing.T) []string { return []string{"--config", "nope.yaml", "q"} },
			ExitConfig, "ERROR: configuration error (exit 1): nope.yaml: config file not found", ""},
		{"unwritable log folder", func(t *testing.T) []string {
			if err := os.WriteFile("blocker", []byte("a file, not a folder"), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"--config", writeConfig(t, fastTeam), "--log-root", "blocker/logs", "q"}
		}, ExitExecution, "ERROR: failed (exit 2): ", "blocker is a file, not a folder"},
		{"not trusted", func(t *testing.T) []string {
			writeProjectConfig(t, fmt.Sprintf(markerTeam, filepath.Join(t.TempDir(), "ran")))
			return []string{"q"}
		}, ExitConfig, "ERROR: configuration error (exit 1): the config .massgen/config.yaml in this folder was found, not named by you", "pass --trust"},
		{"bad flag", func(t *testing.T) []string { return []string{"--confg", "x", "q"} },
			ExitConfig, "ERROR: configuration error (exit 1): unknown flag: --confg: did you mean --config?", ""},
		{"no question", func(t *testing.T) []string { return []string{"--config", writeConfig(t, fastTeam)} },
			ExitConfig, "ERROR: configuration error (exit 1): --automation needs a question", ""},
		{"failed session", func(t *testing.T) []string {
			return []string{"--config", writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [x], faults: [{kind: fatal}]}\n"), "q"}
		}, ExitExecution, "ERROR: failed (exit 2): ", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, out, stderr := execute(t, t.Context(), append([]string{"--automation"}, tc.setup(t)...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, stderr)
			}
			var errs []string
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if k, _, ok := strings.Cut(l, ": "); !ok || strings.ToUpper(k) != k || strings.Contains(k, " ") {
					if !strings.HasPrefix(l, "[") { // MassGen's "[Coordination in progress ...]"
						t.Errorf("stdout line %q is no KEY: value line", l)
					}
				}
				if strings.HasPrefix(l, "ERROR: ") {
					errs = append(errs, l)
				}
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0], tc.want) || !strings.Contains(errs[0], tc.also) {
				t.Errorf("ERROR: lines %q, want one starting %q with %q\nstderr:\n%s", errs, tc.want, tc.also, stderr)
			}
			if tc.name != "failed session" && !strings.Contains(stderr, "massgen: ") && !strings.Contains(stderr, "error: ") {
				t.Errorf("stderr no longer says it:\n%s", stderr)
			}
		})
	}
}

// With --stream-events stdout carries only the events: the ERROR: line goes to stderr with
// the other automation lines.
func TestStreamEvents_ErrorLine(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, stderr := execute(t, t.Context(), "--stream-events", "--config", "nope.yaml", "q")
	if code != ExitConfig || out != "" || !strings.Contains(stderr, "\nERROR: configuration error (exit 1): nope.yaml: config file not found") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}
