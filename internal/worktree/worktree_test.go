package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gitT runs the test's own git (the setup, trusted) in dir.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// newRepo makes a repository with a commit: a.txt, b.txt, a tracked .env and .gitignore
// (build/), then changes b.txt and adds c.txt and build/out without committing.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	gitT(t, dir, "init", "-q")
	write(t, filepath.Join(dir, "a.txt"), "a0\n")
	write(t, filepath.Join(dir, "b.txt"), "b0\n")
	write(t, filepath.Join(dir, ".env"), "SECRET=1\n")
	write(t, filepath.Join(dir, ".gitignore"), "build/\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "start")
	write(t, filepath.Join(dir, "b.txt"), "b1 uncommitted\n")
	write(t, filepath.Join(dir, "c.txt"), "c untracked\n")
	write(t, filepath.Join(dir, "build", "out"), "ignored\n")
	return dir
}

func worktrees(t *testing.T, repo string) []string {
	var out []string
	for line := range strings.Lines(gitT(t, repo, "worktree", "list", "--porcelain")) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "worktree "); ok {
			out = append(out, p)
		}
	}
	return out
}

func TestWorktree_TheAgentsCopyIsTheFolderAndOnlyTheAppliedOneLands(t *testing.T) {
	for _, mode := range []string{ModeAuto, ModeWorktree, ModeIsolated} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			repo, run := newRepo(t), t.TempDir()
			s, err := Open(ctx, repo, mode, filepath.Join(run, "state"), nil)
			if err != nil {
				t.Fatal(err)
			}
			wantKind := kindWorktree
			if mode == ModeIsolated {
				wantKind = kindCopy
			}
			if s.st.Kind != wantKind {
				t.Fatalf("kind %s, want %s", s.st.Kind, wantKind)
			}
			c1, err := s.Tree(ctx, "a1", filepath.Join(run, "a1", ".worktree", "ctx_1"))
			if err != nil {
				t.Fatal(err)
			}
			c2, err := s.Tree(ctx, "a2", filepath.Join(run, "a2", ".worktree", "ctx_1"))
			if err != nil {
				t.Fatal(err)
			}
			ignored := "<missing>" // a worktree leaves ignored files out; a copy is of the whole folder
			if mode == ModeIsolated {
				ignored = "ignored\n"
			}
			for _, c := range []string{c1, c2} {
				for name, want := range map[string]string{"a.txt": "a0\n", "b.txt": "b1 uncommitted\n", "c.txt": "c untracked\n",
					".env": "<missing>", "build/out": ignored} {
					if got := read(t, filepath.Join(c, name)); got != want {
						t.Errorf("%s in the copy: %q, want %q", name, got, want)
					}
				}
			}
			write(t, filepath.Join(c1, "a.txt"), "a by agent1\n")
			if err := os.Remove(filepath.Join(c1, "c.txt")); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(c1, "new", "n.txt"), "new by agent1\n")
			write(t, filepath.Join(c2, "a.txt"), "a by agent2\n")
			write(t, filepath.Join(c2, "loser.txt"), "agent2\n")

			r := s.Apply(ctx, "a1", PolicySkip, nil)
			if r.Err != nil || r.Conflict || len(r.Drifted) > 0 {
				t.Fatalf("apply: %+v", r)
			}
			if want := []string{"a.txt", "c.txt", "new/n.txt"}; !slices.Equal(r.Applied, want) {
				t.Errorf("applied %v, want %v", r.Applied, want)
			}
			for name, want := range map[string]string{"a.txt": "a by agent1\n", "c.txt": "<missing>", "new/n.txt": "new by agent1\n",
				"loser.txt": "<missing>", "b.txt": "b1 uncommitted\n", ".env": "SECRET=1\n", "build/out": "ignored\n"} {
				if got := read(t, filepath.Join(repo, name)); got != want {
					t.Errorf("%s in the folder: %q, want %q", name, got, want)
				}
			}
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if got := worktrees(t, repo); !slices.Equal(got, []string{repo}) {
				t.Errorf("worktrees left: %v", got)
			}
			for _, p := range []string{filepath.Join(run, "a1", ".worktree", "ctx_1"), filepath.Join(run, "a2", ".worktree", "ctx_1"), filepath.Join(run, "state")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s is left", p)
				}
			}
			if out := gitT(t, repo, "branch", "--list"); strings.Count(out, "\n") != 1 {
				t.Errorf("branches made: %q", out)
			}
		})
	}
}

