package filetool

import (
	"massgen/internal/workspace"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttacks_Refused is the path attack table: every call must fail with a clear message and
// leave the file system untouched.
// attack is one tool call that must be refused with an error containing want.
type attack struct {
	name  string
	grant bool // GrantFinal before the call
	tool  string
	args  map[string]any // nil sends invalid JSON
	want  string
}

// runAttacks runs each attack as a subtest on a and checks the refusal; leaks are strings
// that must not appear in any result.
func runAttacks(t *testing.T, a *workspace.Agent, cases []attack, leaks ...string) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.grant {
				a.GrantFinal()
				defer a.RevokeFinal()
			}
			tl, ok := toolsOf(a).Find(c.tool)
			if !ok {
				t.Fatalf("no tool %s", c.tool)
			}
			args := `{bad json`
			if c.args != nil {
				args = mustJSON(t, c.args)
			}
			res := tl.Run(t.Context(), args)
			t.Log(res.Content)
			mustFail(t, res, c.want)
			for _, leak := range leaks {
				if strings.Contains(res.Content, leak) {
					t.Errorf("result shows %q", leak)
				}
			}
		})
	}
}

func TestAttacks_Refused(t *testing.T) {
	f := newFixture(t)
	ws := f.alice.Dir()
	secret := filepath.Join(f.outside, "secret.txt")
	const outside = "outside what you can access"
	cases := []attack{
		{"relative escape", false, "read_file", map[string]any{"path": "../../../../outside/secret.txt"}, outside},
		{"deep relative escape", false, "read_file", map[string]any{"path": strings.Repeat("../", 30) + "etc/passwd"}, outside},
		{"absolute outside", false, "read_file", map[string]any{"path": secret}, outside},
		{"etc passwd", false, "read_file", map[string]any{"path": "/etc/passwd"}, outside},
		{"symlink to file", false, "read_file", map[string]any{"path": "link_file"}, outside},
		{"symlink to dir", false, "read_file", map[string]any{"path": "link_dir/secret.txt"}, outside},
		{"relative symlink to dir", false, "read_file", map[string]any{"path": "rel_link_dir/secret.txt"}, outside},
		{"list through symlink", false, "list_directory", map[string]any{"path": "link_dir"}, outside},
		{"write through symlink dir", false, "write_file", map[string]any{"path": "link_dir/new.txt", "content": "x"}, outside},
		{"edit through symlink", false, "edit_file", map[string]any{"path": "link_file", "old_string": "top", "new_string": "x"}, outside},
		{"write through dangling symlink", false, "write_file", map[string]any{"path": "dangling", "content": "x"}, "points nowhere"},
		{"other agent workspace via symlink", false, "read_file", map[string]any{"path": "link_to_bobws/notes.md"}, outside},
		{"other agent workspace absolute", false, "list_directory", map[string]any{"path": f.bob.Dir()}, outside},
		{"home ssh key", false, "read_file", map[string]any{"path": "~/.ssh/id_rsa"}, `"~" is not expanded`},
		{"proc environ", false, "read_file", map[string]any{"path": "/proc/self/environ"}, outside},
		{"sys", false, "list_directory", map[string]any{"path": "/sys"}, outside},
		{"dev", false, "write_file", map[string]any{"path": "/dev/null", "content": "x"}, outside},
		{"NUL byte", false, "read_file", map[string]any{"path": "a\x00b"}, "NUL byte"},
		{"long component", false, "write_file", map[string]any{"path": strings.Repeat("a", 256), "content": "x"}, "limit is 255"},
		{"long path", false, "read_file", map[string]any{"path": strings.Repeat("ab/", 1400)}, "limit is 4096"},
		{"empty path", false, "read_file", map[string]any{"path": ""}, "path is empty"},
		{"search outside", false, "search_files", map[string]any{"pattern": "root", "path": "/etc"}, outside},
		{"copy from outside", false, "copy_file", map[string]any{"source": secret, "destination": "stolen.txt"}, outside},
		{"copy to outside", false, "copy_file", map[string]any{"source": "sub/f.txt", "destination": filepath.Join(f.outside, "x.txt")}, outside},
		{"sibling of a file context path", false, "read_file", map[string]any{"path": filepath.Join(f.base, "single", "sibling.txt")}, outside},
		{"write read context path", true, "write_file", map[string]any{"path": filepath.Join(f.project, "readme.md"), "content": "x"}, "read-only context path"},
		{"write read context file", true, "write_file", map[string]any{"path": f.ctxFile, "content": "x"}, "read-only context path"},
		{"write write-context before final", false, "write_file", map[string]any{"path": filepath.Join(f.rw, "file.txt"), "content": "x"}, "only the agent presenting the final answer"},
		{"write protected file", true, "write_file", map[string]any{"path": filepath.Join(f.rw, "locked.txt"), "content": "x"}, "protected"},
		{"write below protected dir", true, "write_file", map[string]any{"path": filepath.Join(f.rw, "locked_dir", "new.txt"), "content": "x"}, "protected"},
		{"delete protected dir", true, "delete_file", map[string]any{"path": filepath.Join(f.rw, "locked_dir"), "recursive": true}, "protected"},
		{"write .git in context", true, "edit_file", map[string]any{"path": filepath.Join(f.rw, ".git", "config"), "old_string": "core", "new_string": "x"}, "never change .git"},
		{"write new .env in context", true, "write_file", map[string]any{"path": filepath.Join(f.rw, ".env"), "content": "x"}, "never change .env"},
		{"delete write-context root", true, "delete_file", map[string]any{"path": f.rw, "recursive": true}, "cannot be deleted"},
		{"write other agent snapshot", false, "write_file", map[string]any{"path": f.bobSnapFile, "content": "x"}, "shared snapshots, which are read-only"},
		{"copy into other agent snapshot", false, "copy_file", map[string]any{"source": "sub/f.txt", "destination": filepath.Join(f.run.SnapshotsDir(), "agent2", "f.txt")}, "read-only"},
		{"delete other agent snapshot", false, "delete_file", map[string]any{"path": f.bobSnapFile}, "read-only"},
		{"delete without read", false, "delete_file", map[string]any{"path": "unread.txt"}, "was not read or created by you"},
		{"delete dir with unread file", false, "delete_file", map[string]any{"path": "sub", "recursive": true}, "not read or created: f.txt"},
		{"delete non-empty dir without recursive", false, "delete_file", map[string]any{"path": "sub"}, "set recursive to true"},
		{"delete workspace root", false, "delete_file", map[string]any{"path": ".", "recursive": true}, "cannot be deleted"},
		{"invalid json", false, "read_file", nil, "invalid arguments"},
		{"read .git/config in context", false, "read_file", map[string]any{"path": filepath.Join(f.rw, ".git", "config")}, "may hold secrets"},
		{"search .git/config in context", false, "search_files", map[string]any{"pattern": "core", "path": filepath.Join(f.rw, ".git", "config")}, "list the file itself under context_paths"},
		{"copy .git/config out of context", false, "copy_file", map[string]any{"source": filepath.Join(f.rw, ".git", "config"), "destination": "stolen.txt"}, "may hold secrets"},
		{"list .git/config", false, "list_directory", map[string]any{"path": filepath.Join(f.rw, ".git", "config")}, "may hold secrets"},
	}
	runAttacks(t, f.alice, cases, "[core]", "top secret")
	// Nothing leaked out or changed.
	for p, want := range map[string]string{
		secret: "top secret", filepath.Join(f.project, "readme.md"): "read me", filepath.Join(f.rw, "file.txt"): "rw file",
		filepath.Join(f.rw, "locked.txt"): "locked", f.bobSnapFile: "bob's notes", filepath.Join(ws, "unread.txt"): "never read",
		filepath.Join(f.rw, ".git", "config"): "[core]", f.ctxFile: "only", filepath.Join(f.rw, "locked_dir", "inner.txt"): "inner",
	} {
		if got := readFile(t, p); got != want {
			t.Errorf("%s changed to %q", p, got)
		}
	}
	for _, p := range []string{filepath.Join(f.outside, "new.txt"), filepath.Join(f.outside, "x.txt"), filepath.Join(ws, "stolen.txt"), filepath.Join(f.rw, ".env")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created", p)
		}
	}
}

