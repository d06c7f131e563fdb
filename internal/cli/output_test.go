package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// --output-file gets the final answer (the log folder keeps its copy); its folder is created,
// as MassGen does; a file that cannot be written stops the run before anything is spent.
func TestOutputFile(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--automation", "--output-file", "results/run1/answer.md", "capital?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	lines := automationLines(out)
	abs, _ := filepath.Abs("results/run1/answer.md")
	if lines["OUTPUT_FILE"] != abs {
		t.Errorf("OUTPUT_FILE = %q, want %q", lines["OUTPUT_FILE"], abs)
	}
	got, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := os.ReadFile(lines["ANSWER_FILE"])
	if err != nil || string(got) != string(kept) || len(got) == 0 {
		t.Errorf("output file %q, log copy %q (%v)", got, kept, err)
	}
}

func TestOutputFile_Unwritable(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cfg := writeConfig(t, fastTeam)
	if err := os.WriteFile("blocker", []byte("a file, not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("adir", 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want *regexp.Regexp
	}{
		{"blocker/answer.md", regexp.MustCompile(`^massgen: --output-file blocker/answer\.md: cannot create its folder .*blocker: not a directory\n$`)},
		{"adir", regexp.MustCompile(`--output-file adir is a folder: name a file in it`)},
	}
	for _, tc := range tests {
		code, out, stderr := execute(t, t.Context(), "--config", cfg, "--output-file", tc.path, "capital?")
		if code != ExitConfig || !tc.want.MatchString(stderr) {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s", tc.path, code, out, stderr)
		}
	}
	noLogs(t)
	// A run that fails leaves no answer file behind.
	failing := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [x], faults: [{kind: fatal}]}\n")
	code, _, _ := execute(t, t.Context(), "--config", failing, "--no-display", "--output-file", "none.md", "q?")
	if _, err := os.Stat("none.md"); code != ExitExecution || err == nil {
		t.Errorf("failed run: exit %d, output file left: %v", code, err == nil)
	}
}

// --stream-events puts every event on stdout as JSON lines, the automation lines on stderr.
func TestStreamEvents(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--stream-events", "capital?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	evs := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(evs[0], `{"seq":1,`) || !strings.Contains(evs[len(evs)-1], `"type":"session_ended"`) {
		t.Fatalf("stdout is not the event lines:\n%s", out)
	}
	for i, l := range evs {
		if !strings.HasPrefix(l, "{") || !strings.HasSuffix(l, "}") {
			t.Fatalf("line %d is not JSON: %s", i+1, l)
		}
	}
	logs := automationLines(stderr)
	if logs["LOG_DIR"] == "" || logs["WINNER"] == "" {
		t.Errorf("stderr lacks the automation lines:\n%s", stderr)
	}
	// The lines are the log's own.
	file, err := os.ReadFile(filepath.Join(logs["LOG_DIR"], "turn_1", "events.jsonl"))
	if err != nil || string(file) != out {
		t.Errorf("stdout differs from events.jsonl (%v)", err)
	}
}

// --debug writes massgen.log as always, and massgen_debug.log besides.
func TestDebug_WritesBothLogs(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--debug", "--automation", "capital?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	dir := filepath.Join(automationLines(out)["LOG_DIR"], "turn_1")
	for _, f := range []string{"massgen.log", "massgen_debug.log"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
