package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A config file over the limit is refused before it is read: stat for a regular file, a
// bounded read for anything else. Before, a 100 MB file was read and parsed whole (3.8 s,
// 3 GB).
func TestLoad_SizeLimit(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 100 MiB on paper, nothing on disk; reading it whole is what must not happen.
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	cfg, rep := Load(huge)
	if cfg != nil || len(rep.Errors) != 1 ||
		!strings.Contains(rep.Errors[0].Message, "config file is 100.0 MiB, over the 1.0 MiB limit") {
		t.Errorf("Load(100 MiB file) = %v\n%s", cfg, rep.Text())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Load(100 MiB file) took %v: the file was read", d)
	}

	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan struct{})
	go func() { // 4 MiB, or less once the reader has had enough and closed its end
		defer close(done)
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		line := []byte(strings.Repeat("# padding\n", 100))
		for range (4 << 20) / len(line) {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}()
	cfg, rep = Load(fifo)
	<-done
	if cfg != nil || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "over the 1.0 MiB limit") {
		t.Errorf("Load(endless FIFO) = %v\n%s", cfg, rep.Text())
	}

	exact := filepath.Join(dir, "exact.yaml")
	body := okAgents + strings.Repeat("#", MaxFileSize-len(okAgents)-1) + "\n"
	if err := os.WriteFile(exact, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	mustLoad(t, exact) // the limit itself is allowed

	if _, rep := Parse("c.yaml", []byte(body+"#")); len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "over the 1.0 MiB limit") {
		t.Errorf("Parse(limit + 1 byte): %s", rep.Text())
	}
	if _, rep := Load(dir); len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "is a directory") {
		t.Errorf("Load(directory): %s", rep.Text())
	}
}

// What an issue echoes from the file is clipped and made printable: a key of megabytes
// (within the file size limit) was printed whole in the location and the message, and
// escape sequences in keys reached the terminal.
func TestParse_EchoClipped(t *testing.T) {
	k := strings.Repeat("k", 200_000)
	cases := []struct{ name, yaml string }{
		{"top-level key", okAgents + k + ": 1\n"},
		{"agent key", "agents:\n  - id: a\n    " + k + ": 1\n    backend: {type: scripted, answers: [hi]}\n"},
		{"backend key", "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], " + k + ": 1}\n"},
		{"nested param key", "agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o, extra: {" + k + ": .inf}}\n"},
		{"orchestrator key", okAgents + "orchestrator: {" + k + ": 1}\n"},
		{"ui key", okAgents + "ui: {" + k + ": 1}\n"},
		{"backend type", "agents:\n  - id: a\n    backend: {type: \"" + k + "\", answers: [hi]}\n"},
		{"duplicate id", "agents:\n  - id: \"" + k[:100] + "\"\n    backend: {type: scripted, answers: [hi]}\n  - id: \"" +
			k[:100] + "\"\n    backend: {type: scripted, answers: [hi]}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rep := Parse("c.yaml", []byte(tc.yaml))
			issues := append(append([]Issue{}, rep.Errors...), rep.Warnings...)
			if len(issues) == 0 {
				t.Fatal("no issue reported")
			}
			for _, is := range issues {
				if s := is.String(); len(s) > 1000 || strings.Contains(s, strings.Repeat("k", 100)) {
					t.Errorf("issue is %d bytes: %.300s", len(s), s)
				}
			}
			if txt := rep.Text(); !strings.Contains(txt, "…") {
				t.Errorf("nothing was clipped:\n%.300s", txt)
			}
		})
	}
	_, rep := Parse("c.yaml", []byte(okAgents+"\"\\e]0;owned\\a\\e[31mred\": 1\n"))
	if len(rep.Warnings) != 1 || strings.ContainsAny(rep.Warnings[0].String(), "\x1b\x07") ||
		rep.Warnings[0].Location != `\u001b]0;owned\u0007\u001b[31mred` {
		t.Errorf("escape sequence in a key: %q", rep.Text())
	}
}

// Agent ids name folders and are printed in terminals and logs: besides empty, "." and
// ".." and path separators, ids with invalid UTF-8, control characters (C0 and C1, where
// terminal escapes start), invisible formatting characters or an unbounded length are
// refused where they are written.
func TestParse_AgentIDs(t *testing.T) {
	agent := func(id string) string {
		return "agents:\n  - id: " + id + "\n    backend: {type: scripted, answers: [hi]}\n"
	}
	cases := []struct {
		name, id string
		want     []string // nil: accepted
	}{
		{"plain", "writer-2_b", nil},
		{"unicode letters", "rédacteur", nil},
		{"empty", `""`, []string{"E 2:9 agents[0].id | id must not be empty"}},
		{"dot", `"."`, []string{"E 2:9 agents[0].id | cannot be used as a directory name"}},
		{"dot dot", `".."`, []string{"E 2:9 agents[0].id | cannot be used as a directory name"}},
		{"slash", "a/b", []string{"E 2:9 agents[0].id | it holds a path separator"}},
		{"backslash", `'a\b'`, []string{"E 2:9 agents[0].id | it holds a path separator"}},
		{"invalid UTF-8", "ab\xff\xfe", []string{"E 2:11 | the file is not valid UTF-8 (byte 0xff) | save it as UTF-8"}},
		{"escape", `"a\e[2J"`, []string{"E 2:9 agents[0].id | id `a\\u001b[2J` holds a control or invisible formatting character"}},
		{"C1 CSI", "\"a\\x9b2J\"", []string{`E 2:9 agents[0].id | holds a control or invisible formatting character`}},
		{"newline", `"a\nb"`, []string{`E 2:9 agents[0].id | holds a control`}},
		{"bidi override", "\"evil\u202etxt.exe\"", []string{"E 2:9 agents[0].id | id `evil\\u202etxt.exe` holds a control or invisible"}},
		{"zero width space", "\"a\u200bb\"", []string{`E 2:9 agents[0].id | holds a control or invisible`}},
		{"long", strings.Repeat("a", 129), []string{"E 2:9 agents[0].id | id is 129 bytes long, over the 128-byte limit"}},
		{"limit", strings.Repeat("a", 128), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := Parse("c.yaml", []byte(agent(tc.id)))
			checkIssues(t, rep, tc.want)
			if tc.want == nil && (cfg == nil || cfg.Agents[0].ID == "") {
				t.Errorf("id %q refused: %s", tc.id, rep.Text())
			}
			for _, is := range rep.Errors {
				if s := is.String(); strings.ContainsFunc(s, unsafeRune) {
					t.Errorf("issue echoes an unsafe character: %q", s)
				}
			}
		})
	}
}