func TestAttacks_MessagesSayWhatIsAllowed(t *testing.T) {
	f := newFixture(t)
	res := call(t, f.alice, "read_file", map[string]any{"path": "/etc/passwd"})
	for _, want := range []string{f.alice.Dir(), f.run.SnapshotsDir(), f.project + " (read-only)", f.rw + " (read-only; writable only by the agent presenting the final answer)"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("message %q does not mention %q", res.Content, want)
		}
	}
}

// A directory checked as safe and then swapped for a symbolic link before use is refused by
// os.Root: the check passes, the open does not.
func TestAttacks_SymlinkSwappedAfterCheck(t *testing.T) {
	for _, target := range []string{"absolute", "relative"} {
		t.Run(target, func(t *testing.T) {
			f := newFixture(t)
			ws := f.alice.Dir()
			writeFile(t, filepath.Join(f.outside, "f.txt"), "outside f")
			link := f.outside
			if target == "relative" {
				link = "../../../../outside"
			}
			swapped := 0
			hook(t, f.alice, func(abs string) {
				if filepath.Dir(abs) != filepath.Join(ws, "sub") {
					return
				}
				swapped++
				if err := os.RemoveAll(filepath.Join(ws, "sub")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(link, filepath.Join(ws, "sub")); err != nil {
					t.Fatal(err)
				}
			})
			const escaped = "leads outside what you can access"
			mustFail(t, call(t, f.alice, "write_file", map[string]any{"path": "sub/new.txt", "content": "pwned"}), escaped)
			if _, err := os.Stat(filepath.Join(f.outside, "new.txt")); !os.IsNotExist(err) {
				t.Fatal("write escaped through the swapped link")
			}
			// Restore the directory and try a read and a delete.
			for _, tc := range []struct{ tool, name string }{{"read_file", "f.txt"}, {"delete_file", "f.txt"}} {
				_ = os.Remove(filepath.Join(ws, "sub"))
				writeFile(t, filepath.Join(ws, "sub", tc.name), "inside")
				f.alice.Touch(filepath.Join(ws, "sub", tc.name))
				res := call(t, f.alice, tc.tool, map[string]any{"path": "sub/" + tc.name})
				mustFail(t, res, escaped)
				if strings.Contains(res.Content, "outside f") {
					t.Fatal("read escaped through the swapped link")
				}
			}
			if got := readFile(t, filepath.Join(f.outside, "f.txt")); got != "outside f" {
				t.Fatalf("outside file changed: %q", got)
			}
			if swapped != 3 {
				t.Fatalf("swapped %d times, want 3", swapped)
			}
		})
	}
}

func TestFinal_WriteOnlyForWinnerAndRevocable(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(f.rw, "file.txt")
	write := func(a *workspace.Agent, content string) string {
		t.Helper()
		res := call(t, a, "write_file", map[string]any{"path": p, "content": content})
		if res.IsError {
			return res.Content
		}
		return ""
	}
	if msg := write(f.alice, "x"); !strings.Contains(msg, "only the agent presenting the final answer") {
		t.Fatalf("before GrantFinal: %q", msg)
	}
	f.alice.GrantFinal()
	if msg := write(f.alice, "winner"); msg != "" {
		t.Fatalf("winner after GrantFinal: %s", msg)
	}
	if msg := write(f.bob, "loser"); msg == "" {
		t.Fatal("non-winner wrote to the context path")
	}
	// New files and nested directories are allowed too, and the winner may delete what it wrote.
	mustOK(t, call(t, f.alice, "write_file", map[string]any{"path": filepath.Join(f.rw, "new", "deep.txt"), "content": "d"}))
	mustOK(t, call(t, f.alice, "delete_file", map[string]any{"path": filepath.Join(f.rw, "new"), "recursive": true}))
	// A writable file context path grants that file only.
	single := filepath.Join(f.base, "single")
	if err := f.alice.SetContextPaths([]workspace.ContextPath{{Path: f.rw, Write: true}, {Path: filepath.Join(single, "only.txt"), Write: true}}); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, f.alice, "write_file", map[string]any{"path": filepath.Join(single, "only.txt"), "content": "changed"}))
	mustFail(t, call(t, f.alice, "write_file", map[string]any{"path": filepath.Join(single, "sibling.txt"), "content": "x"}), "outside what you can access")
	mustFail(t, call(t, f.alice, "write_file", map[string]any{"path": filepath.Join(single, "new.txt"), "content": "x"}), "outside what you can access")
	if got := readFile(t, filepath.Join(single, "only.txt")); got != "changed" {
		t.Errorf("only.txt = %q", got)
	}
	f.alice.RevokeFinal()
	if msg := write(f.alice, "after"); msg == "" {
		t.Fatal("write allowed after RevokeFinal (B13)")
	}
	if got := readFile(t, p); got != "winner" {
		t.Errorf("file = %q, want winner", got)
	}
}

