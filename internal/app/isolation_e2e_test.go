package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
)

// isoGit runs the test's own git in dir.
func isoGit(t *testing.T, dir string, args ...string) string {
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

func isoRead(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// isoProject is a folder with a.txt and b.txt, a git repository with them committed when repo.
func isoProject(t *testing.T, repo bool) string {
	t.Helper()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for n, c := range map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if repo {
		isoGit(t, dir, "init", "-q")
		isoGit(t, dir, "add", "-A")
		isoGit(t, dir, "commit", "-q", "-m", "start")
	}
	return dir
}

// isoTeam: agent1 changes a.txt and b.txt in its copy, agent2 changes a.txt otherwise and adds
// loser.txt; both vote for agent1, which presents verbatim.
func isoTeam(t *testing.T, project, coordination, latency string) *config.Config {
	t.Helper()
	cfg, rep := config.Parse("iso.yaml", []byte(fmt.Sprintf(`
agents:
  - id: one
    backend:
      type: scripted
      latency: %[3]s
      tool_calls:
        - {name: write_file, args: {path: .worktree/ctx_1/a.txt, content: "a by agent1\n"}}
        - {name: write_file, args: {path: .worktree/ctx_1/b.txt, content: "b by agent1\n"}}
      answers: ["Changed a and b."]
      vote: agent1
  - id: two
    backend:
      type: scripted
      latency: %[3]s
      tool_calls:
        - {name: write_file, args: {path: .worktree/ctx_1/a.txt, content: "a by agent2\n"}}
        - {name: write_file, args: {path: .worktree/ctx_1/loser.txt, content: "agent2\n"}}
      answers: ["Changed a, added loser."]
      vote: agent1
orchestrator:
  final_presentation: verbatim
  context_paths: [{path: %[1]q, permission: write}]
  coordination: {%[2]s}
`, project, coordination, latency)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return cfg
}

func isoWorktrees(t *testing.T, repo string) int {
	return strings.Count(isoGit(t, repo, "worktree", "list", "--porcelain"), "worktree ")
}

// statuses collects the writes statuses of a run.
type statuses struct {
	mu  sync.Mutex
	got []string
	on  func(event.Event)
}

func (s *statuses) Handle(e event.Event) {
	if p, ok := e.Payload.(event.ToolServerStatus); ok && p.Server == event.ServerWrites {
		s.mu.Lock()
		s.got = append(s.got, p.Status+": "+p.Detail)
		s.mu.Unlock()
	}
	if s.on != nil {
		s.on(e)
	}
}

func (s *statuses) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.got, "\n")
}

// Two agents change the same folder; only the winner's changes reach it, and no copy is left.
func TestE2E_IsolatedWrites_OnlyTheWinnersChangesLand(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		repo       bool
	}{
		{"git worktrees", "worktree", true},
		{"auto in a repository", "auto", true},
		{"copies outside a repository", "auto", false},
		{"isolated copies of a repository", "isolated", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project, root := isoProject(t, tc.repo), t.TempDir()
			st := &statuses{}
			res, err := Run(t.Context(), isoTeam(t, project, "write_mode: "+tc.mode, "0s"), Options{Question: "q", Logging: true,
				LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{st}})
			if err != nil || res.ExitCode != 0 || res.Winner != "one" {
				t.Fatalf("run: %+v %v", res.Result, err)
			}
			for n, want := range map[string]string{"a.txt": "a by agent1\n", "b.txt": "b by agent1\n", "loser.txt": "<missing>"} {
				if got := isoRead(filepath.Join(project, n)); got != want {
					t.Errorf("%s: %q, want %q", n, got, want)
				}
			}
			if s := st.text(); !strings.Contains(s, "isolated: "+project) || !strings.Contains(s, "applied: "+project+": applied 2 (a.txt, b.txt)") {
				t.Errorf("statuses:\n%s", s)
			}
			if tc.repo && isoWorktrees(t, project) != 1 {
				t.Errorf("worktrees left:\n%s", isoGit(t, project, "worktree", "list"))
			}
			assertNoCopies(t, filepath.Join(root, "ws"))
		})
	}
}

