package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// One agent is "1 agent"; an agent whose id is its label (the quick setup's agent1) is named
// once.
func TestOutput_OneAgent(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, "agents:\n  - id: agent1\n    backend: {type: scripted, answers: [\"Paris.\"]}\n")
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--no-display", "capital?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "massgen: 1 agent on: capital?") || !strings.Contains(out, "agent1: new answer agent1.1") || strings.Contains(out, "agent1 agent1") {
		t.Errorf("stdout:\n%s", out)
	}
	code, out, _ = execute(t, t.Context(), "--config", cfg, "--automation", "capital?")
	if code != 0 || !strings.HasPrefix(automationLines(out)["COMPLETED"], "1 agent, ") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// --strict-validation stops on warnings before anything runs; --skip-validation does not
// print them; neither lets an invalid config run.
func TestValidationFlags(t *testing.T) {
	t.Chdir(t.TempDir())
	warn := writeConfig(t, fastTeam+"display: {}\n")
	code, out, stderr := execute(t, t.Context(), "--config", warn, "--strict-validation", "q?")
	if code != ExitConfig || !strings.Contains(stderr, "error: ") || !strings.Contains(stderr, "--strict-validation: the config has 1 warning;") {
		t.Fatalf("--strict-validation: exit %d\n%s\n%s", code, out, stderr)
	}
	noLogs(t)
	code, out, stderr = execute(t, t.Context(), "--config", warn, "q?")
	if code != 0 || !strings.Contains(stderr, "warning: ") {
		t.Fatalf("plain run: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = execute(t, t.Context(), "--config", warn, "--skip-validation", "q?")
	if code != 0 || strings.Contains(stderr, "warning: ") {
		t.Fatalf("--skip-validation: exit %d\n%s\n%s", code, out, stderr)
	}
	bad := writeConfig(t, "agents:\n  - id: a\n    backend: {type: nosuch}\n")
	if code, _, stderr := execute(t, t.Context(), "--config", bad, "--skip-validation", "q?"); code != ExitConfig || !strings.Contains(stderr, "nosuch") {
		t.Errorf("--skip-validation ran an invalid config: exit %d: %s", code, stderr)
	}
}

// --show-schema prints config.Keys by section; --schema-backend keeps the backend keys one
// type takes; --json prints them as JSON.
func TestShowSchema(t *testing.T) {
	code, out, _ := execute(t, t.Context(), "--show-schema", "--schema-backend", "claude")
	if code != 0 || !strings.Contains(out, "enable_strict_tool_use") || !strings.Contains(out, "\ntimeout_settings:\n") {
		t.Fatalf("claude: exit %d\n%s", code, out)
	}
	code, out, _ = execute(t, t.Context(), "--show-schema", "--schema-backend", "openai")
	if code != 0 || strings.Contains(out, "enable_strict_tool_use") || !strings.Contains(out, "voting_sensitivity") {
		t.Fatalf("openai: exit %d\n%s", code, out)
	}
	code, out, _ = execute(t, t.Context(), "--show-schema", "--json")
	var keys []struct{ Section, Name, Status string }
	if err := json.Unmarshal([]byte(out), &keys); code != 0 || err != nil || len(keys) < 50 {
		t.Fatalf("--json: exit %d, %v, %d keys", code, err, len(keys))
	}
	if code, _, stderr := execute(t, t.Context(), "--show-schema", "--schema-backend", "nosuch"); code != ExitConfig || !strings.Contains(stderr, "no such backend type") {
		t.Errorf("unknown backend: exit %d: %s", code, stderr)
	}
}
