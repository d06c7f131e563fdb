package filetool

import (
	"massgen/internal/workspace"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttacks_MoreToolsRefused is the path attack table of create_directory, move_file,
// read_multiple_files, compare_files and compare_directories: every call must fail with a
// clear message, show nothing from outside and leave the file system untouched.
func TestAttacks_MoreToolsRefused(t *testing.T) {
	f := newFixture(t)
	ws := f.alice.Dir()
	secret := filepath.Join(f.outside, "secret.txt")
	snap := filepath.Join(f.run.SnapshotsDir(), "agent2")
	bobNotes := filepath.Join(f.bob.Dir(), "notes.md")
	const outside = "outside what you can access"
	const notWinner = "only the agent presenting the final answer"
	type args = map[string]any
	mv := func(src, dst string) args { return args{"source": src, "destination": dst} }
	mvOver := func(src, dst string) args { return args{"source": src, "destination": dst, "overwrite": true} }
	two := func(p1, p2 string) args { return args{"path1": p1, "path2": p2} }
	cases := []attack{
		{"mkdir relative escape", false, "create_directory", args{"path": "../../../../outside/newdir"}, outside},
		{"mkdir absolute outside", false, "create_directory", args{"path": filepath.Join(f.outside, "newdir")}, outside},
		{"mkdir through symlink", false, "create_directory", args{"path": "link_dir/newdir"}, outside},
		{"mkdir through relative symlink", false, "create_directory", args{"path": "rel_link_dir/newdir"}, outside},
		{"mkdir NUL byte", false, "create_directory", args{"path": "new\x00dir"}, "NUL byte"},
		{"mkdir in other agent workspace", false, "create_directory", args{"path": filepath.Join(f.bob.Dir(), "newdir")}, outside},
		{"mkdir in proc", false, "create_directory", args{"path": "/proc/newdir"}, outside},
		{"mkdir protected dir", true, "create_directory", args{"path": filepath.Join(f.rw, "locked_dir", "sub")}, "protected"},
		{"mkdir in .git of context", true, "create_directory", args{"path": filepath.Join(f.rw, ".git", "hooks2")}, "never change .git"},
		{"mkdir read-only context", true, "create_directory", args{"path": filepath.Join(f.project, "newdir")}, "read-only context path"},
		{"mkdir write-context before final", false, "create_directory", args{"path": filepath.Join(f.rw, "newdir")}, notWinner},
		{"mkdir in snapshot", false, "create_directory", args{"path": filepath.Join(snap, "newdir")}, "shared snapshots, which are read-only"},

		{"move source relative escape", false, "move_file", mv("../../../../outside/secret.txt", "stolen.txt"), outside},
		{"move source absolute outside", false, "move_file", mv(secret, "stolen.txt"), outside},
		{"move source through symlink", false, "move_file", mv("link_dir/secret.txt", "stolen.txt"), outside},
		{"move source other agent workspace", false, "move_file", mv(bobNotes, "stolen.txt"), outside},
		{"move destination relative escape", false, "move_file", mv("sub/f.txt", "../../../../outside/moved.txt"), outside},
		{"move destination absolute outside", false, "move_file", mv("sub/f.txt", filepath.Join(f.outside, "moved.txt")), outside},
		{"move destination through symlink", false, "move_file", mv("sub/f.txt", "link_dir/moved.txt"), outside},
		{"move onto symlink pointing out", false, "move_file", mvOver("sub/f.txt", "link_file"), outside},
		{"move onto dangling symlink", false, "move_file", mv("sub/f.txt", "dangling"), "points nowhere"},
		{"move into other agent workspace", false, "move_file", mv("sub/f.txt", "link_to_bobws/f.txt"), outside},
		{"move NUL source", false, "move_file", mv("a\x00b", "x.txt"), "NUL byte"},
		{"move NUL destination", false, "move_file", mv("sub/f.txt", "x\x00y"), "NUL byte"},
		{"move protected source", true, "move_file", mv(filepath.Join(f.rw, "locked.txt"), "locked.txt"), "protected"},
		{"move below protected dir", true, "move_file", mv(filepath.Join(f.rw, "locked_dir", "inner.txt"), "inner.txt"), "protected"},
		{"move onto protected", true, "move_file", mvOver(filepath.Join(f.rw, "file.txt"), filepath.Join(f.rw, "locked.txt")), "protected"},
		{"move into protected dir", true, "move_file", mv(filepath.Join(f.rw, "file.txt"), filepath.Join(f.rw, "locked_dir", "f.txt")), "protected"},
		{"move .git of context", true, "move_file", mv(filepath.Join(f.rw, ".git"), "git"), "never change .git"},
		{"move to .env in context", true, "move_file", mv(filepath.Join(f.rw, "file.txt"), filepath.Join(f.rw, ".env")), "never change .env"},
		{"move from read-only context", true, "move_file", mv(filepath.Join(f.project, "readme.md"), "readme.md"), "read-only context path"},
		{"move into read-only context", true, "move_file", mv("sub/f.txt", filepath.Join(f.project, "f.txt")), "read-only context path"},
		{"move onto read-only context file", true, "move_file", mvOver("sub/f.txt", f.ctxFile), "read-only context path"},
		{"move from write-context before final", false, "move_file", mv(filepath.Join(f.rw, "file.txt"), "file.txt"), notWinner},
		{"move into write-context before final", false, "move_file", mv("sub/f.txt", filepath.Join(f.rw, "f.txt")), notWinner},
		{"move from snapshot", false, "move_file", mv(f.bobSnapFile, "notes.md"), "shared snapshots, which are read-only"},
		{"move into snapshot", false, "move_file", mv("sub/f.txt", filepath.Join(snap, "f.txt")), "shared snapshots, which are read-only"},
		{"move without read", false, "move_file", mv("unread.txt", "read.txt"), "was not read or created by you"},
		{"move dir with unread file", false, "move_file", mv("sub", "sub2"), "not read or created: f.txt"},
		{"move write-context file unread", true, "move_file", mv(filepath.Join(f.rw, "file.txt"), filepath.Join(f.rw, "file2.txt")), "was not read or created by you"},
		{"move workspace root", false, "move_file", mv(".", "elsewhere"), "is the top of your workspace and cannot be moved"},
		{"move workspace root absolute", false, "move_file", mv(ws, "elsewhere"), "cannot be moved"},
		{"move write-context root", true, "move_file", mv(f.rw, "rw"), "is the top of a context path and cannot be moved"},
		{"move dir into itself", false, "move_file", mv("sub", "sub/inner"), "cannot be moved into itself"},
		{"move invalid json", false, "move_file", nil, "invalid arguments"},

		{"read many relative escape", false, "read_multiple_files", args{"paths": []string{"../../../../outside/secret.txt"}}, outside},
		{"read many absolute outside", false, "read_multiple_files", args{"paths": []string{secret, "/etc/passwd"}}, outside},
		{"read many symlinks", false, "read_multiple_files", args{"paths": []string{"link_file", "link_dir/secret.txt", "rel_link_dir/secret.txt"}}, outside},
		{"read many NUL byte", false, "read_multiple_files", args{"paths": []string{"a\x00b"}}, "NUL byte"},
		{"read many other agent", false, "read_multiple_files", args{"paths": []string{bobNotes, "link_to_bobws/notes.md"}}, outside},
		{"read many proc", false, "read_multiple_files", args{"paths": []string{"/proc/self/environ"}}, outside},
		{"read many sibling of context file", false, "read_multiple_files", args{"paths": []string{filepath.Join(f.base, "single", "sibling.txt")}}, outside},

		{"compare files relative escape", false, "compare_files", two("../../../../outside/secret.txt", "sub/f.txt"), outside},
		{"compare files absolute outside", false, "compare_files", two("sub/f.txt", secret), outside},
		{"compare files symlink", false, "compare_files", two("link_file", "sub/f.txt"), outside},
		{"compare files NUL byte", false, "compare_files", two("sub/f.txt", "a\x00"), "NUL byte"},
		{"compare files other agent", false, "compare_files", two("sub/f.txt", bobNotes), outside},
		{"compare files etc", false, "compare_files", two("/etc/passwd", "/etc/hostname"), outside},

		{"compare dirs relative escape", false, "compare_directories", two("../../../../outside", "."), outside},
		{"compare dirs absolute outside", false, "compare_directories", two(".", f.outside), outside},
		{"compare dirs symlink", false, "compare_directories", two("link_dir", "."), outside},
		{"compare dirs relative symlink", false, "compare_directories", two(".", "rel_link_dir"), outside},
		{"compare dirs NUL byte", false, "compare_directories", two(".", "x\x00"), "NUL byte"},
		{"compare dirs other agent", false, "compare_directories", two(".", f.bob.Dir()), outside},
		{"compare dirs other agent via link", false, "compare_directories", two("link_to_bobws", "."), outside},
		{"compare dirs etc", false, "compare_directories", two("/etc", "."), outside},

		{"read many secret file", false, "read_multiple_files", args{"paths": []string{filepath.Join(f.rw, ".git", "config")}}, "may hold secrets"},
		{"compare files secret file", false, "compare_files", two(filepath.Join(f.rw, ".git", "config"), "sub/f.txt"), "may hold secrets"},
		{"move secret file out", true, "move_file", mv(filepath.Join(f.rw, "id_rsa"), "stolen.txt"), "may hold secrets"},
		{"mkdir named like a key", true, "create_directory", args{"path": filepath.Join(f.rw, "x.pem")}, "may hold secrets"},
	}
	writeFile(t, filepath.Join(f.rw, "id_rsa"), "PRIVATE KEY")
	runAttacks(t, f.alice, cases, "top secret", "bob's notes", "root:", "[core]", "PRIVATE KEY")
	for p, want := range map[string]string{
		secret: "top secret", filepath.Join(f.project, "readme.md"): "read me", filepath.Join(f.rw, "file.txt"): "rw file",
		filepath.Join(f.rw, "locked.txt"): "locked", f.bobSnapFile: "bob's notes", filepath.Join(ws, "unread.txt"): "never read",
		filepath.Join(f.rw, ".git", "config"): "[core]", f.ctxFile: "only", filepath.Join(f.rw, "locked_dir", "inner.txt"): "inner",
		filepath.Join(ws, "sub", "f.txt"): "inside", bobNotes: "bob's notes",
	} {
		if got := readFile(t, p); got != want {
			t.Errorf("%s changed to %q", p, got)
		}
	}
	for _, p := range []string{
		filepath.Join(f.outside, "newdir"), filepath.Join(f.outside, "moved.txt"), filepath.Join(ws, "stolen.txt"),
		filepath.Join(ws, "elsewhere"), filepath.Join(ws, "rw"), filepath.Join(ws, "readme.md"), filepath.Join(ws, "read.txt"),
		filepath.Join(ws, "sub2"), filepath.Join(ws, "git"), filepath.Join(f.rw, "newdir"), filepath.Join(f.project, "newdir"),
		filepath.Join(f.rw, "locked_dir", "sub"), filepath.Join(f.rw, ".git", "hooks2"), filepath.Join(snap, "newdir"),
		filepath.Join(f.rw, ".env"), filepath.Join(f.rw, "file2.txt"), filepath.Join(f.bob.Dir(), "newdir"), filepath.Join(f.rw, "x.pem"),
	} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created", p)
		}
	}
}

