package app

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
)

// A CLI agent's sandbox is refused, before any CLI starts, where it cannot hold: a network
// allow-list (the CLI must reach its model) and the CLI's own login (its home is hidden).
func TestCLISandbox_RefusedWhereItCannotHold(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		env         map[string]string
		want        string
	}{
		{"network allow-list", ", command_line_srt_network_allowed_domains: [example.com]", map[string]string{"ANTHROPIC_API_KEY": "sk-test"},
			"command_line_srt_network_allowed_domains cannot apply to a coding-agent CLI"},
		{"own login", "", map[string]string{}, "command_line_execution_mode: srt needs an API key for a coding-agent CLI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := config.Parse("cli.yaml", []byte(`agents:
  - id: claude
    backend: {type: claude_code, base_url: "http://127.0.0.1:9", command_line_execution_mode: srt`+tc.extra+`}
`))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			root := t.TempDir()
			_, err := Run(t.Context(), cfg, Options{Question: "Hi.", LogRoot: filepath.Join(root, "logs"),
				WorkspaceRoot: filepath.Join(root, "ws"), Getenv: env(tc.env)})
			var ae *Error
			if !errors.As(err, &ae) || ae.Code != ExitConfig || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a configuration error (exit 1) saying %q", err, tc.want)
			}
		})
	}
}
