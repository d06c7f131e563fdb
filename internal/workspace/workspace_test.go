package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newRun creates a run under a fresh temporary root.
func newRun(t *testing.T) (*Run, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRun(filepath.Join(base, "workspaces"), "run1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, base
}

func newAgent(t *testing.T, r *Run, id, label string) *Agent {
	t.Helper()
	a, err := r.Agent(id, label)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// readAs reads the file at raw as the agent may now: checked by Resolve, opened through the
// root it was checked in (the file tools' way, which the filetool package tests in full).
func readAs(a *Agent, raw string) (string, error) {
	t, err := a.Resolve(raw, Read)
	if err != nil {
		return "", err
	}
	f, err := OpenRegular(t.Root(), t.Rel(), t.Flags())
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// writeAs replaces the file at raw with content as the agent may now (see readAs).
func writeAs(a *Agent, raw, content string) error {
	t, err := a.Resolve(raw, Write)
	if err != nil {
		return err
	}
	f, err := OpenWrite(t.Root(), t.Rel(), t.Flags()|os.O_CREATE, NewFileMode(t.Own()))
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	return errors.Join(err, f.Close())
}

// mustRefuse fails the test unless err says want.
func mustRefuse(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v does not contain %q", err, want)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewRun_Layout(t *testing.T) {
	r, base := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	if want := filepath.Join(base, "workspaces", "run1"); r.Dir() != want {
		t.Errorf("Dir = %s, want %s", r.Dir(), want)
	}
	if want := filepath.Join(r.Dir(), "alice", "workspace"); a.Dir() != want {
		t.Errorf("agent Dir = %s, want %s", a.Dir(), want)
	}
	if want := filepath.Join(r.Dir(), "snapshots", "agent1"); a.SnapshotDir() != want {
		t.Errorf("SnapshotDir = %s, want %s", a.SnapshotDir(), want)
	}
	if !isRealDir(a.Dir()) || !isRealDir(r.SnapshotsDir()) {
		t.Error("workspace or snapshots directory missing")
	}
}

func TestNewRun_RefusesExistingDir(t *testing.T) {
	r, base := newRun(t)
	_ = r
	if _, err := NewRun(filepath.Join(base, "workspaces"), "run1"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second NewRun with the same id: err = %v", err)
	}
	for _, bad := range []string{"", ".", "..", "a/b", ".hidden"} {
		if _, err := NewRun(base, bad); err == nil {
			t.Errorf("NewRun(%q) succeeded", bad)
		}
	}
}

func TestRun_AgentValidation(t *testing.T) {
	r, _ := newRun(t)
	newAgent(t, r, "alice", "agent1")
	for _, c := range [][2]string{{"alice", "agent9"}, {"bob", "agent1"}, {"snapshots", "agent2"}, {"../x", "agent3"}, {"carol", "a/b"}} {
		if _, err := r.Agent(c[0], c[1]); err == nil {
			t.Errorf("Agent(%q, %q) succeeded", c[0], c[1])
		}
	}
}

// Two runs of the same config (same agent ids and labels) never share a directory (B14).
func TestNewRun_ParallelRunsShareNothing(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "workspaces")
	var agents []*Agent
	for _, id := range []string{"20260101_120000_1", "20260101_120000_2"} {
		r, err := NewRun(root, id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		a := newAgent(t, r, "alice", "agent1")
		if err := writeAs(a, "out.txt", id); err != nil {
			t.Fatal(err)
		}
		if err := a.Snapshot(); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	a, b := agents[0], agents[1]
	if a.Dir() == b.Dir() || a.SnapshotDir() == b.SnapshotDir() || a.run.stageDir == b.run.stageDir {
		t.Fatal("runs share a directory")
	}
	if got := readFile(t, filepath.Join(a.SnapshotDir(), "out.txt")); got != "20260101_120000_1" {
		t.Errorf("run 1 snapshot = %q", got)
	}
	if got := readFile(t, filepath.Join(b.SnapshotDir(), "out.txt")); got != "20260101_120000_2" {
		t.Errorf("run 2 snapshot = %q", got)
	}
	// One run's agent cannot read the other run's files.
	_, err := readAs(a, filepath.Join(b.Dir(), "out.txt"))
	mustRefuse(t, err, "outside what you can access")
	_, err = readAs(a, filepath.Join(b.SnapshotDir(), "out.txt"))
	mustRefuse(t, err, "outside what you can access")
}

func TestSnapshot_CopyReplaceEmptyKeep(t *testing.T) {
	r, base := newRun(t)
	alice := newAgent(t, r, "alice", "agent1")
	bob := newAgent(t, r, "bob", "agent2")

	// Nothing yet: an empty workspace makes no snapshot.
	if err := alice.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(alice.SnapshotDir()); !os.IsNotExist(err) {
		t.Fatalf("empty workspace produced a snapshot: %v", err)
	}

	writeFile(t, filepath.Join(alice.Dir(), "a.txt"), "one")
	writeFile(t, filepath.Join(alice.Dir(), "src", "main.go"), "package main")
	writeFile(t, filepath.Join(base, "secret.txt"), "secret")
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(alice.Dir(), "abs_link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../secret.txt", filepath.Join(alice.Dir(), "src", "escaping_link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("main.go", filepath.Join(alice.Dir(), "src", "inner_link")); err != nil {
		t.Fatal(err)
	}
	if err := alice.Snapshot(); err != nil {
		t.Fatal(err)
	}
	snap := alice.SnapshotDir()
	if got := readFile(t, filepath.Join(snap, "src", "main.go")); got != "package main" {
		t.Errorf("snapshot main.go = %q", got)
	}
	if got := readFile(t, filepath.Join(snap, "src", "inner_link")); got != "package main" {
		t.Errorf("inner link not kept: %q", got)
	}
	for _, p := range []string{"abs_link", "src/escaping_link"} {
		if _, err := os.Lstat(filepath.Join(snap, p)); !os.IsNotExist(err) {
			t.Errorf("link %s leading out of the workspace was copied", p)
		}
	}
	// B9: the workspace keeps its files.
	if got := readFile(t, filepath.Join(alice.Dir(), "a.txt")); got != "one" {
		t.Errorf("workspace emptied: a.txt = %q", got)
	}
	// Bob reads it through his grants, by label.
	if got, err := readAs(bob, filepath.Join(r.SnapshotsDir(), "agent1", "a.txt")); err != nil || got != "one" {
		t.Errorf("bob reads %q, %v", got, err)
	}

	// A new snapshot replaces the old one entirely.
	if err := os.Remove(filepath.Join(alice.Dir(), "a.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(alice.Dir(), "b.txt"), "two")
	if err := alice.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(snap, "a.txt")); !os.IsNotExist(err) {
		t.Error("old file survived the new snapshot")
	}
	if got := readFile(t, filepath.Join(snap, "b.txt")); got != "two" {
		t.Errorf("b.txt = %q", got)
	}

	// An emptied workspace keeps the previous snapshot.
	left, _ := os.ReadDir(alice.Dir())
	for _, e := range left {
		if err := os.RemoveAll(filepath.Join(alice.Dir(), e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := alice.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(snap, "b.txt")); got != "two" {
		t.Errorf("empty workspace replaced the snapshot: b.txt = %q", got)
	}

	// Only labels appear under snapshots/, and staging is left clean.
	entries, _ := os.ReadDir(r.SnapshotsDir())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"agent1"}) {
		t.Errorf("snapshots/ holds %v, want [agent1]", names)
	}
	// Staging keeps replaced snapshots for readers still inside them, for retiredFor; a later
	// snapshot removes the older ones, Close the rest.
	staged, _ := os.ReadDir(r.stageDir)
	if len(staged) == 0 {
		t.Error("no replaced snapshot kept for readers")
	}
	defer setVar(&retiredFor, 0)()
	writeFile(t, filepath.Join(alice.Dir(), "c.txt"), "three")
	if err := alice.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if staged, _ := os.ReadDir(r.stageDir); len(staged) != 0 {
		t.Errorf("staging holds %d entries once they are older than retiredFor", len(staged))
	}
	if err := alice.Snapshot(); err != nil {
		t.Fatal(err)
	}
	setVar(&retiredFor, time.Hour)
	if err := alice.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if staged, _ := os.ReadDir(r.stageDir); len(staged) != 0 {
		t.Errorf("staging not cleaned after Close: %d entries", len(staged))
	}
}

// Readers never see a partial snapshot while it is being replaced.
func TestSnapshot_ConcurrentReaders(t *testing.T) {
	r, _ := newRun(t)
	alice := newAgent(t, r, "alice", "agent1")
	bob := newAgent(t, r, "bob", "agent2")
	writeFile(t, filepath.Join(alice.Dir(), "a.txt"), strings.Repeat("x", 1000))
	if err := alice.Snapshot(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 20 {
			if err := alice.Snapshot(); err != nil {
				t.Error(err)
			}
			time.Sleep(time.Millisecond) // answers, hence snapshots, are never back to back
		}
	})
	// Where the snapshot is swapped in one step, a reader never finds it missing.
	atomic := canExchange(t)
	p := filepath.Join(alice.SnapshotDir(), "a.txt")
	for range 200 {
		got, err := readAs(bob, p)
		if err == nil && len(got) != 1000 {
			t.Errorf("partial read: %d bytes", len(got))
			break
		}
		if err != nil && (atomic || !errors.Is(err, fs.ErrNotExist)) {
			t.Errorf("read during replacement: %v", err)
			break
		}
	}
	wg.Wait()
}

func TestCopyOut(t *testing.T) {
	r, base := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	writeFile(t, filepath.Join(a.Dir(), "dir", "f.txt"), "final")
	dst := filepath.Join(base, "logs", "final", "alice", "workspace")
	if err := a.CopyOut(dst); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dst, "dir", "f.txt")); got != "final" {
		t.Errorf("copied f.txt = %q", got)
	}
	writeFile(t, filepath.Join(a.Dir(), "dir", "f.txt"), "again")
	if err := a.CopyOut(dst); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dst, "dir", "f.txt")); got != "again" {
		t.Errorf("second CopyOut: f.txt = %q", got)
	}
	if err := a.CopyOut(filepath.Join(a.Dir(), "dir", "copy")); err == nil {
		t.Error("CopyOut into the workspace itself succeeded")
	}
}

// A conversation's next turn: every agent starts from a writable copy of the previous winner's
// workspace and sees the original read-only; the copy's path names no agent.
func TestCopyPrevious_SeedsEveryAgent(t *testing.T) {
	prevRun, base := newRun(t)
	winner := newAgent(t, prevRun, "alice", "agent1")
	writeFile(t, filepath.Join(winner.Dir(), "site", "index.html"), "<h1>v1</h1>")

	r, err := NewRun(filepath.Join(base, "workspaces"), "run1_turn_2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	prev, err := r.CopyPrevious(winner.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(prev, "alice") {
		t.Errorf("the previous turn's folder %s names the winner", prev)
	}
	for _, id := range []string{"alice", "bob"} {
		a := newAgent(t, r, id, map[string]string{"alice": "agent1", "bob": "agent2"}[id])
		if err := a.Seed(prev); err != nil {
			t.Fatal(err)
		}
		if err := a.SetContextPaths([]ContextPath{{Path: prev}}); err != nil {
			t.Fatal(err)
		}
		if got, err := readAs(a, "site/index.html"); err != nil || !strings.Contains(got, "v1") {
			t.Errorf("%s's seeded copy reads %q, %v", id, got, err)
		}
		if err := writeAs(a, "site/index.html", "<h1>"+id+"</h1>"); err != nil {
			t.Fatal(err)
		}
		if _, err := readAs(a, filepath.Join(prev, "site", "index.html")); err != nil {
			t.Fatal(err)
		}
		mustRefuse(t, writeAs(a, filepath.Join(prev, "site", "index.html"), "x"), "read-only")
	}
	if got := readFile(t, filepath.Join(prev, "site", "index.html")); got != "<h1>v1</h1>" {
		t.Errorf("the previous turn's copy changed: %q", got)
	}
	if _, err := r.Agent(previousName, "agent3"); err == nil {
		t.Errorf("agent id %q accepted", previousName)
	}
}

func TestShareText(t *testing.T) {
	r, _ := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	got := a.ShareText("see " + filepath.Join(a.Dir(), "app.py"))
	if want := "see " + filepath.Join(r.SnapshotsDir(), "agent1", "app.py"); got != want || strings.Contains(got, "alice") {
		t.Errorf("ShareText = %q, want %q", got, want)
	}
}

func TestSetContextPaths_Validation(t *testing.T) {
	r, base := newRun(t)
	a := newAgent(t, r, "alice", "agent1")
	writeFile(t, filepath.Join(base, "proj", "x"), "")
	cases := []ContextPath{
		{Path: filepath.Join(base, "missing")},
		{Path: "/"},
		{Path: "/proc"},
		{Path: filepath.Join(base, "proj"), Protected: []string{"../elsewhere"}},
	}
	for _, c := range cases {
		if err := a.SetContextPaths([]ContextPath{c}); err == nil {
			t.Errorf("SetContextPaths(%+v) succeeded", c)
		}
	}
	if err := a.SetContextPaths([]ContextPath{{Path: filepath.Join(base, "proj"), Protected: []string{"x", "not-yet"}}}); err != nil {
		t.Fatal(err)
	}
}

func TestMergeContextPaths_OrchestratorWins(t *testing.T) {
	got := MergeContextPaths(
		[]ContextPath{{Path: "/p", Write: false}},
		[]ContextPath{{Path: "/p/", Write: true}, {Path: "/q", Write: true}},
	)
	want := []ContextPath{{Path: "/p"}, {Path: "/q", Write: true}}
	if len(got) != 2 || got[0].Path != want[0].Path || got[0].Write || got[1].Path != "/q" {
		t.Errorf("MergeContextPaths = %+v, want %+v", got, want)
	}
}

// canExchange reports whether this machine swaps directories atomically in the test's temp dir.
func canExchange(t *testing.T) bool {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if os.Mkdir(a, 0o755) != nil || os.Mkdir(b, 0o755) != nil {
		t.Fatal("mkdir in temp dir")
	}
	return exchange(a, b) == nil
}

// setVar sets *p to v and returns what restores it.
func setVar[T any](p *T, v T) func() {
	old := *p
	*p = v
	return func() { *p = old }
}

// With write_mode the agent changes its copy of a writable context path, never the path
// itself, not even while it presents the final answer.
func TestContextPath_WithACopyStaysReadOnly(t *testing.T) {
	r, base := newRun(t)
	ctxDir := filepath.Join(base, "project")
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, r, "a", "agent1")
	cp := filepath.Join(a.Dir(), ".worktree", "ctx_1")
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.SetContextPaths([]ContextPath{{Path: ctxDir, Write: true, Copy: cp}}); err != nil {
		t.Fatal(err)
	}
	a.GrantFinal()
	if _, err := a.Resolve(filepath.Join(ctxDir, "f.txt"), Write); err == nil || !strings.Contains(err.Error(), "your own copy of it, "+cp) {
		t.Errorf("writing the context path: %v", err)
	}
	if _, err := a.Resolve(filepath.Join(cp, "f.txt"), Write); err != nil {
		t.Errorf("writing the copy: %v", err)
	}
	if h := a.Holdings(); !strings.Contains(h, "change your own copy of it, "+cp) {
		t.Errorf("holdings: %s", h)
	}
}
