package filetool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/tool"
	"massgen/internal/workspace"
)

func TestCompareFiles(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	ws := a.Dir()
	abs := func(name string) string { return filepath.Join(ws, name) }
	writeFile(t, abs("a.py"), "import os\n\ndef f():\n    return 1\n")
	writeFile(t, abs("b.py"), "import os\n\ndef f():\n    return 2\n")
	writeFile(t, abs("same.py"), "import os\n\ndef f():\n    return 1\n")
	cmp := func(p1, p2 string) tool.Result {
		t.Helper()
		return call(t, a, "compare_files", map[string]any{"path1": p1, "path2": p2})
	}
	if got, want := mustOK(t, cmp("a.py", "same.py")), fmt.Sprintf("%s and %s are identical (33 bytes).", abs("a.py"), abs("same.py")); got != want {
		t.Errorf("identical = %q, want %q", got, want)
	}
	want := fmt.Sprintf("%[1]s and %[2]s differ: 1 line removed, 1 added.\n--- %[1]s\n+++ %[2]s\n@@ -1,4 +1,4 @@\n import os\n \n def f():\n-    return 1\n+    return 2\n",
		abs("a.py"), abs("b.py"))
	if got := mustOK(t, cmp("a.py", "b.py")); got != want {
		t.Errorf("diff =\n%s\nwant\n%s", got, want)
	}
	// Comparing is not reading: the files still cannot be deleted unread.
	mustFail(t, call(t, a, "delete_file", map[string]any{"path": "a.py"}), "was not read")

	writeFile(t, abs("one.dat"), "a\x00b")
	writeFile(t, abs("two.dat"), "a\x00bc")
	got := mustOK(t, cmp("one.dat", "two.dat"))
	for _, w := range []string{"differ (binary content, so only their sizes and SHA-256 are compared)",
		abs("one.dat") + ": 3 bytes, sha256 ", abs("two.dat") + ": 4 bytes, sha256 "} {
		if !strings.Contains(got, w) {
			t.Errorf("binary compare lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "\x00") {
		t.Error("binary content shown")
	}
	writeFile(t, abs("logo.png"), "not really")
	mustOK(t, cmp("logo.png", "a.py")) // by extension
	if got := mustOK(t, cmp("logo.png", "logo.png")); !strings.Contains(got, "are identical") {
		t.Errorf("same binary = %q", got)
	}

	big := strings.Repeat("z", maxDiffInput)
	writeFile(t, abs("big1.txt"), big+"1")
	writeFile(t, abs("big2.txt"), big+"2")
	if got := mustOK(t, cmp("big1.txt", "big2.txt")); !strings.Contains(got, "larger than 4 MiB, too large for a line diff") {
		t.Errorf("big compare = %.200s", got)
	}
	var many1, many2 strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&many1, "old line %d\n", i)
		fmt.Fprintf(&many2, "new line %d\n", i)
	}
	writeFile(t, abs("many1.txt"), many1.String())
	writeFile(t, abs("many2.txt"), many2.String())
	got = mustOK(t, cmp("many1.txt", "many2.txt"))
	if len(got) > maxDiffOutput+500 || !strings.Contains(got, "differ: 4000 lines removed, 4000 added.") ||
		!strings.Contains(got, "[diff truncated at the output limit; compare smaller files") || !strings.Contains(got, "shown as one replaced block") {
		t.Errorf("long diff (%d bytes) ends %q", len(got), got[len(got)-300:])
	}

	mustFail(t, cmp("a.py", "nope.py"), `"nope.py" does not exist`)
	if err := os.Mkdir(abs("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustFail(t, cmp("dir", "a.py"), "is a directory; compare_files compares two files (use compare_directories")
}

// compareTree fills a directory from a map; content "->x" makes a symbolic link to x, and a
// name ending in / a directory.
func compareTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch {
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(content, "->"):
			if err := os.Symlink(content[2:], p); err != nil {
				t.Fatal(err)
			}
		default:
			writeFile(t, p, content)
		}
	}
}

func TestCompareDirectories(t *testing.T) {
	r, _ := newRun(t)
	alice := newAgent(t, r, "alice", "agent1")
	bob := newAgent(t, r, "bob", "agent2")
	compareTree(t, bob.Dir(), map[string]string{
		"same.txt": "same", "changed.txt": "v1\n", "grown.txt": "a\n", "only_bob.txt": "bob's",
		"bob_dir/x.txt": "x", "bob_dir/y/z.txt": "z", "kind": "a file", "node_modules/p/i.js": "1", "ln": "->same.txt",
	})
	compareTree(t, alice.Dir(), map[string]string{
		"same.txt": "same", "changed.txt": "v2\n", "grown.txt": "a\nb\n", "only_alice.txt": "alice's",
		"kind/inner.txt": "in a dir", "node_modules/p/i.js": "2", "ln": "->changed.txt",
	})
	if err := bob.Snapshot(); err != nil {
		t.Fatal(err)
	}
	snap := bob.SnapshotDir()
	want := "Comparing 1 = " + snap + " with 2 = " + alice.Dir() + `:
Only in 1 (2):
  bob_dir/
  only_bob.txt (5 bytes)
Only in 2 (1):
  only_alice.txt (7 bytes)
Differing (4):
  changed.txt (same size, different content)
  grown.txt (2 bytes in 1, 4 bytes in 2)
  kind (file in 1, directory in 2)
  ln (links to "same.txt" in 1, "changed.txt" in 2)
Not compared (1):
  node_modules/ (not descended into)
1 file identical.`
	if got := mustOK(t, call(t, alice, "compare_directories", map[string]any{"path1": snap, "path2": "."})); got != want {
		t.Errorf("compare =\n%s\nwant\n%s", got, want)
	}
	got := mustOK(t, call(t, alice, "compare_directories", map[string]any{"path1": snap, "path2": ".", "show_content_diff": true}))
	diffs := fmt.Sprintf("Content differences:\n--- %[1]s/changed.txt\n+++ %[2]s/changed.txt\n@@ -1 +1 @@\n-v1\n+v2\n--- %[1]s/grown.txt\n+++ %[2]s/grown.txt\n@@ -1 +1,2 @@\n a\n+b",
		snap, alice.Dir())
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, diffs) {
		t.Errorf("compare with diffs =\n%s\nwant the above followed by\n%s", got, diffs)
	}
	if got := mustOK(t, call(t, alice, "compare_directories", map[string]any{"path1": ".", "path2": alice.Dir()})); !strings.Contains(got, "No differences: 6 files identical.\nNot compared (1):") {
		t.Errorf("self compare = %s", got)
	}
	mustFail(t, call(t, alice, "compare_directories", map[string]any{"path1": "same.txt", "path2": "."}), "is a file; compare_directories compares two directories (use compare_files")
	mustFail(t, call(t, alice, "compare_directories", map[string]any{"path1": "nope", "path2": "."}), "does not exist")
	// Comparing is not reading.
	mustFail(t, call(t, alice, "delete_file", map[string]any{"path": "same.txt"}), "was not read")
}

