package app

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"massgen/internal/config"
)

// A session's log folder and workspaces hold every prompt, answer and file the agents saw:
// with the usual umask 022 every folder massgen makes there is 0700 and every file 0600,
// snapshots, copies, the permission ledger and the debug log included.
func TestRun_LogsAndWorkspacesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	cfg, rep := config.Parse("private.yaml", []byte(`
agents:
  - id: writer
    backend:
      type: scripted
      cwd: ws
      permissions: {rules: {allow: ["write_file(./**)"]}}
      tool_calls:
        - {name: create_directory, args: {path: src/pkg}}
        - {name: write_file, args: {path: src/pkg/notes.md, content: "first"}}
        - {name: copy_file, args: {source: src, destination: copy}}
      answers: ["First.", "Second, after reading the others."]
      improve_after: 2
      vote: agent1
  - id: other
    backend: {type: scripted, cwd: ws2, answers: ["Other."], vote: agent1}
orchestrator: {final_presentation: verbatim, end_when_decided: false} # agent1.2 lands before the end
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	res, err := Run(t.Context(), cfg, Options{Question: "q", Logging: true, Debug: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws")})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %+v %v", res.Result, err)
	}
	var files, dirs int
	for _, tree := range []string{"logs", "ws"} {
		err := filepath.WalkDir(filepath.Join(root, tree), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			switch perm := info.Mode().Perm(); {
			case d.IsDir():
				dirs++
				if perm != 0o700 {
					t.Errorf("folder %s is %v, want drwx------", p, info.Mode())
				}
			case info.Mode().IsRegular():
				files++
				if perm != 0o600 {
					t.Errorf("file %s is %v, want -rw-------", p, info.Mode())
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// What the walk must have met, so that it cannot pass on an empty tree.
	for _, p := range []string{"snapshots/agent1.2/copy/pkg/notes.md", "massgen_debug.log", "approvals/ledger.jsonl", "status.json"} {
		if m, _ := filepath.Glob(filepath.Join(res.Dir, p)); len(m) == 0 {
			t.Errorf("the log has no %s", p)
		}
	}
	t.Logf("%d folders, %d files checked", dirs, files)
}
