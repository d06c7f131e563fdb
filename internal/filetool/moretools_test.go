package filetool

import (
	"fmt"
	"massgen/internal/workspace"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateDirectory(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	out := mustOK(t, call(t, a, "create_directory", map[string]any{"path": "src/pkg/deep"}))
	if want := "Created directory " + filepath.Join(a.Dir(), "src", "pkg", "deep") + "."; out != want {
		t.Errorf("result = %q, want %q", out, want)
	}
	if info, err := os.Stat(filepath.Join(a.Dir(), "src", "pkg", "deep")); err != nil || !info.IsDir() {
		t.Fatal("directory not created")
	}
	if out := mustOK(t, call(t, a, "create_directory", map[string]any{"path": "src/pkg"})); !strings.Contains(out, "already exists as a directory") {
		t.Errorf("existing directory = %q", out)
	}
	mustOK(t, call(t, a, "create_directory", map[string]any{"path": filepath.Join(a.Dir(), "abs")}))
	writeFile(t, filepath.Join(a.Dir(), "file.txt"), "f")
	mustFail(t, call(t, a, "create_directory", map[string]any{"path": "file.txt"}), "already exists and is a file")
	mustFail(t, call(t, a, "create_directory", map[string]any{"path": "file.txt/sub"}), "not a directory")
	mustFail(t, call(t, a, "create_directory", map[string]any{}), "path is empty")
	// Created directories can be deleted, like everything the agent made.
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "src", "recursive": true}))
}

func TestMoveFile(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	ws := a.Dir()
	mustOK(t, call(t, a, "write_file", map[string]any{"path": "draft.md", "content": "draft"}))
	out := mustOK(t, call(t, a, "move_file", map[string]any{"source": "draft.md", "destination": "docs/final/report.md"}))
	if want := fmt.Sprintf("Moved %s to %s.", filepath.Join(ws, "draft.md"), filepath.Join(ws, "docs", "final", "report.md")); out != want {
		t.Errorf("result = %q, want %q", out, want)
	}
	if got := readFile(t, filepath.Join(ws, "docs", "final", "report.md")); got != "draft" {
		t.Errorf("moved file = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "draft.md")); !os.IsNotExist(err) {
		t.Error("source still exists")
	}
	// A file that later appears at the old path was not read.
	writeFile(t, filepath.Join(ws, "draft.md"), "someone else's")
	mustFail(t, call(t, a, "delete_file", map[string]any{"path": "draft.md"}), "was not read")

	mustFail(t, call(t, a, "move_file", map[string]any{"source": "docs/final/report.md", "destination": "docs/final/report.md"}), "the same path")
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "draft.md"}))
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "draft.md", "destination": "docs/final/report.md"}), "set overwrite to true")
	mustOK(t, call(t, a, "move_file", map[string]any{"source": "draft.md", "destination": "docs/final/report.md", "overwrite": true}))
	if got := readFile(t, filepath.Join(ws, "docs", "final", "report.md")); got != "someone else's" {
		t.Errorf("overwritten file = %q", got)
	}
	mustOK(t, call(t, a, "write_file", map[string]any{"path": "x.txt", "content": "x"}))
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "x.txt", "destination": "docs", "overwrite": true}), `existing directory and is never replaced by a move. To move into it, name the full new path (e.g. "docs/x.txt")`)
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "docs", "destination": "x.txt", "overwrite": true}), "a directory cannot replace a file")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "docs", "destination": "docs/final/inner"}), "cannot be moved into itself")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "x.txt", "destination": ""}), "destination is empty")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "nope.txt", "destination": "y.txt"}), "does not exist")

	// A directory moves whole; what is in it counts as created at its new place.
	out = mustOK(t, call(t, a, "move_file", map[string]any{"source": "docs", "destination": "archive/docs"}))
	if !strings.Contains(out, "Moved directory") || !strings.Contains(out, "(2 entries)") {
		t.Errorf("directory move result = %q", out)
	}
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "archive/docs/final/report.md"}))
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "archive", "recursive": true}))

	// A link is moved itself, never its target.
	mustOK(t, call(t, a, "write_file", map[string]any{"path": "target.txt", "content": "t"}))
	if err := os.Symlink("target.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, a, "move_file", map[string]any{"source": "link", "destination": "link2"}))
	if l, err := os.Readlink(filepath.Join(ws, "link2")); err != nil || l != "target.txt" {
		t.Errorf("moved link = %q, %v", l, err)
	}
	if got := readFile(t, filepath.Join(ws, "target.txt")); got != "t" {
		t.Errorf("link target = %q", got)
	}
}

