package app

import (
	"os"
	"path/filepath"
	"testing"

	"massgen/internal/config"
)

// Each answer's workspace is in the log folder under the answer's label, as it was when the
// answer was given: agent1.1 before the improvement, agent1.2 after it.
func TestRun_LogsEveryAnswersWorkspace(t *testing.T) {
	cfg, rep := config.Parse("snap.yaml", []byte(`
agents:
  - id: writer
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: notes.md, content: "first"}}
      answers: ["First.", "Second, after reading the others."]
      improve_after: 2
      vote: agent1
  - id: other
    backend: {type: scripted, answers: ["Other."], vote: agent1}
orchestrator: {final_presentation: verbatim, end_when_decided: false} # the improvement lands
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	res, err := Run(t.Context(), cfg, Options{Question: "q", Logging: true, LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws")})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %+v %v", res.Result, err)
	}
	for _, label := range []string{"agent1.1", "agent1.2"} {
		if b, err := os.ReadFile(filepath.Join(res.Dir, "snapshots", label, "notes.md")); err != nil || string(b) != "first" {
			t.Errorf("snapshots/%s/notes.md = %q, %v", label, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "snapshots", "agent2.1")); err == nil {
		t.Error("an agent without a workspace has a snapshot folder")
	}
}
