package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A config over the size limit is refused at once by every command that reads one, exit 1,
// with its size and the limit. Before, a 100 MB file was read and parsed whole.
func TestConfigSizeLimit_EveryEntryPoint(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil { // sparse: nothing to write
		t.Fatal(err)
	}
	f.Close()
	want := regexp.MustCompile(`config file is 100\.0 MiB, over the 1\.0 MiB limit`)
	for _, args := range [][]string{
		{"--config", huge, "question"},
		{"--validate", huge},
		{"--validate", huge, "--json"},
		{"serve", "--config", huge, "--addr", "127.0.0.1:0"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, out, stderr := execute(t, t.Context(), args...)
			if code != ExitConfig || !want.MatchString(out+stderr) {
				t.Errorf("exit %d\nstdout: %.500s\nstderr: %.500s", code, out, stderr)
			}
		})
	}
}

// replay of a session whose process died prints what the log holds, then says the session
// did not finish, and exits 0. Before, the cut last line was dropped without a word and the
// replay looked like a session that had simply stopped.
func TestReplay_CrashedSession(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [\"Paris.\"]}\nui: {display_type: simple}\n")
	code, live, stderr := execute(t, t.Context(), "--config", cfg, "capital?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	logs := regexp.MustCompile(`logs: (\S+)`).FindStringSubmatch(live)
	if logs == nil {
		t.Fatalf("no logs line:\n%s", live)
	}
	turns, err := filepath.Glob(filepath.Join(logs[1], "events.jsonl"))
	if more, _ := filepath.Glob(filepath.Join(logs[1], "turn_*", "events.jsonl")); err == nil {
		turns = append(turns, more...)
	}
	if err != nil || len(turns) != 1 {
		t.Fatalf("events.jsonl: %v %v", turns, err)
	}
	b, err := os.ReadFile(turns[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 4 || !strings.Contains(lines[len(lines)-1], `"session_ended"`) {
		t.Fatalf("unexpected log:\n%s", b)
	}
	// The process died while writing the second-to-last event: half of it, no end.
	cut := strings.Join(lines[:len(lines)-2], "") + lines[len(lines)-2][:len(lines[len(lines)-2])/2]
	if err := os.WriteFile(turns[0], []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := execute(t, t.Context(), "replay", logs[1])
	if code != 0 {
		t.Fatalf("replay exit %d: %s\n%s", code, stderr, out)
	}
	notice := regexp.MustCompile(`(?m)^warning: session did not finish: the log ends after \w+ \(event \d+\) at \S+; ` +
		`its last line \(line \d+\) was cut off mid-event and was skipped; the process may have crashed\n\z`)
	if !notice.MatchString(out) || !strings.Contains(out, "capital?") || strings.Contains(out, "session completed") {
		t.Errorf("replay output:\n%s", out)
	}
}
