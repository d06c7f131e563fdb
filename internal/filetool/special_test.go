package filetool

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// promptly runs the tool call and fails the test when it does not return within a few
// seconds: an open of a named pipe for writing blocks until a reader comes. unblock, when set,
// is called on a timeout to release the call, so the suite goes on.
func promptly(t *testing.T, a *workspace.Agent, name string, args map[string]any, unblock func()) tool.Result {
	t.Helper()
	tl, ok := toolsOf(a).Find(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	body := mustJSON(t, args)
	done := make(chan tool.Result, 1)
	go func() { done <- tl.Run(t.Context(), body) }()
	select {
	case r := <-done:
		return r
	case <-time.After(5 * time.Second):
		if unblock != nil {
			unblock()
		}
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("%s %s did not return within 5 s: it blocked on a special file", name, body)
		return tool.Result{}
	}
}

// drainFIFO opens the named pipe at p for reading and empties it, which releases a writer
// blocked in open.
func drainFIFO(p string) func() {
	return func() {
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
		buf := make([]byte, 64<<10)
		_, _ = f.Read(buf)
		_ = f.Close()
	}
}

// specialFixture is an agent whose workspace holds a named pipe, a Unix socket, a regular
// file ok.txt already read, and two trees src/ and dst/ where dst/a.txt is a pipe.
func specialFixture(t *testing.T) (*workspace.Agent, map[string]string) {
	t.Helper()
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	ws := a.Dir()
	paths := map[string]string{"pipe": filepath.Join(ws, "pipe"), "sock": filepath.Join(ws, "sock")}
	if err := syscall.Mkfifo(paths["pipe"], 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	// A socket path is limited to about 100 bytes: bind it in a short folder, then move it.
	short, err := os.MkdirTemp("", "s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(short) })
	l, err := net.Listen("unix", filepath.Join(short, "s"))
	if err != nil {
		t.Skip("unix socket:", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if err := os.Rename(filepath.Join(short, "s"), paths["sock"]); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "ok.txt"), "a regular file")
	writeFile(t, filepath.Join(ws, "src", "a.txt"), "tree file")
	if err := os.Mkdir(filepath.Join(ws, "dst"), 0o755); err != nil {
		t.Fatal(err)
	}
	paths["dst/a.txt"] = filepath.Join(ws, "dst", "a.txt")
	if err := syscall.Mkfifo(paths["dst/a.txt"], 0o644); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "ok.txt"}))
	return a, paths
}

// TestSpecialFiles_RefusedPromptly: a command can mkfifo a name a file tool then opens; every
// file tool must refuse a pipe or a socket, as source or as destination, at once and with a
// message naming what it is, instead of blocking the run.
func TestSpecialFiles_RefusedPromptly(t *testing.T) {
	type args = map[string]any
	for _, kind := range []struct{ name, want string }{
		{"pipe", "is a named pipe (FIFO), not a regular file"},
		{"sock", "is a Unix socket, not a regular file"},
	} {
		p := kind.name
		cases := []struct {
			tool string
			args args
		}{
			{"read_file", args{"path": p}},
			{"read_multiple_files", args{"paths": []string{p}}},
			{"write_file", args{"path": p, "content": "x"}},
			{"edit_file", args{"path": p, "old_string": "a", "new_string": "b"}},
			{"copy_file", args{"source": p, "destination": "copy"}},
			{"copy_file", args{"source": "ok.txt", "destination": p, "overwrite": true}},
			{"move_file", args{"source": p, "destination": "moved"}},
			{"move_file", args{"source": "ok.txt", "destination": p, "overwrite": true}},
			{"compare_files", args{"path1": p, "path2": "ok.txt"}},
			{"compare_files", args{"path1": "ok.txt", "path2": p}},
			{"compare_directories", args{"path1": p, "path2": "."}},
			{"search_files", args{"pattern": "x", "path": p}},
			{"list_directory", args{"path": p}},
		}
		for _, c := range cases {
			t.Run(kind.name+"/"+c.tool, func(t *testing.T) {
				a, paths := specialFixture(t)
				res := promptly(t, a, c.tool, c.args, drainFIFO(paths["pipe"]))
				t.Log(res.Content)
				mustFail(t, res, kind.want)
				if !strings.Contains(res.Content, "regular files only") {
					t.Errorf("the message does not say what file tools work on: %s", res.Content)
				}
				for _, q := range []string{"copy", "moved"} {
					if _, err := os.Lstat(filepath.Join(a.Dir(), q)); !os.IsNotExist(err) {
						t.Errorf("%s was created", q)
					}
				}
				if got := readFile(t, filepath.Join(a.Dir(), "ok.txt")); got != "a regular file" {
					t.Errorf("ok.txt = %q", got)
				}
				if info, err := os.Lstat(paths[kind.name]); err != nil || info.Mode().IsRegular() {
					t.Errorf("the special file was replaced: %v %v", info, err)
				}
			})
		}
	}
}

