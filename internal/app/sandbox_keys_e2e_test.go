package app

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"massgen/internal/childproc"
	"massgen/internal/childproc/proctest"
	"massgen/internal/config"
	"massgen/internal/event"
)

// needBwrap skips a test where the srt sandbox cannot run for a reason outside massgen; CI
// installs bwrap, so there a missing one fails.
func needBwrap(t *testing.T) {
	t.Helper()
	proctest.NeedBwrap(t)
	if ok, why := childproc.Confinement(); !ok {
		t.Skip("no sandbox without user namespaces: " + why)
	}
}

// TestE2E_SandboxHidesKeyFiles: massgen run from a project outside home (a container's
// /work, a CI checkout) with read mode open. An srt command that cats and base64-encodes the
// .env massgen loads, the config it started with (holding a key: see TestKeyFiles for
// api_key), ~/.massgen/.env and secret files in the project gets none of them, while it reads
// the project's other files.
func TestE2E_SandboxHidesKeyFiles(t *testing.T) {
	needBwrap(t)
	base, err := os.MkdirTemp("/var/tmp", "massgen-e2e-keys-") // /tmp is the sandbox's own
	if err != nil {
		t.Skipf("no folder outside /tmp to test with: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	project, home := filepath.Join(base, "project"), filepath.Join(base, "home")
	secrets := map[string]string{
		filepath.Join(project, ".env"):           "OPENAI_API_KEY=sk-e2e-dotenv-1234",
		filepath.Join(project, ".netrc"):         "machine example.com password pw-e2e-5678",
		filepath.Join(home, ".massgen", ".env"):  "ANTHROPIC_API_KEY=sk-e2e-home-9012",
		filepath.Join(project, "secrets.toml"):   "token = \"tok-e2e-3456\"",
		filepath.Join(project, "readme.txt"):     "project readme shown",
		filepath.Join(project, "team.yaml"):      "", // the config, below
		filepath.Join(home, ".massgen", "trust"): "trust-e2e-7890",
	}
	var script strings.Builder
	for p := range secrets {
		fmt.Fprintf(&script, "cat %s; base64 -w0 %s; ", p, p)
	}
	secrets[filepath.Join(project, "team.yaml")] = fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted   # the key massgen knows is written here too: sk-e2e-config-4321
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: srt
      command_line_srt_read_mode: open
      tool_calls:
        - {name: execute_command, args: {command: %q}}
      answers: ["Done."]
      vote: agent1
orchestrator: {final_presentation: verbatim}
`, script.String()+"echo finished")
	for p, content := range secrets {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("OPENAI_API_KEY", "sk-e2e-config-4321") // so the config holds a key massgen knows
	t.Chdir(project)
	cfg, rep := config.Load("team.yaml")
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	res, err := Run(t.Context(), cfg, Options{Question: "Read everything.", Logging: true,
		LogRoot: filepath.Join(base, "logs"), WorkspaceRoot: filepath.Join(base, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok {
			out += r.Content
		}
	}
	t.Log(out)
	for _, want := range []string{"project readme shown", "finished"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the command's output lacks %q: the test reads nothing", want)
		}
	}
	for _, s := range []string{"sk-e2e-dotenv-1234", "pw-e2e-5678", "sk-e2e-home-9012", "tok-e2e-3456", "sk-e2e-config-4321", "trust-e2e-7890", "[redacted]"} {
		if strings.Contains(out, s) {
			t.Errorf("the command read %q", s)
		}
	}
	for p, content := range secrets {
		if filepath.Base(p) != "readme.txt" && strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(content))) {
			t.Errorf("the command read %s as base64", p)
		}
	}
}

// TestKeyFiles: the sandbox hides the .env files massgen loads and the config when the file
// itself holds a key, not when it names a variable.
func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"OPENAI_API_KEY": "sk-from-env-1234", "GH_TOKEN": "ghp-from-env-5678"}
	for _, c := range []struct {
		name, yaml string
		hidden     bool
	}{
		{"api_key", "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5-mini, api_key: sk-literal-5678}\n", true},
		{"a variable", "agents:\n  - id: a\n    backend:\n      type: openai\n      mcp_servers: [{name: gh, type: streamable-http, url: \"https://mcp.example/\", headers: {Authorization: \"Bearer ${GH_TOKEN}\"}}]\n", false},
		{"no key", "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5-mini}\n", false},
		{"a base_url password", "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5-mini, base_url: \"https://u:pw-9012@proxy.example/v1\"}\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".yaml")
			if err := os.WriteFile(path, []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, rep := config.Load(path)
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			got := keyFiles(cfg, func(k string) string { return env[k] })
			if !slices.Equal(got[:len(dotEnvFiles())], dotEnvFiles()) {
				t.Errorf("the .env files are not all hidden: %v", got)
			}
			if slices.Contains(got, path) != c.hidden {
				t.Errorf("the config is hidden: %v, want %v (%v)", !c.hidden, c.hidden, got)
			}
		})
	}
}