func TestCopy_AFolderOutsideAnyRepository(t *testing.T) {
	ctx := context.Background()
	dir, run := t.TempDir(), t.TempDir()
	write(t, filepath.Join(dir, "x.txt"), "x0\n")
	write(t, filepath.Join(dir, "sub", "y.txt"), "y0\n")
	write(t, filepath.Join(dir, "id_rsa"), "KEY\n")
	write(t, filepath.Join(dir, ".massgen", "workspaces", "w"), "private\n")
	s, err := Open(ctx, dir, ModeWorktree, filepath.Join(run, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if s.st.Kind != kindCopy || !strings.Contains(s.Describe(), "not in a git repository") {
		t.Fatalf("kind %s, %s", s.st.Kind, s.Describe())
	}
	c, err := s.Tree(ctx, "a1", filepath.Join(run, "a1"))
	if err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(c, "id_rsa")) != "<missing>" || read(t, filepath.Join(c, ".massgen", "workspaces", "w")) != "<missing>" {
		t.Error("a secret or massgen's own folder was copied")
	}
	write(t, filepath.Join(c, "sub", "y.txt"), "y1\n")
	write(t, filepath.Join(c, "id_rsa"), "agent key\n")
	r := s.Apply(ctx, "a1", PolicySkip, nil)
	if r.Err != nil || !slices.Equal(r.Applied, []string{"sub/y.txt"}) {
		t.Fatalf("apply: %+v", r)
	}
	if read(t, filepath.Join(dir, "sub", "y.txt")) != "y1\n" || read(t, filepath.Join(dir, "id_rsa")) != "KEY\n" {
		t.Error("the folder is not as it should be")
	}
}

// Drift: the user changes the folder while the agents work.
func TestApply_DriftUnderEachPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy            string
		wantA, wantB      string
		applied, conflict bool
	}{
		{PolicySkip, "user\n", "agent b\n", true, false},
		{PolicyPreferPresenter, "agent a\n", "agent b\n", true, false},
		{PolicyFail, "user\n", "b0\n", false, true},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			ctx := context.Background()
			dir, run := t.TempDir(), t.TempDir()
			write(t, filepath.Join(dir, "a.txt"), "a0\n")
			write(t, filepath.Join(dir, "b.txt"), "b0\n")
			write(t, filepath.Join(dir, "same.txt"), "s0\n")
			s, err := Open(ctx, dir, ModeIsolated, filepath.Join(run, "state"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			c, err := s.Tree(ctx, "a1", filepath.Join(run, "a1"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(c, "a.txt"), "agent a\n")
			write(t, filepath.Join(c, "b.txt"), "agent b\n")
			write(t, filepath.Join(c, "same.txt"), "same\n")
			write(t, filepath.Join(dir, "a.txt"), "user\n")    // drift
			write(t, filepath.Join(dir, "same.txt"), "same\n") // changed, but to what the agent wants
			r := s.Apply(ctx, "a1", tc.policy, nil)
			if r.Err != nil || r.Conflict != tc.conflict || !slices.Equal(r.Drifted, []string{"a.txt"}) {
				t.Fatalf("report %+v", r)
			}
			if got := read(t, filepath.Join(dir, "a.txt")); got != tc.wantA {
				t.Errorf("a.txt %q, want %q", got, tc.wantA)
			}
			if got := read(t, filepath.Join(dir, "b.txt")); got != tc.wantB {
				t.Errorf("b.txt %q, want %q", got, tc.wantB)
			}
			if !strings.Contains(r.Summary(), "a.txt") {
				t.Errorf("the summary does not name the drifted file: %s", r.Summary())
			}
		})
	}
}

