package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestAPIKey(t *testing.T) {
	tests := []struct {
		name     string
		backend  config.Backend
		env      map[string]string
		wantKey  string
		wantFrom string
		wantErr  string
	}{
		{"config wins", config.Backend{Type: "openai", APIKey: "k1"}, map[string]string{"OPENAI_API_KEY": "k2"}, "k1", "api_key in the config", ""},
		{"type variable", config.Backend{Type: "openai"}, map[string]string{"OPENAI_API_KEY": "k2"}, "k2", "OPENAI_API_KEY", ""},
		{"gemini tries both", config.Backend{Type: "gemini"}, map[string]string{"GEMINI_API_KEY": "g"}, "g", "GEMINI_API_KEY", ""},
		{"chatcompletion follows the host", config.Backend{Type: "chatcompletion", BaseURL: "https://api.groq.com/openai/v1"},
			map[string]string{"GROQ_API_KEY": "gq", "OPENAI_API_KEY": "o"}, "gq", "GROQ_API_KEY", ""},
		{"chatcompletion unknown host falls back to OpenAI's", config.Backend{Type: "chatcompletion", BaseURL: "http://127.0.0.1:9/v1"},
			map[string]string{"OPENAI_API_KEY": "o"}, "o", "OPENAI_API_KEY", ""},
		{"local server needs none", config.Backend{Type: "ollama"}, nil, "", "", ""},
		{"missing key names the variable", config.Backend{Type: "claude"}, nil, "", "ANTHROPIC_API_KEY", "set ANTHROPIC_API_KEY"},
		{"moonshot names both", config.Backend{Type: "moonshot"}, nil, "", "MOONSHOT_API_KEY", "MOONSHOT_API_KEY or KIMI_API_KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, from, err := APIKey(tc.backend, env(tc.env))
			if key != tc.wantKey || from != tc.wantFrom {
				t.Errorf("got %q from %q", key, from)
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestDefaultTeam(t *testing.T) {
	if _, err := DefaultTeam(env(nil)); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "massgen --config @examples/demo ") {
		t.Fatalf("no keys: %v", err)
	}
	one, err := DefaultTeam(env(map[string]string{"ANTHROPIC_API_KEY": "x"}))
	if err != nil || strings.Count(one, "type: claude") != 3 {
		t.Fatalf("one provider gives three agents of it:\n%s (%v)", one, err)
	}
	many, err := DefaultTeam(env(map[string]string{"OPENAI_API_KEY": "x", "GOOGLE_API_KEY": "y", "GEMINI_API_KEY": "z"}))
	if err != nil || strings.Count(many, "- id:") != 2 || !strings.Contains(many, "type: openai") || !strings.Contains(many, "type: gemini") {
		t.Fatalf("one agent per provider:\n%s (%v)", many, err)
	}
	// The team is a valid config, whatever this build can run.
	if _, rep := config.Parse("", []byte(many)); len(rep.Errors) > 0 && !strings.Contains(rep.Text(), "not supported yet in this build") {
		t.Fatalf("team config invalid:\n%s", rep.Text())
	}
}

// Four agents on four providers without keys: one run names every variable to set, instead
// of one per run (four reruns to learn them all), and starts nothing.
func TestRun_ReportsEveryMissingKeyAtOnce(t *testing.T) {
	cfg, rep := config.Parse("team.yaml", []byte(`
agents:
  - {id: gpt, backend: {type: openai, model: gpt-5-mini}}
  - {id: claude, backend: {type: claude, model: claude-sonnet-4-5}}
  - {id: local, backend: {type: ollama, model: llama3}}
  - {id: gem, backend: {type: gemini, model: gemini-2.5-flash}}
  - {id: fast, backend: {type: groq, model: llama-3.3-70b-versatile}}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	_, err := Run(t.Context(), cfg, Options{Question: "Q?", Logging: true, LogRoot: filepath.Join(root, "logs"),
		WorkspaceRoot: filepath.Join(root, "ws"), Getenv: func(string) string { return "" }})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != ExitConfig {
		t.Fatalf("error %v, want a configuration error", err)
	}
	for _, want := range []string{"agent gpt: ", "OPENAI_API_KEY", "agent claude: ", "ANTHROPIC_API_KEY", "agent gem: ", "GEMINI_API_KEY", "agent fast: ", "GROQ_API_KEY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "agent local") {
		t.Errorf("ollama needs no key, yet it is reported:\n%v", err)
	}
	if _, statErr := os.Stat(filepath.Join(root, "logs")); statErr == nil {
		t.Error("a log directory was created for a run that never started")
	}
}