// A directory copied onto a tree where a file's name is a pipe stops there, at once, naming
// the entry; a pipe inside a copied source tree is skipped; delete_file removes a pipe (it
// never opens it), so an agent can clean up what a command made.
func TestSpecialFiles_InsideTrees(t *testing.T) {
	a, paths := specialFixture(t)
	res := promptly(t, a, "copy_file", map[string]any{"source": "src", "destination": "dst", "overwrite": true}, drainFIFO(paths["dst/a.txt"]))
	mustFail(t, res, `stopped at "a.txt" inside "dst": it is a named pipe (FIFO)`)
	if info, err := os.Lstat(paths["dst/a.txt"]); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("dst/a.txt is no longer the pipe: %v %v", info, err)
	}
	out := mustOK(t, promptly(t, a, "copy_file", map[string]any{"source": "dst", "destination": "dst2"}, nil))
	if !strings.Contains(out, "skipped 1 links or special files") {
		t.Errorf("copy of a tree holding a pipe = %q", out)
	}
	for _, tc := range []struct{ tool, path string }{{"list_directory", "."}, {"search_files", "."}, {"compare_directories", "."}} {
		args := map[string]any{"path": tc.path, "recursive": true, "pattern": "tree"}
		if tc.tool == "compare_directories" {
			args = map[string]any{"path1": "dst", "path2": "dst2"}
		}
		mustOK(t, promptly(t, a, tc.tool, args, drainFIFO(paths["pipe"])))
	}
	mustOK(t, promptly(t, a, "delete_file", map[string]any{"path": "pipe"}, nil))
	if _, err := os.Lstat(paths["pipe"]); !os.IsNotExist(err) {
		t.Error("the pipe was not deleted")
	}
	if err := a.Snapshot(); err != nil {
		t.Fatal(err)
	}
}

// TestHardLinks_WritesRefused: a command can hard-link a file from outside the agent's grant
// (or from a read-only context path) into the workspace; writing through that name would
// change the outside file. Writes in place are refused; replacing the name (move onto it) and
// deleting it only touch the name, so they stay allowed, and the outside bytes never change.
func TestHardLinks_WritesRefused(t *testing.T) {
	f := newFixture(t)
	a, ws := f.alice, f.alice.Dir()
	outsideFile := filepath.Join(f.outside, "secret.txt")
	readme := filepath.Join(f.project, "readme.md")
	for name, target := range map[string]string{"linked.txt": outsideFile, "readme_link.md": readme, "tree/linked.txt": outsideFile} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(target, filepath.Join(ws, name)); err != nil {
			t.Skip("hard link:", err)
		}
	}
	writeFile(t, filepath.Join(ws, "src", "linked.txt"), "copied over")
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "sub/f.txt"}))
	const refused = " hard links; writing to it would change the file under its other names too"
	type args = map[string]any
	for _, c := range []struct {
		tool string
		args args
	}{
		{"write_file", args{"path": "linked.txt", "content": "pwned"}},
		{"write_file", args{"path": "readme_link.md", "content": "pwned"}},
		{"edit_file", args{"path": "linked.txt", "old_string": "top", "new_string": "pwned"}},
		{"edit_file", args{"path": "readme_link.md", "old_string": "read", "new_string": "pwned"}},
		{"copy_file", args{"source": "sub/f.txt", "destination": "linked.txt", "overwrite": true}},
		{"copy_file", args{"source": "src", "destination": "tree", "overwrite": true}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			res := call(t, a, c.tool, c.args)
			t.Log(res.Content)
			mustFail(t, res, refused)
			if !strings.Contains(res.Content, "Write a new file instead") {
				t.Errorf("the message does not say what to do: %s", res.Content)
			}
		})
	}
	if got := readFile(t, outsideFile); got != "top secret" {
		t.Fatalf("the outside file changed through its hard link: %q", got)
	}
	if got := readFile(t, readme); got != "read me" {
		t.Fatalf("the read-only context file changed through its hard link: %q", got)
	}
	// Replacing or removing the name leaves the other names' file alone.
	mustOK(t, call(t, a, "move_file", args{"source": "sub/f.txt", "destination": "linked.txt", "overwrite": true}))
	mustOK(t, call(t, a, "read_file", args{"path": "readme_link.md"}))
	mustOK(t, call(t, a, "delete_file", args{"path": "readme_link.md"}))
	if got := readFile(t, outsideFile); got != "top secret" {
		t.Errorf("the outside file changed: %q", got)
	}
	if got := readFile(t, readme); got != "read me" {
		t.Errorf("the context file changed: %q", got)
	}
	if got := readFile(t, filepath.Join(ws, "linked.txt")); got != "inside" {
		t.Errorf("linked.txt = %q after the move", got)
	}
	// Once the name has one link again, writes work.
	mustOK(t, call(t, a, "write_file", args{"path": "linked.txt", "content": "mine"}))
}

// A named pipe never blocks a tool or a snapshot.
func TestSpecialFiles_Skipped(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	if err := syscall.Mkfifo(filepath.Join(a.Dir(), "pipe.txt"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	writeFile(t, filepath.Join(a.Dir(), "ok.txt"), "needle")
	mustFail(t, call(t, a, "read_file", map[string]any{"path": "pipe.txt"}), "not a regular file")
	if got := mustOK(t, call(t, a, "search_files", map[string]any{"pattern": "needle"})); !strings.Contains(got, "ok.txt:1:") {
		t.Errorf("search = %s", got)
	}
	if err := a.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(a.SnapshotDir(), "pipe.txt")); !os.IsNotExist(err) {
		t.Error("the pipe was copied into the snapshot")
	}
}
