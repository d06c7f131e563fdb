package workspace

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGatherPart_AddsKeepsAndSetsConflictsBeside(t *testing.T) {
	r, _ := newRun(t)
	presenter := newAgent(t, r, "integrator", "agent3")
	part := newAgent(t, r, "frontend", "agent1")
	write(t, presenter.Dir(), "README.md", "integrator's readme")
	write(t, presenter.Dir(), "same.txt", "shared")
	write(t, part.Dir(), "ui/index.html", "<p>ui</p>")
	write(t, part.Dir(), "README.md", "frontend's readme")
	write(t, part.Dir(), "same.txt", "shared")
	if err := part.Snapshot(); err != nil {
		t.Fatal(err)
	}
	added, conflicts, err := presenter.GatherPart("agent1")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(added)
	if !reflect.DeepEqual(added, []string{"ui/index.html"}) {
		t.Errorf("added %v", added)
	}
	if !reflect.DeepEqual(conflicts, map[string]string{"README.md": "README.md.from-agent1"}) {
		t.Errorf("conflicts %v", conflicts)
	}
	for rel, want := range map[string]string{"ui/index.html": "<p>ui</p>", "README.md": "integrator's readme",
		"README.md.from-agent1": "frontend's readme", "same.txt": "shared"} {
		b, err := os.ReadFile(filepath.Join(presenter.Dir(), filepath.FromSlash(rel)))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
		}
	}
}

func TestGatherPart_NoSnapshotAndOwnLabelAddNothing(t *testing.T) {
	r, _ := newRun(t)
	presenter := newAgent(t, r, "a", "agent1")
	write(t, presenter.Dir(), "x.txt", "x")
	if err := presenter.Snapshot(); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"agent2", "agent1", "../agent1"} {
		added, conflicts, err := presenter.GatherPart(label)
		if err != nil || len(added) > 0 || len(conflicts) > 0 {
			t.Errorf("%s: %v %v %v", label, added, conflicts, err)
		}
	}
}

func TestGatherPart_LinkOutOfTheSnapshotIsNotFollowed(t *testing.T) {
	r, base := newRun(t)
	presenter := newAgent(t, r, "a", "agent1")
	part := newAgent(t, r, "b", "agent2")
	secret := filepath.Join(base, "secret.txt")
	write(t, base, "secret.txt", "key")
	write(t, part.Dir(), "ok.txt", "ok")
	if err := part.Snapshot(); err != nil {
		t.Fatal(err)
	}
	// Plant a link in the shared snapshot itself, as a hostile process could.
	if err := os.Symlink(secret, filepath.Join(part.SnapshotDir(), "leak.txt")); err != nil {
		t.Fatal(err)
	}
	added, _, err := presenter.GatherPart("agent2")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(added, []string{"ok.txt"}) {
		t.Errorf("added %v", added)
	}
	if _, err := os.Lstat(filepath.Join(presenter.Dir(), "leak.txt")); !os.IsNotExist(err) {
		t.Errorf("the link was gathered: %v", err)
	}
}
