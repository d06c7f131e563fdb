package cli

import (
	"strings"
	"testing"
	"time"

	"massgen/internal/durable"
)

func TestTemporal_UsageErrors(t *testing.T) {
	cfg := writeConfig(t, fastTeam)
	broadcast := writeConfig(t, `
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris."]}
orchestrator: {coordination: {broadcast: human}}
`)
	secret := writeConfig(t, `
agents:
  - id: a
    backend:
      type: scripted
      answers: ["Paris."]
      mcp_servers: [{name: gh, command: gh-mcp, env: {GITHUB_TOKEN: ghp_literal}}]
`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"broadcast to a person refused by name", []string{"--config", broadcast, "--temporal", "127.0.0.1:1", "q"}, "orchestrator.coordination.broadcast: human: not supported on Temporal yet"},
		{"a literal MCP secret does not travel", []string{"--config", secret, "--temporal", "127.0.0.1:1", "q"}, "env GITHUB_TOKEN holds a secret, which is not sent to Temporal workers: write it as ${VAR}"},
		{"bad address", []string{"--config", cfg, "--temporal", "127.0.0.1:1", "q"}, "cannot reach the Temporal server at 127.0.0.1:1"},
		{"no port", []string{"--config", cfg, "--temporal", "localhost", "q"}, "HOST:PORT"},
		{"queue without server", []string{"--config", cfg, "--temporal-task-queue", "q2", "q"}, "need --temporal HOST:PORT"},
		{"store without server", []string{"--config", cfg, "--temporal-store", t.TempDir(), "q"}, "need --temporal HOST:PORT"},
		{"web", []string{"--config", cfg, "--temporal", "127.0.0.1:1", "--web", "q"}, "massgen serve --temporal"},
		{"worker without server", []string{"worker"}, "worker needs --temporal HOST:PORT"},
		{"worker bad address", []string{"worker", "--temporal", "127.0.0.1:1"}, "cannot reach the Temporal server"},
		{"build id without deployment", []string{"worker", "--temporal", "127.0.0.1:1", "--build-id", "v2"}, `--build-id "v2" needs --deployment NAME`},
		{"deployment with a dot", []string{"worker", "--temporal", "127.0.0.1:1", "--deployment", "massgen.prod"}, "a deployment name cannot contain . or :"},
		{"build id with a space", []string{"worker", "--temporal", "127.0.0.1:1", "--deployment", "massgen", "--build-id", "v 2"}, "without spaces"},
		{"versioned worker bad address", []string{"worker", "--temporal", "127.0.0.1:1", "--deployment", "massgen"}, "cannot reach the Temporal server"},
		{"promote without server", []string{"worker", "promote", "--deployment", "massgen"}, "promote needs --temporal HOST:PORT"},
		{"promote without deployment", []string{"worker", "promote", "--temporal", "127.0.0.1:1"}, "promote needs --deployment NAME"},
		{"promote bad deployment", []string{"worker", "promote", "--temporal", "127.0.0.1:1", "--deployment", "__massgen"}, "Temporal's own"},
		{"promote bad address", []string{"worker", "promote", "--temporal", "127.0.0.1:1", "--deployment", "massgen"}, "cannot reach the Temporal server"},
		{"serve bad address", []string{"serve", "--config", cfg, "--temporal", "127.0.0.1:1"}, "cannot reach the Temporal server"},
		{"eval with rate limits", []string{"eval", "data.jsonl", "--config", cfg, "--temporal", "127.0.0.1:1", "--rate-limit", "openai=10"}, "--concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, out, errOut := execute(t, t.Context(), tt.args...)
			if code != ExitConfig {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitConfig, out, errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q does not say %q", errOut, tt.want)
			}
			if d := time.Since(start); d > 8*time.Second {
				t.Errorf("took %s: a bad address must fail fast", d)
			}
		})
	}
}

// A worker left without --build-id is the version of its binary: the same on every start,
// massgen's version first, and one Temporal accepts.
func TestDefaultBuildID(t *testing.T) {
	a, err := workerVersion(durable.Version{Deployment: "massgen"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := workerVersion(durable.Version{Deployment: "massgen"})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two starts of one binary: %v and %v", a, b)
	}
	rest, ok := strings.CutPrefix(a.BuildID, version()+"-")
	if !ok || len(rest) != 12 || strings.Trim(rest, "0123456789abcdef") != "" {
		t.Errorf("build id %q, want %q and 12 hex digits of the binary's hash", a.BuildID, version()+"-")
	}
	if v, err := workerVersion(durable.Version{}); err != nil || !v.IsZero() {
		t.Errorf("no flags: %v, %v; want an unversioned worker", v, err)
	}
}
