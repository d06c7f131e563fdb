// Package workspacetest builds runs, agents and a fixture of context paths for the tests of
// the packages that work in an agent's workspace (the file tools, the commands).
package workspacetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// NewRun creates a run under a fresh temporary root (symlinks resolved), closed when the test
// ends, and returns it with that root.
func NewRun(t *testing.T) (*workspace.Run, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := workspace.NewRun(filepath.Join(base, "workspaces"), "run1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, base
}

// NewAgent adds the agent id with the label to r.
func NewAgent(t *testing.T, r *workspace.Run, id, label string) *workspace.Agent {
	t.Helper()
	a, err := r.Agent(id, label)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Fixture is a run with two agents, an outside directory and three context paths.
type Fixture struct {
	Run                  *workspace.Run
	Alice, Bob           *workspace.Agent
	Base, Outside        string
	Project, RW, CtxFile string // read context dir, write context dir, read context file
	BobSnapFile          string // a file of Bob's snapshot
}

// NewFixture builds the Fixture: Project is read-only; RW is writable for the final presenter,
// with locked.txt and locked_dir protected and a .git/config inside; CtxFile is a context path
// naming a file. Alice's workspace holds unread.txt, sub/f.txt and links leading outside.
func NewFixture(t *testing.T) *Fixture {
	t.Helper()
	r, base := NewRun(t)
	f := &Fixture{Run: r, Base: base, Outside: filepath.Join(base, "outside"),
		Project: filepath.Join(base, "project"), RW: filepath.Join(base, "rw"), CtxFile: filepath.Join(base, "single", "only.txt")}
	WriteFile(t, filepath.Join(f.Outside, "secret.txt"), "top secret")
	WriteFile(t, filepath.Join(f.Project, "readme.md"), "read me")
	WriteFile(t, filepath.Join(f.RW, "file.txt"), "rw file")
	WriteFile(t, filepath.Join(f.RW, "locked.txt"), "locked")
	WriteFile(t, filepath.Join(f.RW, "locked_dir", "inner.txt"), "inner")
	WriteFile(t, filepath.Join(f.RW, ".git", "config"), "[core]")
	WriteFile(t, f.CtxFile, "only")
	WriteFile(t, filepath.Join(base, "single", "sibling.txt"), "sibling")
	f.Alice = NewAgent(t, r, "alice", "agent1")
	f.Bob = NewAgent(t, r, "bob", "agent2")
	ctx := []workspace.ContextPath{
		{Path: f.Project},
		{Path: f.RW, Write: true, Protected: []string{"locked.txt", "locked_dir"}},
		{Path: f.CtxFile},
	}
	for _, a := range []*workspace.Agent{f.Alice, f.Bob} {
		if err := a.SetContextPaths(ctx); err != nil {
			t.Fatal(err)
		}
	}
	WriteFile(t, filepath.Join(f.Bob.Dir(), "notes.md"), "bob's notes")
	if err := f.Bob.Snapshot(); err != nil {
		t.Fatal(err)
	}
	f.BobSnapFile = filepath.Join(r.SnapshotsDir(), "agent2", "notes.md")
	ws := f.Alice.Dir()
	WriteFile(t, filepath.Join(ws, "unread.txt"), "never read")
	WriteFile(t, filepath.Join(ws, "sub", "f.txt"), "inside")
	for link, target := range map[string]string{
		"link_file":     filepath.Join(f.Outside, "secret.txt"),
		"link_dir":      f.Outside,
		"rel_link_dir":  "../../../../outside",
		"dangling":      filepath.Join(f.Outside, "new.txt"),
		"link_to_bobws": f.Bob.Dir(),
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// Run calls tl with args marshalled to JSON.
func Run(t *testing.T, tl tool.Tool, args map[string]any) tool.Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Run(t.Context(), string(b))
}

// MustOK returns the content of r, failing the test when r is an error.
func MustOK(t *testing.T, r tool.Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", r.Content)
	}
	return r.Content
}

// MustFail fails the test unless r is an error containing want.
func MustFail(t *testing.T, r tool.Result, want string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want an error containing %q, got success: %s", want, r.Content)
	}
	if !strings.Contains(r.Content, want) {
		t.Fatalf("error %q does not contain %q", r.Content, want)
	}
}

// WriteFile writes content to p, creating its parents.
func WriteFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of p.
func ReadFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