func TestMoveFile_ReadBeforeDelete(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	ws := a.Dir()
	writeFile(t, filepath.Join(ws, "unread.txt"), "u")
	writeFile(t, filepath.Join(ws, "dir", "one.txt"), "1")
	writeFile(t, filepath.Join(ws, "dir", "two.txt"), "2")
	writeFile(t, filepath.Join(ws, "__pycache__", "m.pyc"), "c")

	mustFail(t, call(t, a, "move_file", map[string]any{"source": "unread.txt", "destination": "seen.txt"}), "was not read or created by you; read it first")
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "unread.txt"}))
	mustOK(t, call(t, a, "move_file", map[string]any{"source": "unread.txt", "destination": "seen.txt"}))

	mustOK(t, call(t, a, "read_file", map[string]any{"path": "dir/one.txt"}))
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "dir", "destination": "dir2"}), "not read or created: two.txt")
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "dir/two.txt"}))
	mustOK(t, call(t, a, "move_file", map[string]any{"source": "dir", "destination": "dir2"}))
	mustOK(t, call(t, a, "move_file", map[string]any{"source": "__pycache__", "destination": "cache"}))

	writeFile(t, filepath.Join(ws, "other.txt"), "o")
	a.SetReadBeforeDelete(false)
	mustOK(t, call(t, a, "move_file", map[string]any{"source": "other.txt", "destination": "other2.txt"}))
	if got := readFile(t, filepath.Join(ws, "other2.txt")); got != "o" {
		t.Errorf("moved = %q", got)
	}
	// .git never moves, read or not.
	writeFile(t, filepath.Join(ws, ".git", "HEAD"), "ref")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": ".git", "destination": "git"}), "never moved or deleted")
	writeFile(t, filepath.Join(ws, "repo", ".git", "HEAD"), "ref")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "repo", "destination": "repo2"}), "never moved or deleted")
}

// Between a workspace and a writable context path no rename is possible: the move copies and
// then removes the original, and refuses what it could not carry.
func TestMoveFile_AcrossRoots(t *testing.T) {
	f := newFixture(t)
	a := f.alice
	f.alice.GrantFinal()
	mustOK(t, call(t, a, "write_file", map[string]any{"path": "result.txt", "content": "result"}))
	out := mustOK(t, call(t, a, "move_file", map[string]any{"source": "result.txt", "destination": filepath.Join(f.rw, "out", "result.txt")}))
	if !strings.Contains(out, "copied, then the original removed") {
		t.Errorf("result = %q", out)
	}
	if got := readFile(t, filepath.Join(f.rw, "out", "result.txt")); got != "result" {
		t.Errorf("moved file = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(a.Dir(), "result.txt")); !os.IsNotExist(err) {
		t.Error("source still exists")
	}
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": filepath.Join(f.rw, "out", "result.txt")}))

	mustOK(t, call(t, a, "write_file", map[string]any{"path": "site/index.html", "content": "<p>"}))
	mustOK(t, call(t, a, "write_file", map[string]any{"path": "site/css/a.css", "content": "p{}"}))
	mustOK(t, call(t, a, "move_file", map[string]any{"source": "site", "destination": filepath.Join(f.rw, "site")}))
	if got := readFile(t, filepath.Join(f.rw, "site", "css", "a.css")); got != "p{}" {
		t.Errorf("moved tree file = %q", got)
	}
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": filepath.Join(f.rw, "site"), "recursive": true}))

	// A link leading out of the tree cannot be carried: nothing moves.
	mustOK(t, call(t, a, "write_file", map[string]any{"path": "pkg/a.txt", "content": "a"}))
	if err := os.Symlink(filepath.Join(f.outside, "secret.txt"), filepath.Join(a.Dir(), "pkg", "out")); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "pkg", "destination": filepath.Join(f.rw, "pkg")}), "cannot be moved to another directory tree; nothing was moved")
	if _, err := os.Lstat(filepath.Join(f.rw, "pkg")); !os.IsNotExist(err) {
		t.Error("partial copy left behind")
	}
	if got := readFile(t, filepath.Join(a.Dir(), "pkg", "a.txt")); got != "a" {
		t.Errorf("source changed: %q", got)
	}
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "link_file", "destination": filepath.Join(f.rw, "l")}), "cannot be moved to another directory tree")

	// And back from the context path, once read.
	mustOK(t, call(t, a, "read_file", map[string]any{"path": filepath.Join(f.rw, "file.txt")}))
	mustOK(t, call(t, a, "move_file", map[string]any{"source": filepath.Join(f.rw, "file.txt"), "destination": "file.txt"}))
	if got := readFile(t, filepath.Join(a.Dir(), "file.txt")); got != "rw file" {
		t.Errorf("moved back = %q", got)
	}
	// A directory holding a protected path is not moved.
	mustFail(t, call(t, a, "move_file", map[string]any{"source": filepath.Join(f.rw, "locked_dir"), "destination": "x"}), "protected")

	// Only the winner writes: another agent can neither create nor move into the context path.
	mustOK(t, call(t, f.bob, "write_file", map[string]any{"path": "bob.txt", "content": "b"}))
	mustFail(t, call(t, f.bob, "create_directory", map[string]any{"path": filepath.Join(f.rw, "bobdir")}), "only the agent presenting the final answer")
	mustFail(t, call(t, f.bob, "move_file", map[string]any{"source": "bob.txt", "destination": filepath.Join(f.rw, "bob.txt")}), "only the agent presenting the final answer")

	// A directory holding another context path is not moved.
	writeFile(t, filepath.Join(f.rw, "nested", "ro", "x.txt"), "x")
	if err := a.SetContextPaths([]workspace.ContextPath{{Path: f.rw, Write: true}, {Path: filepath.Join(f.rw, "nested", "ro")}}); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, a, "move_file", map[string]any{"source": filepath.Join(f.rw, "nested"), "destination": "nested"}),
		filepath.Join(f.rw, "nested", "ro")+", which you access separately")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": filepath.Join(f.rw, "nested", "ro"), "destination": "ro"}), "read-only context path")
	for _, p := range []string{filepath.Join(f.rw, "bobdir"), filepath.Join(f.rw, "bob.txt"), filepath.Join(a.Dir(), "nested")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created", p)
		}
	}
}

