package filetool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/permission"
	"massgen/internal/workspace"
)

const privateSecret = "SECRET-PRIVATE-42"

// rulesAgent is an agent whose workspace holds proj/private/secret.txt, proj/public.txt, an
// empty proj/empty, proj/link -> proj/private, and other/private/secret.txt (other content, no
// rule on it), under the permission rules of c.
func rulesAgent(t *testing.T, c permission.Config) *workspace.Agent {
	t.Helper()
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	ws := a.Dir()
	writeFile(t, filepath.Join(ws, "proj", "private", "secret.txt"), privateSecret)
	writeFile(t, filepath.Join(ws, "proj", "public.txt"), "public")
	writeFile(t, filepath.Join(ws, "other", "private", "secret.txt"), "other")
	if err := os.MkdirAll(filepath.Join(ws, "proj", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "proj", "private"), filepath.Join(ws, "proj", "link")); err != nil {
		t.Fatal(err)
	}
	p, err := permission.NewPolicy(c, ws)
	if err != nil {
		t.Fatal(err)
	}
	a.SetPathRules(p)
	return a
}

// TestPathRules_ReadDenialHoldsForEveryTool: read_file(proj/private/**) keeps the secret out of
// every tool that reads, lists, searches, copies or compares, however the path is reached.
func TestPathRules_ReadDenialHoldsForEveryTool(t *testing.T) {
	a := rulesAgent(t, permission.Config{Deny: []string{"read_file(proj/private/**)"}})
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		refused bool // the call itself must fail
		unnamed bool // the result must not even name the private file
	}{
		{"read the file", "read_file", map[string]any{"path": "proj/private/secret.txt"}, true, false},
		{"read through a link", "read_file", map[string]any{"path": "proj/link/secret.txt"}, true, false},
		{"read many through a link", "read_multiple_files", map[string]any{"paths": []string{"proj/link/secret.txt"}}, true, false},
		{"search the project", "search_files", map[string]any{"pattern": "SECRET", "path": "proj"}, false, true},
		{"search the link", "search_files", map[string]any{"pattern": "SECRET", "path": "proj/link"}, false, true},
		{"search the workspace", "search_files", map[string]any{"pattern": "SECRET", "path": "."}, false, true},
		{"list the project", "list_directory", map[string]any{"path": "proj", "recursive": true}, false, true},
		{"list the link", "list_directory", map[string]any{"path": "proj/link"}, false, true},
		{"copy the file through a link", "copy_file", map[string]any{"source": "proj/link/secret.txt", "destination": "out1.txt"}, true, false},
		{"compare the file", "compare_files", map[string]any{"path1": "proj/link/secret.txt", "path2": "proj/public.txt"}, true, false},
		{"compare the link's tree", "compare_directories", map[string]any{"path1": "proj/link", "path2": "proj/empty", "show_content_diff": true}, false, true},
		{"compare with a like tree", "compare_directories", map[string]any{"path1": "proj", "path2": "other", "show_content_diff": true}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, a, tc.tool, tc.args)
			t.Log(res.Content)
			if tc.refused && !res.IsError {
				t.Errorf("the call ran: %s", res.Content)
			}
			// A walk must not even name it; a refusal names the path the call gave.
			if strings.Contains(res.Content, privateSecret) || tc.unnamed && strings.Contains(res.Content, "secret.txt") {
				t.Errorf("the result shows the private file: %s", res.Content)
			}
		})
	}
	t.Run("copy the project", func(t *testing.T) {
		mustOK(t, call(t, a, "copy_file", map[string]any{"source": "proj", "destination": "copy"}))
		if _, err := os.Stat(filepath.Join(a.Dir(), "copy", "private", "secret.txt")); err == nil {
			t.Error("copy_file copied the private file")
		}
		if got := readFile(t, filepath.Join(a.Dir(), "copy", "public.txt")); got != "public" {
			t.Errorf("copy/public.txt = %q", got)
		}
	})
	t.Run("media input through a link", func(t *testing.T) {
		if _, data, err := ReadBytes(a, "proj/link/secret.txt", 1<<20); err == nil || strings.Contains(string(data), privateSecret) {
			t.Errorf("ReadBytes = %q, %v; want a refusal", data, err)
		}
	})
	t.Run("snapshot", func(t *testing.T) {
		if err := a.Snapshot(); err != nil {
			t.Fatal(err)
		}
		snap := a.SnapshotDir()
		if _, err := os.Stat(filepath.Join(snap, "proj", "private", "secret.txt")); err == nil {
			t.Error("the snapshot shares the private file with the other agents")
		}
		if got := readFile(t, filepath.Join(snap, "proj", "public.txt")); got != "public" {
			t.Errorf("snapshot proj/public.txt = %q", got)
		}
	})
}

