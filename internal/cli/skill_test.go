package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The MassGen skill's launcher (massgen/skills, scripts/massgen_run.sh) runs this line, greps
// the first LOG_DIR: line of the output and reads the answer from the output file. It works
// unchanged: the line is taken word for word.
func TestSkillLauncherLine(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	demo, err := os.ReadFile(repoFile(t, "examples/demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The demo without its pauses, which only pace it for people watching.
	demo = regexp.MustCompile(`(?m)^\s+(latency|chunk_delay): .*\n`).ReplaceAll(demo, nil)
	if err := os.WriteFile("config.yaml", demo, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "result.md")
	// The prompts the skill sends are written by models and hold stray @s (CSS @media, e-mail
	// addresses): --no-parse-at-references keeps them text.
	prompt := "What is the capital of France? (Ignore @media rules; mail ops@example.com.)"
	line := `massgen --automation --no-parse-at-references --cwd-context ro --output-file ` + out + ` --config config.yaml`
	args := append(strings.Fields(line)[1:], prompt)
	code, stdout, stderr := execute(t, t.Context(), args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	logDir, ok := strings.CutPrefix(first, "LOG_DIR: ")
	if !ok {
		t.Fatalf("the first line is %q, not LOG_DIR:", first)
	}
	// What `cut -d' ' -f2` takes.
	if f := strings.Fields(first); len(f) != 2 || f[1] != logDir {
		t.Fatalf("LOG_DIR line %q does not split into two fields", first)
	}
	if !filepath.IsAbs(logDir) {
		t.Errorf("LOG_DIR %q is not absolute", logDir)
	}
	if st, err := os.Stat(logDir); err != nil || !st.IsDir() {
		t.Fatalf("LOG_DIR %q: %v", logDir, err)
	}
	lines := automationLines(stdout)
	status := lines["STATUS"]
	if !strings.HasPrefix(status, logDir+string(filepath.Separator)) {
		t.Errorf("STATUS %q is not in LOG_DIR %q", status, logDir)
	}
	if _, err := os.Stat(status); err != nil {
		t.Errorf("status.json: %v", err)
	}
	answer, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := os.ReadFile(lines["ANSWER_FILE"])
	if err != nil || len(answer) == 0 || string(answer) != string(kept) || !strings.Contains(string(answer), "Paris") {
		t.Errorf("output file %q, answer file %q (%v)", answer, kept, err)
	}
	if lines["OUTPUT_FILE"] != out {
		t.Errorf("OUTPUT_FILE = %q", lines["OUTPUT_FILE"])
	}
}
