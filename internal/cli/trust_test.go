package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/trust"
)

// markerTeam is a team whose MCP server, were it started, would create the file %s: proof
// that a config ran a program.
const markerTeam = `
agents:
  - id: a
    backend:
      type: scripted
      answers: ["Paris."]
      mcp_servers:
        - {name: marker, command: sh, args: ["-c", "touch %s"]}
ui: {display_type: simple}
`

// plantProject makes the working folder a cloned repository whose .massgen/config.yaml would
// start a program, and returns the file that program creates.
func plantProject(t *testing.T) string {
	t.Helper()
	t.Chdir(t.TempDir())
	marker := filepath.Join(t.TempDir(), "ran")
	writeProjectConfig(t, fmt.Sprintf(markerTeam, marker))
	return marker
}

func writeProjectConfig(t *testing.T, body string) {
	t.Helper()
	if err := os.MkdirAll(".massgen", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(defaultConfigPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ran(marker string) bool { _, err := os.Stat(marker); return err == nil }

// A config massgen found in the working folder that would start a program is refused where
// nobody can accept it, saying how to trust it, and runs with --trust or when named.
func TestFoundConfig_RefusedUntilTrusted(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		runs    bool
		wantErr []string
	}{
		{"automation", []string{"--automation", "q"}, false,
			[]string{"the config .massgen/config.yaml in this folder was found, not named by you", "starts MCP server marker: sh -c touch",
				"pass --trust, or name it: --config .massgen/config.yaml"}},
		{"no terminal", []string{"--no-display", "q"}, false, []string{"pass --trust"}},
		{"--trust", []string{"--automation", "--trust", "q"}, true, nil},
		{"named with --config", []string{"--automation", "--config", ".massgen/config.yaml", "q"}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			marker := plantProject(t)
			code, out, errs := massgen(t, "", tc.args...)
			if ran(marker) != tc.runs {
				t.Fatalf("program ran: %v, want %v (exit %d)\n%s\n%s", ran(marker), tc.runs, code, out, errs)
			}
			if tc.runs {
				return
			}
			if code != ExitConfig {
				t.Errorf("exit %d, want %d", code, ExitConfig)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(out+errs, w) {
					t.Errorf("the refusal lacks %q:\n%s%s", w, out, errs)
				}
			}
			if _, err := os.Stat(filepath.Join(".massgen", "massgen_logs")); err == nil {
				t.Error("a refused run wrote a log folder")
			}
		})
	}
}

// serve and mcp serve the found config as "default" only once trusted; they have no terminal
// to ask at and no --trust, so they say to name it.
func TestFoundConfig_ServeAndMCPRefuse(t *testing.T) {
	for _, cmd := range [][]string{{"serve", "--addr", "127.0.0.1:0"}, {"mcp"}} {
		t.Run(cmd[0], func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			marker := plantProject(t)
			// Bounded: a server that wrongly starts would serve until cancelled.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := Execute(ctx, cmd, strings.NewReader(""), &stdout, &stderr)
			out, errs := stdout.String(), stderr.String()
			if code != ExitConfig || ran(marker) || !strings.Contains(errs, "read it, then name it: --config .massgen/config.yaml") ||
				strings.Contains(errs, "--trust") {
				t.Errorf("exit %d, ran %v\n%s\n%s", code, ran(marker), out, errs)
			}
		})
	}
}

// A person at the terminal accepts a found config once: it is remembered by path and content,
// asked again after an edit, and a refusal runs nothing.
func TestFoundConfig_AcceptedAtThePrompt(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	marker := plantProject(t)
	store := trust.Store{Path: filepath.Join(t.TempDir(), "trusted.json")}
	var asked []string
	answer := "y"
	o := runOptions{trust: trustOptions{offerFlag: true, store: &store, ask: func(q string) bool {
		asked = append(asked, q)
		return answer == "y"
	}}}
	load := func() error {
		_, _, err := loadConfig(o, &bytes.Buffer{})
		return err
	}
	if err := load(); err != nil || len(asked) != 1 {
		t.Fatalf("first run: %v, asked %d times", err, len(asked))
	}
	if !strings.Contains(asked[0], "starts MCP server marker: sh -c touch "+marker) || !strings.Contains(asked[0], "[y/N]") {
		t.Errorf("the question does not say what it would start:\n%s", asked[0])
	}
	if info, err := os.Stat(store.Path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("store: %v %v", info, err)
	}
	if err := load(); err != nil || len(asked) != 1 {
		t.Fatalf("second run: %v; asked again although unchanged (%d)", err, len(asked))
	}
	writeProjectConfig(t, fmt.Sprintf(markerTeam, marker+"2"))
	answer = "n"
	if err := load(); err == nil || len(asked) != 2 || !strings.Contains(err.Error(), "not trusted, nothing was run") {
		t.Fatalf("after an edit: %v, asked %d times", err, len(asked))
	}
}

