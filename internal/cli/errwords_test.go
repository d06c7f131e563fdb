package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Errors about the user's paths say what is wrong and what to do, in the user's words, not
// the system call's ("lstat ...", "mkdir ...: no such file or directory").
func TestErrors_PathsInUserWords(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("blocker", []byte("a file, not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "gone", "massgen")
	ctxTeam := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\norchestrator:\n  context_paths:\n    - path: "+missing+"\n")
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"log root is a file", []string{"--config", writeConfig(t, fastTeam), "--log-root", "blocker/logs", "q"}, ExitExecution,
			[]string{"cannot create the log directory under blocker/logs: blocker is a file, not a folder", "pass --no-logs"}},
		{"log root cannot be made", []string{"--config", writeConfig(t, fastTeam), "--log-root", "/proc/nope", "q"}, ExitExecution,
			[]string{"cannot create the log directory under /proc/nope: /proc/nope cannot be created in /proc", "pass --no-logs"}},
		{"missing context path", []string{"--config", ctxTeam, "--no-logs", "q"}, ExitConfig,
			[]string{"agent a: context_paths[0]: context path " + missing + " does not exist: create it, or fix or remove it in context_paths"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := execute(t, t.Context(), append([]string{"--no-display"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, leak := range []string{"lstat ", "mkdir ", "no such file or directory", "workspace:"} {
				if strings.Contains(stderr, leak) {
					t.Errorf("stderr shows Go's %q:\n%s", leak, stderr)
				}
			}
		})
	}
}
