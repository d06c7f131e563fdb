package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
)

// The cases follow MassGen's prompt_parser.py (v0.1.36): its docstring examples, its e-mail
// rule and its termination rule.
func TestParseAtRefs(t *testing.T) {
	tests := []struct {
		q    string
		want []atRef
	}{
		{"Review @src/main.py and update @src/config.py:w", []atRef{
			{Text: "@src/main.py", Path: "src/main.py"}, {Text: "@src/config.py:w", Path: "src/config.py", Write: true}}},
		{"Look at @docs/ please", []atRef{{Text: "@docs/", Path: "docs/"}}},
		{"Edit @docs/:w now", []atRef{{Text: "@docs/:w", Path: "docs/", Write: true}}},
		{`Read @"my notes/a b.txt" first`, []atRef{{Text: `@"my notes/a b.txt"`, Path: "my notes/a b.txt"}}},
		{`Fix @"a b.txt":w`, []atRef{{Text: `@"a b.txt":w`, Path: "a b.txt", Write: true}}},
		{"Summarise @README.md.", []atRef{{Text: "@README.md", Path: "README.md"}}},
		{"Compare (@a.go, @b.go)!", []atRef{{Text: "@a.go", Path: "a.go"}, {Text: "@b.go", Path: "b.go"}}},
		{"Is @x.txt:wrong?", []atRef{{Text: "@x.txt", Path: "x.txt"}}},
		{"Mail bob@example.com about a@b.com", nil},
		{`An escaped \@handle stays text`, nil},
		{"A lone @ or @@ is nothing", nil},
		{"score mAP@0.5:0.95", []atRef{{Text: "@0.5", Path: "0.5"}}},
		{"two@refs@here", []atRef{{Text: "@here", Path: "here"}}},
		{"@first word", []atRef{{Text: "@first", Path: "first"}}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, parseAtRefs(tc.q)); diff != "" {
			t.Errorf("parseAtRefs(%q) (-want +got):\n%s", tc.q, diff)
		}
	}
}

func TestResolveAtRefs(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	for _, f := range []string{filepath.Join(dir, "a.txt"), filepath.Join(home, "h.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := resolveAtRefs([]atRef{{Path: "a.txt"}, {Path: "docs/"}, {Path: "~/h.txt"}, {Path: "a.txt", Write: true}}, dir, home)
	if err != nil {
		t.Fatal(err)
	}
	want := []config.ContextPath{{Path: filepath.Join(dir, "a.txt"), Write: true}, {Path: filepath.Join(dir, "docs")}, {Path: filepath.Join(home, "h.txt")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = resolveAtRefs([]atRef{{Text: "@a.txt", Path: "a.txt"}, {Text: "@nope.py", Path: "nope.py"}, {Text: "@gone/:w", Path: "gone/", Write: true}}, dir, home)
	if err == nil || !strings.Contains(err.Error(), "@nope.py (") || !strings.Contains(err.Error(), "@gone/:w (") || strings.Contains(err.Error(), "@a.txt") {
		t.Errorf("error %v: want both missing references named, and only them", err)
	}
}

// readingTeam is a scripted team whose first agent reads path before answering.
func readingTeam(path string) string {
	return `
agents:
  - id: reader
    backend:
      type: scripted
      tool_calls: [{name: read_file, args: {path: "` + path + `"}}]
      answers: ["I read it."]
ui: {display_type: simple}
`
}

// An @path in the question is shared with the agents: the file tools read it; the question
// reaches them as written.
func TestAtRefs_ShareTheFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("notes.txt", []byte("the secret word is tangerine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, readingTeam(filepath.Join(dir, "notes.txt")))
	q := `Summarise @notes.txt, and mail bob@example.com \@later`
	code, out, stderr := execute(t, t.Context(), "--config", cfg, q)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	evs := turnEvents(t, out)
	if got, want := started(t, evs).Question, `Summarise @notes.txt, and mail bob@example.com @later`; got != want {
		t.Errorf("the agents got the question %q, want %q", got, want)
	}
	res := toolResults(evs, "read_file")
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Content, "tangerine") {
		t.Errorf("read_file results %+v: want the shared file's content", res)
	}
	if !strings.Contains(stderr, "context paths from the question: "+filepath.Join(dir, "notes.txt")+" (read-only)") {
		t.Errorf("stderr does not list the shared path:\n%s", stderr)
	}

	// Without the reference, or with --no-parse-at-references, the file stays out of reach.
	for _, args := range [][]string{{"Summarise notes.txt"}, {"--no-parse-at-references", q}} {
		code, out, stderr = execute(t, t.Context(), append([]string{"--config", cfg}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		res := toolResults(turnEvents(t, out), "read_file")
		if len(res) == 1 && strings.Contains(res[0].Content, "tangerine") {
			t.Errorf("%v: the file was readable without an @path reference", args)
		}
	}
}

func TestAtRefs_MissingFileStopsBeforeAnyCall(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "Fix @src/nope.go:w and @also-missing.md please")
	if code != ExitConfig || !regexp.MustCompile(`@src/nope\.go:w \(.*src/nope\.go does not exist\); @also-missing\.md \(`).MatchString(stderr) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	noLogs(t)
	// The same question with the parsing off runs.
	if code, out, stderr := execute(t, t.Context(), "--config", cfg, "--no-parse-at-references", "Fix @src/nope.go:w"); code != 0 {
		t.Fatalf("--no-parse-at-references: exit %d\n%s\n%s", code, out, stderr)
	}
}