// A directory checked as safe and swapped for a link leading out before use: the new tools
// go through os.Root, so the check passes and the operation does not.
func TestAttacks_MoreToolsSymlinkSwappedAfterCheck(t *testing.T) {
	f := newFixture(t)
	ws := f.alice.Dir()
	sub := filepath.Join(ws, "sub")
	writeFile(t, filepath.Join(f.outside, "f.txt"), "outside f")
	mustOK(t, call(t, f.alice, "write_file", map[string]any{"path": "made.txt", "content": "made"}))
	swapped := 0
	hook(t, f.alice, func(abs string) {
		if !workspace.Within(sub, abs) {
			return
		}
		swapped++
		if err := os.RemoveAll(sub); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(f.outside, sub); err != nil {
			t.Fatal(err)
		}
	})
	const escaped = "leads outside what you can access"
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_directory", map[string]any{"path": "sub/newdir"}},
		{"move_file", map[string]any{"source": "made.txt", "destination": "sub/moved.txt"}},
		{"move_file", map[string]any{"source": "sub/f.txt", "destination": "moved.txt"}},
		{"read_multiple_files", map[string]any{"paths": []string{"sub/f.txt"}}},
		{"compare_files", map[string]any{"path1": "made.txt", "path2": "sub/f.txt"}},
		{"compare_directories", map[string]any{"path1": "sub", "path2": "."}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			_ = os.Remove(sub)
			writeFile(t, filepath.Join(sub, "f.txt"), "inside")
			f.alice.Touch(filepath.Join(sub, "f.txt"))
			res := call(t, f.alice, c.tool, c.args)
			t.Log(res.Content)
			mustFail(t, res, escaped)
			if strings.Contains(res.Content, "outside f") || strings.Contains(res.Content, "secret") {
				t.Fatal("the tool read through the swapped link")
			}
		})
	}
	if swapped != 6 {
		t.Errorf("swapped %d times, want 6", swapped)
	}
	if got := readFile(t, filepath.Join(f.outside, "f.txt")); got != "outside f" {
		t.Errorf("outside file changed: %q", got)
	}
	for _, p := range []string{"newdir", "moved.txt", "made.txt"} {
		if _, err := os.Lstat(filepath.Join(f.outside, p)); !os.IsNotExist(err) {
			t.Errorf("%s appeared outside", p)
		}
	}
	if got := readFile(t, filepath.Join(ws, "made.txt")); got != "made" {
		t.Errorf("made.txt = %q", got)
	}
}