func TestCompareDirectories_Caps(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	for i := range 40 {
		writeFile(t, filepath.Join(a.Dir(), "one", fmt.Sprintf("file-%02d.txt", i)), "same")
		writeFile(t, filepath.Join(a.Dir(), "two", fmt.Sprintf("file-%02d.txt", i)), "same")
		writeFile(t, filepath.Join(a.Dir(), "one", fmt.Sprintf("only-%02d.txt", i)), "1")
	}
	with := func(lim compareLimits, args map[string]any) string {
		t.Helper()
		tl := tool.Tool{Run: func(ctx context.Context, s string) tool.Result { return (&files{ws: a}).compareDirs(ctx, s, lim) }}
		return mustOK(t, run(t, tl, args))
	}
	args := map[string]any{"path1": "one", "path2": "two"}
	got := with(compareLimits{entries: 10, bytes: 1 << 20, output: 1 << 20}, args)
	if !strings.Contains(got, "[stopped after 10 entries in 1: the comparison is partial") || !strings.Contains(got, "[stopped after 10 entries in 2") {
		t.Errorf("entry cap: %s", got)
	}
	got = with(compareLimits{entries: 1000, bytes: 1 << 20, output: 1 << 10}, args)
	if len(got) > 1<<10+200 || !strings.Contains(got, "[output limit of 1 KiB reached: ") || !strings.Contains(got, "more entries or diffs not shown") {
		t.Errorf("output cap (%d bytes): %s", len(got), got)
	}
	got = with(compareLimits{entries: 1000, bytes: 20, output: 1 << 20}, args)
	if !strings.Contains(got, "Not compared (38):\n  file-02.txt (not read: the 20 bytes reading limit was reached)") || !strings.Contains(got, "2 files identical.") {
		t.Errorf("byte cap: %s", got)
	}
	// Diffs stop at the output limit too.
	for i := range 10 {
		writeFile(t, filepath.Join(a.Dir(), "d1", fmt.Sprintf("f%d.txt", i)), strings.Repeat("old\n", 50))
		writeFile(t, filepath.Join(a.Dir(), "d2", fmt.Sprintf("f%d.txt", i)), strings.Repeat("new\n", 50))
	}
	got = with(compareLimits{entries: 1000, bytes: 1 << 20, output: 2 << 10}, map[string]any{"path1": "d1", "path2": "d2", "show_content_diff": true})
	if len(got) > 2<<10+200 || !strings.Contains(got, "Content differences:\n--- ") || !strings.Contains(got, "[output limit of 2 KiB reached") {
		t.Errorf("diff cap (%d bytes): %s", len(got), got)
	}
}

// A context path holding the run shows none of it, not even names.
func TestCompareDirectories_HidesRun(t *testing.T) {
	f := newFixture(t)
	if err := f.alice.SetContextPaths([]workspace.ContextPath{{Path: f.base}}); err != nil {
		t.Fatal(err)
	}
	got := mustOK(t, call(t, f.alice, "compare_directories", map[string]any{"path1": f.base, "path2": f.project}))
	if strings.Contains(got, "workspaces") || strings.Contains(got, "notes.md") {
		t.Errorf("run visible:\n%s", got)
	}
	if !strings.Contains(got, "outside/") || !strings.Contains(got, "readme.md") {
		t.Errorf("compare = %s", got)
	}
}
