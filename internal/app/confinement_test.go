package app

import (
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/childproc"
	"massgen/internal/config"
	"massgen/internal/event"
)

// TestRun_ReportsWeakerConfinementOfCommands: where user namespaces are unavailable, a team
// with execute_command is told so once, however many agents have commands; where they work,
// nothing is said.
func TestRun_ReportsWeakerConfinementOfCommands(t *testing.T) {
	if ok, _ := childproc.Confinement(); !ok {
		t.Skip("user namespaces are unavailable here: the namespaced case cannot be checked")
	}
	yaml := `
agents:
  - id: a
    backend: {type: scripted, cwd: ws, enable_mcp_command_line: true, answers: ["A."], vote: agent1}
  - id: b
    backend: {type: scripted, cwd: ws, enable_mcp_command_line: true, answers: ["B."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`
	for _, tc := range []struct {
		name      string
		disable   bool
		wantNotes int
	}{
		{"namespaces", false, 0},
		{"fallback", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.disable {
				defer childproc.DisableNamespaces()()
			}
			cfg, rep := config.Parse("team.yaml", []byte(yaml))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			root := t.TempDir()
			res, err := Run(t.Context(), cfg, Options{Question: "Q?", Logging: true,
				LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws")})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			notes := 0
			for _, e := range evs {
				if s, ok := e.Payload.(event.ToolServerStatus); ok && s.Server == event.ServerCommands {
					notes++
					if !strings.Contains(s.Detail, "user namespaces are unavailable") {
						t.Errorf("the note does not say why: %q", s.Detail)
					}
				}
			}
			if notes != tc.wantNotes {
				t.Errorf("%d confinement notes, want %d", notes, tc.wantNotes)
			}
		})
	}
}
