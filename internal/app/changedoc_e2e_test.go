package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
)

// enable_changedoc (on by default): an agent's tasks/changedoc.md travels with its answer, its
// [SELF] written as the answer's label; the peers read it in <changedoc> tags; the log keeps it
// beside the answer and the final one in final/<winner>/changedoc.md. Off, none of that.
func TestRun_ChangedocTravelsWithTheAnswer(t *testing.T) {
	const team = `
agents:
  - id: writer
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: tasks/changedoc.md, content: "# Change Document\n### DEC-001: cache\n**Origin:** [SELF] NEW"}}
      answers: ["Use a cache."]
      vote: agent1
  - id: reader
    backend: {type: scripted, cwd: ws, answers: ["Other."], vote: agent1}
`
	for _, tc := range []struct {
		name, extra string
		on          bool
	}{
		{"default", "", true},
		{"off", "orchestrator: {coordination: {enable_changedoc: false}}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := config.Parse("cd.yaml", []byte(team+tc.extra))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			root := t.TempDir()
			res, err := Run(t.Context(), cfg, Options{Question: "How to make it fast?", Logging: true,
				LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws")})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("run: %+v %v", res.Result, err)
			}
			events, err := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			log := string(events)
			shown := `<changedoc>\n# Change Document\n### DEC-001: cache\n**Origin:** agent1.1 NEW\n</changedoc>\n<end of agent1>`
			journal := "keep a decision journal in your workspace at tasks/changedoc.md"
			if got := strings.Contains(log, shown); got != tc.on {
				t.Errorf("the peers read the journal with [SELF] as agent1.1: %v, want %v", got, tc.on)
			}
			if got := strings.Contains(strings.ToLower(log), strings.ToLower(journal)); got != tc.on {
				t.Errorf("the system prompt asks for a journal: %v, want %v", got, tc.on)
			}
			saved, _ := filepath.Glob(filepath.Join(res.Dir, "writer", "*", "changedoc.md"))
			final, ferr := os.ReadFile(filepath.Join(res.Dir, "final", "writer", "changedoc.md"))
			if !tc.on {
				if len(saved) != 0 || ferr == nil {
					t.Errorf("journals saved with enable_changedoc off: %v, final %q", saved, final)
				}
				return
			}
			if len(saved) != 1 {
				t.Fatalf("the answer's changedoc.md: %v", saved)
			}
			if b, _ := os.ReadFile(saved[0]); !strings.Contains(string(b), "**Origin:** agent1.1 NEW") {
				t.Errorf("%s = %q", saved[0], b)
			}
			// The scripted presenter leaves its journal as it was: [SELF] is the final label.
			if ferr != nil || !strings.Contains(string(final), "**Origin:** agent1.final NEW") {
				t.Errorf("final/writer/changedoc.md = %q, %v", final, ferr)
			}
		})
	}
}
