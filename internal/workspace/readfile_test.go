//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ReadFile reads what massgen itself takes from a workspace (an agent's changedoc): the agent
// controls that file, so it may be a link out of the workspace, a FIFO that would block the
// read for ever, a hard link to a file no grant reaches, or endless.
func TestReadFile_AnAgentsFileCannotReachFurther(t *testing.T) {
	r, base := newRun(t)
	a := newAgent(t, r, "a", "agent1")
	secret := filepath.Join(base, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	put := func(rel, text string) {
		t.Helper()
		p := filepath.Join(a.Dir(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(a.Dir(), "tasks"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(a.Dir(), "tasks", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(a.Dir(), "tasks", "fifo.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(base, "hard.txt")
	if err := os.WriteFile(hard, []byte("OTHER SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(hard, filepath.Join(a.Dir(), "tasks", "hard.md")); err != nil {
		t.Fatal(err)
	}
	put("tasks/long.md", strings.Repeat("é", 10)) // 20 bytes, two per character
	put("tasks/ok.md", "journal")

	for _, tc := range []struct {
		rel, want string
		cut, fail bool
	}{
		{rel: "tasks/ok.md", want: "journal"},
		{rel: "tasks/missing.md"},
		{rel: "tasks/link.md", fail: true},
		{rel: "tasks/fifo.md", fail: true},
		{rel: "tasks/hard.md", fail: true},
		{rel: "../../secret.txt", fail: true},
		{rel: "tasks/long.md", want: strings.Repeat("é", 5), cut: true}, // 11 bytes asked: cut between characters
	} {
		got, cut, err := a.ReadFile(tc.rel, 11, false)
		if (err != nil) != tc.fail || got != tc.want || cut != tc.cut {
			t.Errorf("ReadFile(%s) = %q, cut %v, %v; want %q, cut %v, failure %v", tc.rel, got, cut, err, tc.want, tc.cut, tc.fail)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("ReadFile(%s) read a file outside the workspace", tc.rel)
		}
	}

	// shared reads what the other agents see: the snapshot, not what was written after it.
	if got, _, err := a.ReadFile("tasks/ok.md", 100, true); got != "" || err != nil {
		t.Errorf("before any snapshot: %q, %v", got, err)
	}
	for _, p := range []string{"link.md", "fifo.md", "hard.md"} {
		_ = os.Remove(filepath.Join(a.Dir(), "tasks", p))
	}
	if err := a.Snapshot(); err != nil {
		t.Fatal(err)
	}
	put("tasks/ok.md", "changed after the answer")
	if got, _, err := a.ReadFile("tasks/ok.md", 100, true); got != "journal" || err != nil {
		t.Errorf("shared = %q, %v; want the snapshot's", got, err)
	}
}