// A config that starts nothing and reaches no other endpoint runs without asking.
func TestFoundConfig_HarmlessRunsWithoutAsking(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Chdir(t.TempDir())
	writeProjectConfig(t, fastTeam)
	if code, out, errs := massgen(t, "", "--automation", "q"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

// resume of a log folder that names a config starting a program (a planted or copied log)
// runs it only with --trust; a --trust in the log's recorded command line counts for nothing.
func TestResume_PlantedLogNeedsTrust(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Chdir(t.TempDir())
	marker := filepath.Join(t.TempDir(), "ran")
	evil := writeConfig(t, fmt.Sprintf(markerTeam, marker))
	dir := filepath.Join(".massgen", "massgen_logs", "log_20260101_120000_000001")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	crashTurn(t, dir, 1, nil)
	meta := fmt.Sprintf(`{"config_path": %q, "args": ["massgen", "--trust", "--config", %q, "q"]}`, evil, evil)
	if err := os.WriteFile(filepath.Join(dir, "turn_1", "metadata.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := massgen(t, "", "resume", "--automation", dir)
	if code != ExitConfig || ran(marker) || !strings.Contains(errs, "which the log folder") || !strings.Contains(errs, "pass --trust") {
		t.Fatalf("exit %d, ran %v\n%s\n%s", code, ran(marker), out, errs)
	}
	massgen(t, "", "resume", "--automation", "--trust", dir)
	if !ran(marker) {
		t.Error("resume --trust did not run the log's config")
	}
}

// commandTeam runs a shell command in its workspace.
const commandTeam = `
agents:
  - id: a
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      tool_calls:
        - {name: execute_command, args: {command: "echo ran-by-the-config"}}
      answers: ["Done."]
ui: {display_type: simple}
`

// commandRan reports whether the last turn of the run whose automation output is out ran
// commandTeam's command.
func commandRan(t *testing.T, out string) bool {
	t.Helper()
	dir := automationLines(out)["STATUS"]
	if dir == "" {
		return false
	}
	for _, r := range toolResults(loggedEvents(t, filepath.Dir(dir)), "execute_command") {
		if !r.IsError && strings.Contains(r.Content, "ran-by-the-config") {
			return true
		}
	}
	return false
}

// --continue takes the config its session's log names: a config the user named runs again
// while unchanged; one nobody here vouched for (a log copied from elsewhere: the store
// forgotten) is refused without --trust.
func TestContinue_LogConfigNeedsTrust(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, commandTeam)
	if code, out, errs := massgen(t, "", "--automation", "--config", cfg, "q1"); code != 0 || !commandRan(t, out) {
		t.Fatalf("turn 1: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := massgen(t, "", "--automation", "--continue", "q2"); code != 0 || !commandRan(t, out) {
		t.Fatalf("the config named before: exit %d\n%s\n%s", code, out, errs)
	}
	if err := os.Remove(trust.DefaultStore().Path); err != nil {
		t.Fatal(err)
	}
	code, out, errs := massgen(t, "", "--automation", "--continue", "q3")
	if code != ExitConfig || commandRan(t, out) || !strings.Contains(errs, "which the log of session") ||
		!strings.Contains(errs, "runs shell commands") || !strings.Contains(errs, "pass --trust, or name it: --config "+cfg) {
		t.Fatalf("a log's config nobody vouched for: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := massgen(t, "", "--automation", "--continue", "--trust", "q3"); code != 0 || !commandRan(t, out) {
		t.Fatalf("--trust: exit %d\n%s\n%s", code, out, errs)
	}
}