// A run killed with SIGKILL leaves its copies; the process that takes it over reuses them and
// removes them at its end.
func TestOpen_TakesOverTheStateOfAKilledRun(t *testing.T) {
	ctx := context.Background()
	repo, run := newRepo(t), t.TempDir()
	state, tree := filepath.Join(run, "state"), filepath.Join(run, "a1", ".worktree", "ctx_1")
	s, err := Open(ctx, repo, ModeAuto, state, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Tree(ctx, "a1", tree)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(c, "a.txt"), "before the kill\n")
	write(t, filepath.Join(repo, "a.txt"), "user meanwhile\n")
	// (no Close: the process died)

	s2, err := Open(ctx, repo, ModeAuto, state, nil)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := s2.Tree(ctx, "a1", tree)
	if err != nil || c2 != c || read(t, filepath.Join(c2, "a.txt")) != "before the kill\n" {
		t.Fatalf("the copy was not reused: %s %v", c2, err)
	}
	r := s2.Apply(ctx, "a1", PolicySkip, nil)
	if !slices.Equal(r.Drifted, []string{"a.txt"}) {
		t.Errorf("the base was not kept across the takeover: %+v", r)
	}
	if err := s2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := worktrees(t, repo); !slices.Equal(got, []string{repo}) {
		t.Errorf("worktrees left: %v", got)
	}
}

// A context path below the top of its repository: the copy is that folder in the worktree.
func TestWorktree_ASubfolderOfARepository(t *testing.T) {
	ctx := context.Background()
	repo, run := newRepo(t), t.TempDir()
	write(t, filepath.Join(repo, "pkg", "p.txt"), "p0\n")
	gitT(t, repo, "add", "pkg")
	s, err := Open(ctx, filepath.Join(repo, "pkg"), ModeAuto, filepath.Join(run, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	c, err := s.Tree(ctx, "a1", filepath.Join(run, "a1"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(c) != "pkg" || read(t, filepath.Join(c, "p.txt")) != "p0\n" {
		t.Fatalf("copy %s", c)
	}
	write(t, filepath.Join(c, "p.txt"), "p1\n")
	write(t, filepath.Join(c, "..", "a.txt"), "outside the context path\n")
	r := s.Apply(ctx, "a1", PolicySkip, nil)
	if r.Err != nil || !slices.Equal(r.Applied, []string{"p.txt"}) || read(t, filepath.Join(repo, "a.txt")) != "a0\n" {
		t.Fatalf("report %+v", r)
	}
}

func TestApply_ProtectedPathsNeverLand(t *testing.T) {
	ctx := context.Background()
	dir, run := t.TempDir(), t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	write(t, filepath.Join(dir, "keep", "k.txt"), "k0\n")
	s, err := Open(ctx, dir, ModeIsolated, filepath.Join(run, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	c, err := s.Tree(ctx, "a1", filepath.Join(run, "a1"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(c, "keep", "k.txt"), "changed\n")
	r := s.Apply(ctx, "a1", PolicySkip, []string{filepath.Join(dir, "keep")})
	if !slices.Equal(r.Refused, []string{"keep/k.txt"}) || read(t, filepath.Join(dir, "keep", "k.txt")) != "k0\n" {
		t.Fatalf("report %+v", r)
	}
}

func TestOpen_RefusesAHugeFolder(t *testing.T) {
	old := MaxFiles
	MaxFiles = 3
	t.Cleanup(func() { MaxFiles = old })
	dir := t.TempDir()
	for _, n := range []string{"1", "2", "3", "4"} {
		write(t, filepath.Join(dir, n), n)
	}
	_, err := Open(context.Background(), dir, ModeIsolated, filepath.Join(t.TempDir(), "state"), nil)
	if err == nil || !strings.Contains(err.Error(), "more than 3 files") || !strings.Contains(err.Error(), "write_mode: legacy") {
		t.Fatalf("err %v", err)
	}
}