// assertNoCopies fails when an agent's copy is left in a workspace.
func assertNoCopies(t *testing.T, wsRoot string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(wsRoot, "*", "*", "workspace", ".worktree", "ctx_*"))
	state, _ := filepath.Glob(filepath.Join(wsRoot, "*", ".isolation", "*"))
	if len(matches)+len(state) > 0 {
		t.Errorf("left behind: %v %v", matches, state)
	}
}

// The user edits the folder during the run: each drift_conflict_policy.
func TestE2E_IsolatedWrites_DriftDuringTheRun(t *testing.T) {
	for _, tc := range []struct {
		policy       string
		code         int
		wantA, wantB string
		status       string
	}{
		{"skip", 0, "user\n", "b by agent1\n", "applied, drifted files skipped: "},
		{"prefer_presenter", 0, "a by agent1\n", "b by agent1\n", "applied: "},
		{"fail", 2, "user\n", "b0\n", "conflict: "},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			project, root := isoProject(t, true), t.TempDir()
			var once sync.Once
			st := &statuses{on: func(e event.Event) {
				if _, ok := e.Payload.(event.AnswerSubmitted); ok {
					once.Do(func() { _ = os.WriteFile(filepath.Join(project, "a.txt"), []byte("user\n"), 0o644) })
				}
			}}
			res, err := Run(t.Context(), isoTeam(t, project, "write_mode: worktree, drift_conflict_policy: "+tc.policy, "0s"),
				Options{Question: "q", Logging: true, LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{st}})
			if err != nil || res.ExitCode != tc.code {
				t.Fatalf("run: %+v %v", res.Result, err)
			}
			if got := isoRead(filepath.Join(project, "a.txt")); got != tc.wantA {
				t.Errorf("a.txt %q, want %q", got, tc.wantA)
			}
			if got := isoRead(filepath.Join(project, "b.txt")); got != tc.wantB {
				t.Errorf("b.txt %q, want %q", got, tc.wantB)
			}
			if s := st.text(); !strings.Contains(s, tc.status) || !strings.Contains(s, "a.txt") {
				t.Errorf("statuses:\n%s", s)
			}
			if tc.code != 0 {
				if res.Err == nil || !strings.Contains(res.Err.Error(), "drift_conflict_policy is fail (a.txt)") {
					t.Errorf("error: %v", res.Err)
				}
				status := isoRead(filepath.Join(res.Dir, "status.json"))
				if !strings.Contains(status, "drift_conflict_policy is fail") {
					t.Errorf("status.json does not tell the conflict:\n%s", status)
				}
				kept := filepath.Join(res.Dir, "final", "one", "workspace", ".worktree", "ctx_1", "a.txt")
				if isoRead(kept) != "a by agent1\n" {
					t.Errorf("the presenter's copy is not in the log: %s", kept)
				}
			}
			if isoWorktrees(t, project) != 1 {
				t.Errorf("worktrees left:\n%s", isoGit(t, project, "worktree", "list"))
			}
			assertNoCopies(t, filepath.Join(root, "ws"))
		})
	}
}

// Ctrl-C during coordination: no copy is left and the folder is untouched.
func TestE2E_IsolatedWrites_CancellationLeavesNothing(t *testing.T) {
	project, root := isoProject(t, true), t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st := &statuses{on: func(e event.Event) {
		if p, ok := e.Payload.(event.ToolResult); ok && p.Tool == "write_file" {
			cancel() // the agents have started changing their copies
		}
	}}
	res, err := Run(ctx, isoTeam(t, project, "write_mode: worktree", "200ms"), Options{Question: "q", Logging: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{st}})
	if err != nil || res.ExitCode != 4 {
		t.Fatalf("run: %+v %v", res.Result, err)
	}
	for n, want := range map[string]string{"a.txt": "a0\n", "b.txt": "b0\n", "loser.txt": "<missing>"} {
		if got := isoRead(filepath.Join(project, n)); got != want {
			t.Errorf("%s: %q, want %q", n, got, want)
		}
	}
	if out := isoGit(t, project, "status", "--porcelain"); out != "" {
		t.Errorf("the folder changed:\n%s", out)
	}
	if isoWorktrees(t, project) != 1 {
		t.Errorf("worktrees left:\n%s", isoGit(t, project, "worktree", "list"))
	}
	assertNoCopies(t, filepath.Join(root, "ws"))
}