// TestPathRules_WriteDenialHoldsForEveryTool: write_file(proj/private/**) keeps every write,
// delete, move and copy out of proj/private, however the path is reached.
func TestPathRules_WriteDenialHoldsForEveryTool(t *testing.T) {
	a := rulesAgent(t, permission.Config{Deny: []string{"write_file(proj/private/**)"}})
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "proj/private/secret.txt"}))
	mustOK(t, call(t, a, "read_file", map[string]any{"path": "proj/public.txt"}))
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"write through a link", "write_file", map[string]any{"path": "proj/link/new.txt", "content": "x"}},
		{"edit through a link", "edit_file", map[string]any{"path": "proj/link/secret.txt", "old_string": "SECRET", "new_string": "x"}},
		{"copy into it", "copy_file", map[string]any{"source": "proj/public.txt", "destination": "proj/link/public.txt"}},
		{"copy a tree into it", "copy_file", map[string]any{"source": "proj/empty", "destination": "proj/link/sub"}},
		{"delete through a link", "delete_file", map[string]any{"path": "proj/link/secret.txt"}},
		{"delete the project", "delete_file", map[string]any{"path": "proj", "recursive": true}},
		{"move the project", "move_file", map[string]any{"source": "proj", "destination": "moved"}},
		{"move out of it", "move_file", map[string]any{"source": "proj/link/secret.txt", "destination": "taken.txt"}},
		{"create a folder in it", "create_directory", map[string]any{"path": "proj/link/d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, a, tc.tool, tc.args)
			t.Log(res.Content)
			mustFail(t, res, "write_file(proj/private/**)")
		})
	}
	if got := readFile(t, filepath.Join(a.Dir(), "proj", "private", "secret.txt")); got != privateSecret {
		t.Errorf("the private file changed: %q", got)
	}
	entries, _ := os.ReadDir(filepath.Join(a.Dir(), "proj", "private"))
	if len(entries) != 1 {
		t.Errorf("proj/private holds %d entries; want the secret only", len(entries))
	}
}

// TestPathRules_AskBelowTheNamedPath: an ask rule the named path does not match keeps what it
// covers out of a walk (the gate asked about the named path only), and lets a call that names
// it through (the gate asked about that one).
func TestPathRules_AskBelowTheNamedPath(t *testing.T) {
	a := rulesAgent(t, permission.Config{Ask: []string{"read_file(proj/private/**)"}})
	res := mustOK(t, call(t, a, "search_files", map[string]any{"pattern": "SECRET", "path": "proj"}))
	if strings.Contains(res, privateSecret) {
		t.Errorf("search shows what needs approval: %s", res)
	}
	if got := mustOK(t, call(t, a, "read_file", map[string]any{"path": "proj/private/secret.txt"})); !strings.Contains(got, privateSecret) {
		t.Errorf("read_file of the approved path = %q", got)
	}
	mustFail(t, call(t, a, "read_file", map[string]any{"path": "proj/link/secret.txt"}), "needs approval")
}