func TestReadMultipleFiles(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	ws := a.Dir()
	writeFile(t, filepath.Join(ws, "a.txt"), "alpha\n")
	writeFile(t, filepath.Join(ws, "sub", "b.txt"), "beta")
	writeFile(t, filepath.Join(ws, "pic.png"), "png")
	res := call(t, a, "read_multiple_files", map[string]any{"paths": []string{"a.txt", "missing.txt", "sub/b.txt", "pic.png", "/etc/passwd"}})
	got := mustOK(t, res)
	for _, want := range []string{
		"=== \"a.txt\" ===\nalpha\n\n=== \"missing.txt\" ===\nError: \"missing.txt\" does not exist",
		"=== \"sub/b.txt\" ===\nbeta\n",
		"=== \"pic.png\" ===\nError: \"pic.png\" is an image",
		"=== \"/etc/passwd\" ===\nError: \"/etc/passwd\" is outside what you can access",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	// Both read files count as read: they can be deleted.
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "a.txt"}))
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": "sub/b.txt"}))

	mustFail(t, call(t, a, "read_multiple_files", map[string]any{"paths": []string{"x", "y"}}), `=== "y" ===`)
	mustFail(t, call(t, a, "read_multiple_files", map[string]any{"paths": []string{}}), "paths is empty")
	mustFail(t, call(t, a, "read_multiple_files", map[string]any{"paths": make([]string, 21)}), "at most 20 per call")
	mustFail(t, call(t, a, "read_multiple_files", map[string]any{"paths": "a.txt"}), "invalid arguments")
}

func TestReadMultipleFiles_Cap(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	line := strings.Repeat("y", 99) + "\n"
	var paths []string
	for i := range 3 {
		name := fmt.Sprintf("big%d.txt", i)
		writeFile(t, filepath.Join(a.Dir(), name), strings.Repeat(line, 2000)) // 200 000 bytes
		paths = append(paths, name)
	}
	got := mustOK(t, call(t, a, "read_multiple_files", map[string]any{"paths": paths}))
	if n := len(got); n > maxReadManyBytes+300 {
		t.Errorf("result is %d bytes", n)
	}
	if !strings.Contains(got, "[truncated: the 512 KiB limit of read_multiple_files was reached after line 1242; continue with read_file and start_line=1243]") {
		t.Errorf("no truncation note: ...%s", got[len(got)-300:])
	}
	mustOK(t, call(t, a, "read_multiple_files", map[string]any{"paths": append(paths, "big0.txt")}))
	got = mustOK(t, call(t, a, "read_multiple_files", map[string]any{"paths": append(paths, "big0.txt")}))
	if !strings.HasSuffix(got, "=== \"big0.txt\" ===\n[not read: the 512 KiB limit of read_multiple_files was reached; read it with read_file]\n") {
		t.Errorf("fourth file: ...%s", got[len(got)-200:])
	}
}

