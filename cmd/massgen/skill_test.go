package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runLauncher runs skills/massgen/scripts/massgen-ask with POSIX sh in a new folder, with
// MASSGEN pointing at the binary under test.
func runLauncher(t *testing.T, args ...string) (code int, stdout, stderr, work string) {
	t.Helper()
	work = t.TempDir()
	cmd := exec.Command("sh", append([]string{absPath(t, "../../skills/massgen/scripts/massgen-ask")}, args...)...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "MASSGEN="+binary)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errb.String(), work
}

// launcherLines are the KEY: value lines the launcher prints, the first of each key.
func launcherLines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && k == strings.ToUpper(k) && m[k] == "" {
			m[k] = v
		}
	}
	return m
}

type runSummary struct {
	ExitCode   int     `json:"exit_code"`
	LogDir     *string `json:"log_dir"`
	OutputFile string  `json:"output_file"`
	Answered   bool    `json:"answered"`
}

func readSummary(t *testing.T, path string) runSummary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s runSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return s
}

// The skill's launcher asks the demo team: it prints where the log and the answer are and the
// answer itself, and writes run_summary.json; the prompt reaches the agents as written.
func TestSkillLauncher(t *testing.T) {
	// A prompt as coding agents write them: on several lines, with an @ that is no file.
	code, stdout, stderr, work := runLauncher(t, "--config", fastDemo(t), "--work-dir", "w",
		"What is the capital of France?\nIgnore @media rules.")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	l := launcherLines(stdout)
	logDir, result := l["LOG_DIR"], l["RESULT_FILE"]
	if !strings.HasPrefix(logDir, filepath.Join(work, ".massgen", "massgen_logs", "log_")) {
		t.Errorf("LOG_DIR %q is not the session's absolute log folder", logDir)
	}
	if result != filepath.Join(work, "w", "result.md") || l["EXIT_CODE"] != "0" {
		t.Errorf("RESULT_FILE %q, EXIT_CODE %q", result, l["EXIT_CODE"])
	}
	answer, err := os.ReadFile(result)
	if err != nil || !strings.Contains(string(answer), "Paris") {
		t.Fatalf("answer %q: %v", answer, err)
	}
	// Printed last, and ended by a newline so the shell's prompt starts on its own line.
	want := "--- final answer ---\n" + string(answer)
	if !strings.HasSuffix(want, "\n") {
		want += "\n"
	}
	if !strings.HasSuffix(stdout, want) {
		t.Errorf("the answer is not printed last, ending in a newline:\n%q", stdout)
	}
	sum := readSummary(t, filepath.Join(work, "w", "run_summary.json"))
	if sum.ExitCode != 0 || sum.LogDir == nil || *sum.LogDir != logDir || sum.OutputFile != result || !sum.Answered {
		t.Errorf("run_summary.json %+v", sum)
	}
	// --no-parse-at-references: "@media" is text, not a missing file.
	events, err := os.ReadFile(filepath.Join(logDir, "turn_1", "events.jsonl"))
	if err != nil || !strings.Contains(string(events), `Ignore @media rules.`) {
		t.Errorf("the question in the log: %v", err)
	}
}

// The launcher refuses an empty prompt itself, and reports massgen's own errors with its exit
// code and message.
func TestSkillLauncher_Errors(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"empty.md": " \n", "p.md": "Hello?"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr, _ := runLauncher(t, "--prompt-file", filepath.Join(dir, "empty.md"))
	if code != 1 || !strings.Contains(stderr, "the prompt is empty") {
		t.Errorf("empty prompt: exit %d, %q", code, stderr)
	}
	code, _, stderr, _ = runLauncher(t, "--cwd-context", "all", "q")
	if code != 1 || !strings.Contains(stderr, "--cwd-context all: use ro, rw or off") {
		t.Errorf("bad --cwd-context: exit %d, %q", code, stderr)
	}
	code, stdout, stderr, work := runLauncher(t, "--config", filepath.Join(dir, "nosuch.yaml"), "--work-dir", "w", "--prompt-file", filepath.Join(dir, "p.md"))
	if code != 1 || launcherLines(stdout)["EXIT_CODE"] != "1" || !strings.Contains(stderr, "config file not found") {
		t.Fatalf("missing config: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if sum := readSummary(t, filepath.Join(work, "w", "run_summary.json")); sum.ExitCode != 1 || sum.LogDir != nil || sum.Answered {
		t.Errorf("run_summary.json %+v", sum)
	}
}