func TestAccess_ReadsAllowed(t *testing.T) {
	f := newFixture(t)
	for p, want := range map[string]string{
		filepath.Join(f.project, "readme.md"): "read me",
		f.ctxFile:                             "only",
		f.bobSnapFile:                         "bob's notes",
		"sub/f.txt":                           "inside",
		filepath.Join(f.alice.Dir(), "sub", "..", "sub", "f.txt"): "inside",
	} {
		if got := mustOK(t, call(t, f.alice, "read_file", map[string]any{"path": p})); got != want {
			t.Errorf("read %s = %q, want %q", p, got, want)
		}
	}
}

// A context path that contains the run (a project holding .massgen) must not expose other
// agents' private workspaces.
func TestAccess_RunHiddenFromContextPaths(t *testing.T) {
	f := newFixture(t)
	if err := f.alice.SetContextPaths([]workspace.ContextPath{{Path: f.base}}); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, f.alice, "read_file", map[string]any{"path": filepath.Join(f.outside, "secret.txt")}))
	mustFail(t, call(t, f.alice, "read_file", map[string]any{"path": filepath.Join(f.bob.Dir(), "notes.md")}), "private to massgen")
	mustOK(t, call(t, f.alice, "read_file", map[string]any{"path": f.bobSnapFile}))
	mustOK(t, call(t, f.alice, "read_file", map[string]any{"path": "sub/f.txt"}))
	logs := filepath.Join(f.base, "logs")
	writeFile(t, filepath.Join(logs, "bob", "answer.txt"), "real id")
	if err := f.run.HidePath(logs); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, f.alice, "read_file", map[string]any{"path": filepath.Join(logs, "bob", "answer.txt")}), "private to massgen")
}