// A writable context path holding the run or the logs never lets them move.
func TestMoveFile_HiddenTreesStay(t *testing.T) {
	f := newFixture(t)
	a := f.alice
	logs := filepath.Join(f.project, "logs")
	writeFile(t, filepath.Join(logs, "bob", "answer.txt"), "real id")
	if err := f.run.HidePath(logs); err != nil {
		t.Fatal(err)
	}
	if err := a.SetContextPaths([]workspace.ContextPath{{Path: f.base, Write: true}}); err != nil {
		t.Fatal(err)
	}
	a.GrantFinal()
	a.SetReadBeforeDelete(false)
	mustFail(t, call(t, a, "move_file", map[string]any{"source": f.project, "destination": filepath.Join(f.base, "moved")}), "holds massgen's private files")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": logs, "destination": filepath.Join(f.base, "moved")}), "private to massgen")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": filepath.Join(f.base, "workspaces"), "destination": filepath.Join(f.base, "moved")}), "private to massgen")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": filepath.Join(f.project, "readme.md"), "destination": filepath.Join(logs, "x.md")}), "private to massgen")
	if _, err := os.Lstat(filepath.Join(f.base, "moved")); !os.IsNotExist(err) {
		t.Error("something moved")
	}
	mustOK(t, call(t, a, "move_file", map[string]any{"source": filepath.Join(f.project, "readme.md"), "destination": filepath.Join(f.base, "readme.md")}))
}

// delete_file -recursive refuses, as move_file does, a tree holding a nested context path with
// its own rights or massgen's hidden run and log trees.
func TestDeleteFile_KeepsNestedGrantsAndHiddenTrees(t *testing.T) {
	f := newFixture(t)
	a := f.alice
	logs := filepath.Join(f.project, "logs")
	writeFile(t, filepath.Join(logs, "bob", "answer.txt"), "real id")
	writeFile(t, filepath.Join(f.rw, "nested", "ro", "x.txt"), "x")
	if err := f.run.HidePath(logs); err != nil {
		t.Fatal(err)
	}
	if err := a.SetContextPaths([]workspace.ContextPath{{Path: f.base, Write: true}, {Path: filepath.Join(f.rw, "nested", "ro")}}); err != nil {
		t.Fatal(err)
	}
	a.GrantFinal()
	a.SetReadBeforeDelete(false)
	mustFail(t, call(t, a, "delete_file", map[string]any{"path": filepath.Join(f.rw, "nested"), "recursive": true}),
		filepath.Join(f.rw, "nested", "ro")+", which you access separately; it cannot be deleted")
	mustFail(t, call(t, a, "delete_file", map[string]any{"path": f.project, "recursive": true}), "holds massgen's private files")
	for _, p := range []string{filepath.Join(f.rw, "nested", "ro", "x.txt"), filepath.Join(logs, "bob", "answer.txt")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was deleted: %v", p, err)
		}
	}
	mustOK(t, call(t, a, "delete_file", map[string]any{"path": filepath.Join(f.project, "readme.md")}))
}

// A link moved onto its own target with overwrite would leave a link to itself where the
// content was; a hard link onto its other name, nothing to move.
func TestMoveFile_SameFileRefused(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	ws := a.Dir()
	writeFile(t, filepath.Join(ws, "file.txt"), "content")
	if err := os.Symlink("file.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(ws, "file.txt"), filepath.Join(ws, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "file.txt"}))
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "hard.txt"}))
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "link", "destination": "file.txt", "overwrite": true}), "are the same file")
	mustFail(t, call(t, a, "move_file", map[string]any{"source": "hard.txt", "destination": "file.txt", "overwrite": true}), "are the same file")
	if got := readFile(t, filepath.Join(ws, "file.txt")); got != "content" {
		t.Errorf("file.txt = %q", got)
	}
}
