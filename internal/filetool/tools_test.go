package filetool

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTools_Names(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	var names []string
	for _, s := range toolsOf(a).Specs() {
		names = append(names, s.Name)
		if !strings.Contains(s.Description, a.Dir()) {
			t.Errorf("%s description does not name the workspace", s.Name)
		}
		if s.Parameters["type"] != "object" {
			t.Errorf("%s parameters are not an object schema", s.Name)
		}
	}
	want := []string{"read_file", "write_file", "edit_file", "list_directory", "search_files", "copy_file", "delete_file",
		"create_directory", "move_file", "read_multiple_files", "compare_files", "compare_directories"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	if d := toolsOf(a)[0].Spec.Description; !strings.Contains(d, r.SnapshotsDir()) {
		t.Errorf("read_file description does not name the snapshots: %s", d)
	}
}

func TestReadWriteFile(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	out := mustOK(t, call(t, a, "write_file", map[string]any{"path": "docs/deep/notes.md", "content": "l1\nl2\nl3\nl4\n"}))
	if !strings.Contains(out, filepath.Join(a.Dir(), "docs", "deep", "notes.md")) {
		t.Errorf("write result %q does not give the absolute path", out)
	}
	if got := mustOK(t, call(t, a, "read_file", map[string]any{"path": "docs/deep/notes.md"})); got != "l1\nl2\nl3\nl4\n" {
		t.Errorf("read = %q", got)
	}
	abs := filepath.Join(a.Dir(), "docs", "deep", "notes.md")
	if got := mustOK(t, call(t, a, "read_file", map[string]any{"path": abs, "start_line": 2, "max_lines": 2})); got != "l2\nl3\n\n[more lines follow; continue with start_line=4]" {
		t.Errorf("read lines 2-3 = %q", got)
	}
	if got := mustOK(t, call(t, a, "read_file", map[string]any{"path": abs, "start_line": 9})); !strings.Contains(got, "has only 4 lines") {
		t.Errorf("read past the end = %q", got)
	}
	mustOK(t, call(t, a, "write_file", map[string]any{"path": "empty.txt", "content": ""}))
	if got := mustOK(t, call(t, a, "read_file", map[string]any{"path": "empty.txt"})); got != "(empty file)" {
		t.Errorf("empty file = %q", got)
	}
	mustFail(t, call(t, a, "write_file", map[string]any{"path": "x.txt"}), "content is missing")
	mustFail(t, call(t, a, "read_file", map[string]any{"path": "docs"}), "is a directory")
	mustFail(t, call(t, a, "read_file", map[string]any{"path": "nope.txt"}), "does not exist")
}

func TestReadFile_CapAndBinary(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	line := strings.Repeat("x", 99) + "\n"
	writeFile(t, filepath.Join(a.Dir(), "big.txt"), strings.Repeat(line, 3000)) // 300 000 bytes
	got := mustOK(t, call(t, a, "read_file", map[string]any{"path": "big.txt"}))
	if !strings.Contains(got, "[truncated: the 256 KiB limit was reached in line 2622; continue with start_line=2622]") {
		t.Errorf("no truncation note: ...%s", got[len(got)-120:])
	}
	if n := len(got); n > maxRead+200 {
		t.Errorf("read returned %d bytes", n)
	}
	for _, name := range []string{"photo.PNG", "clip.mp4", "song.mp3", "bundle.tar.gz", "report.pdf", "sheet.xlsx"} {
		writeFile(t, filepath.Join(a.Dir(), name), "data")
		mustFail(t, call(t, a, "read_file", map[string]any{"path": name}), "reads text files only")
	}
	writeFile(t, filepath.Join(a.Dir(), "blob.txt"), "a\x00b")
	mustFail(t, call(t, a, "read_file", map[string]any{"path": "blob.txt"}), "binary")
}

func TestEditFile(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	p := filepath.Join(a.Dir(), "main.go")
	writeFile(t, p, "package main\n\nfunc a() {}\nfunc b() {}\nfunc b() {}\n")
	out := mustOK(t, call(t, a, "edit_file", map[string]any{"path": "main.go", "old_string": "func a() {}", "new_string": "func a() { return }"}))
	if !strings.Contains(out, "line 3") {
		t.Errorf("edit result = %q", out)
	}
	if got := readFile(t, p); !strings.Contains(got, "func a() { return }") {
		t.Errorf("file = %q", got)
	}
	mustFail(t, call(t, a, "edit_file", map[string]any{"path": "main.go", "old_string": "func b() {}", "new_string": "x"}), "occurs 2 times")
	mustFail(t, call(t, a, "edit_file", map[string]any{"path": "main.go", "old_string": "func c", "new_string": "x"}), "was not found")
	mustFail(t, call(t, a, "edit_file", map[string]any{"path": "main.go", "old_string": "", "new_string": "x"}), "old_string is empty")
}

func TestListDirectory(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	writeFile(t, filepath.Join(a.Dir(), "a.txt"), "abc")
	writeFile(t, filepath.Join(a.Dir(), "src", "b.go"), "package b")
	writeFile(t, filepath.Join(a.Dir(), "node_modules", "x", "y.js"), "")
	if err := os.Symlink("a.txt", filepath.Join(a.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	got := mustOK(t, call(t, a, "list_directory", map[string]any{}))
	want := a.Dir() + ":\na.txt (3 bytes)\nlink -> a.txt\nnode_modules/\nsrc/"
	if got != want {
		t.Errorf("list =\n%s\nwant\n%s", got, want)
	}
	got = mustOK(t, call(t, a, "list_directory", map[string]any{"path": ".", "recursive": true}))
	for _, w := range []string{"src/b.go (9 bytes)", "node_modules/ (not expanded)"} {
		if !strings.Contains(got, w) {
			t.Errorf("recursive list lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "y.js") {
		t.Error("recursive list walked into node_modules")
	}
	if got := mustOK(t, call(t, a, "list_directory", map[string]any{"path": "a.txt"})); !strings.Contains(got, "is a file of 3 bytes") {
		t.Errorf("list a file = %q", got)
	}
	for i := range maxList + 5 {
		writeFile(t, filepath.Join(a.Dir(), "many", fmt.Sprintf("f%04d", i)), "")
	}
	got = mustOK(t, call(t, a, "list_directory", map[string]any{"path": "many"}))
	if n := strings.Count(got, "\n"); n != maxList+1 || !strings.Contains(got, "listing stopped at 1000 entries") {
		t.Errorf("capped list has %d lines, ends %q", n, got[len(got)-80:])
	}
}

func TestSearchFiles(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	writeFile(t, filepath.Join(a.Dir(), "a.go"), "package a\n// TODO: fix\nfunc A() {}\n")
	writeFile(t, filepath.Join(a.Dir(), "sub", "b.go"), "package b\n// todo later\n")
	writeFile(t, filepath.Join(a.Dir(), "img.png"), "TODO")
	writeFile(t, filepath.Join(a.Dir(), "bin.dat2"), "TODO\x00")
	writeFile(t, filepath.Join(a.Dir(), ".git", "x"), "TODO")
	got := mustOK(t, call(t, a, "search_files", map[string]any{"pattern": "TODO"}))
	if want := "Matches under " + a.Dir() + ":\na.go:2: // TODO: fix\n[1 binary, unreadable or files over 4 MiB were not searched]"; got != want {
		t.Errorf("substring search =\n%s\nwant\n%s", got, want)
	}
	got = mustOK(t, call(t, a, "search_files", map[string]any{"pattern": "todo", "case_insensitive": true}))
	if !strings.Contains(got, "a.go:2:") || !strings.Contains(got, "sub/b.go:2: // todo later") {
		t.Errorf("case-insensitive search = %s", got)
	}
	got = mustOK(t, call(t, a, "search_files", map[string]any{"pattern": `^func \w+\(`, "regex": true, "path": "a.go"}))
	if !strings.Contains(got, "a.go:3: func A() {}") {
		t.Errorf("regex search in one file = %s", got)
	}
	got = mustOK(t, call(t, a, "search_files", map[string]any{"pattern": "package", "max_results": 1}))
	if !strings.Contains(got, "stopped at 1 matches") || strings.Count(got, "package") != 1 {
		t.Errorf("capped search = %s", got)
	}
	if got := mustOK(t, call(t, a, "search_files", map[string]any{"pattern": "absent"})); !strings.Contains(got, "No matches") {
		t.Errorf("no-match search = %s", got)
	}
	mustFail(t, call(t, a, "search_files", map[string]any{"pattern": "(", "regex": true}), "not a valid RE2")
}

func TestCopyFile_FromSnapshot(t *testing.T) {
	r, _ := newRun(t)
	alice := newAgent(t, r, "alice", "agent1")
	bob := newAgent(t, r, "bob", "agent2")
	writeFile(t, filepath.Join(bob.Dir(), "app", "main.py"), "print('hi')")
	writeFile(t, filepath.Join(bob.Dir(), "app", "lib", "util.py"), "x = 1")
	if err := bob.Snapshot(); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(r.SnapshotsDir(), "agent2", "app")
	out := mustOK(t, call(t, alice, "copy_file", map[string]any{"source": src, "destination": "from_agent2"}))
	if !strings.Contains(out, "2 files") {
		t.Errorf("copy result = %q", out)
	}
	if got := readFile(t, filepath.Join(alice.Dir(), "from_agent2", "lib", "util.py")); got != "x = 1" {
		t.Errorf("copied util.py = %q", got)
	}
	mustOK(t, call(t, alice, "copy_file", map[string]any{"source": filepath.Join(src, "main.py"), "destination": "new/dir/main.py"}))
	if got := readFile(t, filepath.Join(alice.Dir(), "new", "dir", "main.py")); got != "print('hi')" {
		t.Errorf("copied main.py = %q", got)
	}
	mustFail(t, call(t, alice, "copy_file", map[string]any{"source": filepath.Join(src, "main.py"), "destination": "new/dir/main.py"}), "already exists")
	mustOK(t, call(t, alice, "copy_file", map[string]any{"source": filepath.Join(src, "lib", "util.py"), "destination": "new/dir/main.py", "overwrite": true}))
	if got := readFile(t, filepath.Join(alice.Dir(), "new", "dir", "main.py")); got != "x = 1" {
		t.Errorf("overwritten main.py = %q", got)
	}
	mustFail(t, call(t, alice, "copy_file", map[string]any{"source": "new", "destination": "new/inside"}), "inside the source")
	mustFail(t, call(t, alice, "copy_file", map[string]any{"source": "new", "destination": ""}), "destination is empty")
	// Copies count as created: they can be deleted without reading.
	mustOK(t, call(t, alice, "delete_file", map[string]any{"path": "from_agent2", "recursive": true}))
}

func TestDeleteFile_ReadBeforeDelete(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	writeFile(t, filepath.Join(a.Dir(), "seen.txt"), "s")
	writeFile(t, filepath.Join(a.Dir(), "__pycache__", "m.cpython-312.pyc"), "c")
	writeFile(t, filepath.Join(a.Dir(), "dir", "one.txt"), "1")
	writeFile(t, filepath.Join(a.Dir(), "dir", "two.txt"), "2")
	if err := os.Mkdir(filepath.Join(a.Dir(), "empty"), 0o755); err != nil {
		t.Fatal(err)
	}

	mustFail(t, call(t, a, "delete_file", map[string]any{"path": "seen.txt"}), "was not read")
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "seen.txt"}))
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "seen.txt"}))

	mustOK(t, call(t, a, "write_file", map[string]any{"path": "made.txt", "content": "m"}))
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "made.txt"}))

	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "__pycache__", "recursive": true}))
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "empty"}))

	mustOK(t, call(t, a, "read_file", map[string]any{"path": "dir/one.txt"}))
	mustFail(t, call(t, a, "delete_file", map[string]any{"path": "dir", "recursive": true}), "two.txt")
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "dir/two.txt"}))
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "dir", "recursive": true}))

	// A link is removed itself, never its target.
	writeFile(t, filepath.Join(a.Dir(), "target.txt"), "t")
	if err := os.Symlink("target.txt", filepath.Join(a.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "link"}))
	if got := readFile(t, filepath.Join(a.Dir(), "target.txt")); got != "t" {
		t.Errorf("link target changed: %q", got)
	}

	a.SetReadBeforeDelete(false)
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "target.txt"}))
	entries, _ := os.ReadDir(a.Dir())
	if len(entries) != 0 {
		t.Errorf("workspace not empty: %v", entries)
	}
	mustFail(t, call(t, a, "delete_file", map[string]any{"path": "gone.txt"}), "does not exist")
	writeFile(t, filepath.Join(a.Dir(), ".git", "HEAD"), "ref")
	mustFail(t, call(t, a, "delete_file", map[string]any{"path": ".git", "recursive": true}), "never deleted")
}
