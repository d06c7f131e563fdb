package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A repository's configuration is anyone's: it may name programs for git to run (an fsmonitor,
// hooks, filter and diff drivers, also through a conditional include that only a worktree
// matches). Isolating, applying and removing must run none of them.
func TestAttack_TheRepositorysProgramsNeverRun(t *testing.T) {
	ctx := context.Background()
	repo, run := t.TempDir(), t.TempDir()
	repo, _ = filepath.EvalSymlinks(repo)
	gitT(t, repo, "init", "-q")
	write(t, filepath.Join(repo, "a.txt"), "a0\n")
	write(t, filepath.Join(repo, "b.bin"), "b0\n")
	write(t, filepath.Join(repo, ".gitattributes"), "* filter=evil diff=evil\n*.txt filter=evil2\n")
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "start")

	fired := t.TempDir()
	script := filepath.Join(t.TempDir(), "evil.sh")
	write(t, script, fmt.Sprintf("#!/bin/sh\ntouch %s/\"$(basename \"$0\")-$$\"\ncat\n", fired))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := t.TempDir()
	for _, h := range []string{"post-checkout", "reference-transaction", "post-index-change"} {
		for _, d := range []string{hooks, filepath.Join(repo, ".git", "hooks")} {
			write(t, filepath.Join(d, h), fmt.Sprintf("#!/bin/sh\nexec %s\n", script))
			if err := os.Chmod(filepath.Join(d, h), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	extra := filepath.Join(t.TempDir(), "extra.cfg")
	write(t, extra, fmt.Sprintf("[filter \"evil2\"]\n\tclean = %[1]s\n\tsmudge = %[1]s\n\trequired = true\n", script))
	for _, kv := range [][2]string{
		{"core.fsmonitor", script},
		{"core.hooksPath", hooks},
		{"filter.evil.clean", script},
		{"filter.evil.smudge", script},
		{"filter.evil.required", "true"},
		{"diff.evil.textconv", script},
		{"includeIf.gitdir:**/worktrees/**.path", extra},
	} {
		gitT(t, repo, "config", kv[0], kv[1])
	}
	write(t, filepath.Join(repo, "a.txt"), "a1 uncommitted\n")

	firedCount := func() int {
		entries, _ := os.ReadDir(fired)
		return len(entries)
	}
	// The setup is live: plain git runs the programs.
	gitT(t, repo, "status", "--short")
	if firedCount() == 0 {
		t.Fatal("the setup is wrong: plain git status ran none of the repository's programs")
	}
	if err := os.RemoveAll(fired); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(fired, 0o755); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, repo, ModeWorktree, filepath.Join(run, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.st.Kind != kindWorktree {
		t.Fatalf("kind %s", s.st.Kind)
	}
	c, err := s.Tree(ctx, "a1", filepath.Join(run, "a1", ".worktree", "ctx_1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(c, "a.txt")); got != "a1 uncommitted\n" {
		t.Errorf("a.txt in the worktree: %q", got)
	}
	write(t, filepath.Join(c, "a.txt"), "agent\n")
	write(t, filepath.Join(c, "n.bin"), "new\n")
	r := s.Apply(ctx, "a1", PolicySkip, nil)
	if r.Err != nil || len(r.Applied) != 2 {
		t.Errorf("apply: %+v", r)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := firedCount(); n > 0 {
		entries, _ := os.ReadDir(fired)
		t.Fatalf("the repository's programs ran %d time(s): %v", n, entries)
	}
}
