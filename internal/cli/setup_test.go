package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
)

// --init writes the team massgen would build from the API keys that are set, to the file
// massgen reads by itself; it never overwrites a file without --force, and what it writes
// validates.
func TestInit_FromTheKeysThatAreSet(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("GEMINI_API_KEY", "g-test")
	code, out, stderr := execute(t, t.Context(), "--init")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "wrote .massgen/config.yaml: 2 agents: openai_1 (openai gpt-5.4), gemini_1 (gemini gemini-3-flash-preview)") {
		t.Errorf("stdout:\n%s", out)
	}
	cfg, rep := config.Load(defaultConfigPath)
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatalf("the written config:\n%s", rep.Text())
	}
	data, _ := os.ReadFile(defaultConfigPath)
	if len(cfg.Agents) != 2 || !strings.Contains(string(data), "display_type: textual_terminal") {
		t.Errorf("written config:\n%s", data)
	}
	if strings.Contains(string(data), "sk-test") || !strings.Contains(string(data), "OPENAI_API_KEY, GEMINI_API_KEY") {
		t.Errorf("the file must name the variables, never their values:\n%s", data)
	}

	// Not again without --force; --force overwrites.
	code, _, stderr = execute(t, t.Context(), "--init", "--config-agents", "4")
	if code != ExitConfig || !strings.Contains(stderr, "already exists: pass --force") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, out, stderr = execute(t, t.Context(), "--quickstart", "--headless", "--force", "--config-agents", "4")
	if code != 0 || !strings.Contains(out, "4 agents: openai_1 (openai gpt-5.4), gemini_1 (gemini gemini-3-flash-preview), openai_2 (openai gpt-5.4), gemini_2") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	// The run finds it.
	if got := defaultConfig(); got != defaultConfigPath {
		t.Errorf("defaultConfig() = %q", got)
	}
}

func TestGenerateConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("src", 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		code  int
		want  string // in stdout or stderr
		check func(t *testing.T, cfg *config.Config)
	}{
		{name: "backend and model", args: []string{"--generate-config", "a.yaml", "--config-backend", "claude", "--config-model", "claude-opus-4-1", "--config-agents", "2"},
			want: "wrote a.yaml: 2 agents: claude_1 (claude claude-opus-4-1), claude_2", check: func(t *testing.T, cfg *config.Config) {
				if cfg.Agents[1].Backend.Model != "claude-opus-4-1" {
					t.Errorf("agents %+v", cfg.Agents)
				}
			}},
		{name: "default model, agent id, context path", args: []string{"--generate-config", "b.yaml", "--config-backend", "gemini", "--config-agent-id", "solo", "--config-context-path", "src"},
			want: "solo (gemini gemini-3-flash-preview)", check: func(t *testing.T, cfg *config.Config) {
				if diff := cmp.Diff([]config.ContextPath{{Path: "src"}}, cfg.Orchestrator.ContextPaths); diff != "" {
					t.Errorf("context paths (-want +got):\n%s", diff)
				}
			}},
		{name: "quickstart agents", args: []string{"--quickstart", "--config", "c.yaml", "--quickstart-agent", "id=fast,backend=openai,model=gpt-5-mini,reasoning_effort=low", "--quickstart-agent", "backend=groq"},
			want: "wrote c.yaml: 2 agents: fast (openai gpt-5-mini), groq_1 (groq llama-3.3-70b-versatile)", check: func(t *testing.T, cfg *config.Config) {
				if got := cfg.Agents[0].Backend.Params["reasoning"]; !cmp.Equal(got, map[string]any{"effort": "low"}) {
					t.Errorf("reasoning %v", got)
				}
			}},
		{name: "no backend", args: []string{"--generate-config", "d.yaml"}, code: 1, want: "--generate-config needs --config-backend TYPE"},
		{name: "no keys, no terminal", args: []string{"--init", "--config", "e.yaml"}, code: 1, want: "no API key is set, so there is no team to write"},
		{name: "unknown backend", args: []string{"--generate-config", "f.yaml", "--config-backend", "nosuch"}, code: 1, want: "--config-backend nosuch: no such backend type"},
		{name: "no default model", args: []string{"--generate-config", "g.yaml", "--config-backend", "openrouter"}, code: 1, want: "has no default model: add --config-model MODEL"},
		{name: "specs and backend", args: []string{"--quickstart", "--quickstart-agent", "backend=openai", "--config-backend", "openai"}, code: 1, want: "--quickstart-agent cannot be combined"},
		{name: "bad spec", args: []string{"--quickstart", "--quickstart-agent", "backend=openai,colour=red"}, code: 1, want: `unknown field "colour"`},
		{name: "setup flag alone", args: []string{"--config-backend", "openai", "q?"}, code: 1, want: "--config-backend goes with --init"},
		{name: "docker", args: []string{"--generate-config", "h.yaml", "--config-backend", "openai", "--config-docker"}, code: 1, want: "--config-docker is not supported yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := execute(t, t.Context(), tc.args...)
			if code != tc.code || !strings.Contains(out+stderr, tc.want) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, stderr)
			}
			if tc.check == nil {
				return
			}
			file := tc.args[1]
			if tc.args[0] == "--quickstart" {
				file = tc.args[2] // --quickstart --config FILE
			}
			cfg, rep := config.Load(file)
			if !rep.OK() {
				t.Fatalf("%s:\n%s", file, rep.Text())
			}
			tc.check(t, cfg)
		})
	}
}

// On a terminal with no key set, --init asks for the backend, model and number of agents, and
// asks before overwriting.
func TestInit_AsksOnlyWhatItMust(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	ask := &asker{in: bufio.NewReader(strings.NewReader("vllm\nQwen/Qwen3-0.6B\n2\n")), out: &out}
	s := &setupOptions{init: true}
	team, _, err := s.team(ask)
	if err != nil {
		t.Fatal(err)
	}
	want := []member{{id: "vllm_1", backend: "vllm", model: "Qwen/Qwen3-0.6B"}, {id: "vllm_2", backend: "vllm", model: "Qwen/Qwen3-0.6B"}}
	if diff := cmp.Diff(want, team, cmp.AllowUnexported(member{})); diff != "" {
		t.Errorf("team (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "Backend type") || !strings.Contains(out.String(), "Number of agents [3]") {
		t.Errorf("questions:\n%s", out.String())
	}
	// Defaults: Enter takes them.
	ask = &asker{in: bufio.NewReader(strings.NewReader("\nllama3.2\n\n")), out: &out}
	if team, _, err = s.team(ask); err != nil || len(team) != 3 || team[0].backend != "ollama" {
		t.Errorf("defaults: %+v %v", team, err)
	}
	path := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for answer, want := range map[string]bool{"y\n": true, "yes\n": true, "\n": false, "no\n": false} {
		a := &asker{in: bufio.NewReader(strings.NewReader(answer)), out: &out}
		if got := a.yes("Overwrite?"); got != want {
			t.Errorf("answer %q: %v", answer, got)
		}
	}
}
