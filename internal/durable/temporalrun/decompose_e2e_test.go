package temporalrun

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/app"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// decompositionTeam: three scripted agents with workspaces own one part each; the frontend
// and the backend both write README.md (differently), and the integrator presents. Without
// subtasks of their own, the task decomposer assigns them.
const decompositionTeam = `
agents:
  - id: frontend
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: ui/index.html, content: "<form></form>"}}
        - {name: write_file, args: {path: README.md, content: "Open ui/index.html."}}
      answers: ["The page is in ui/index.html."]
  - id: backend
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: api/server.go, content: "package api"}}
        - {name: write_file, args: {path: README.md, content: "Run go run ./api."}}
      answers: ["The API is in api/server.go."]
  - id: integrator
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: docs/usage.md, content: "Usage."}}
      answers: ["The docs are in docs/usage.md."]
      final: "All parts:\n{{parts}}"
orchestrator: {coordination_mode: decomposition, presenter_agent: integrator}
`

// TestSession_DecompositionAsLocally: on Temporal the decomposer assigns the subtasks on the
// worker holding the session, each agent stops when its part is done, the parts' files are
// gathered into the presenter's workspace there, and the session ends with the local run's
// subtasks, final answer, conflicts and final workspace.
func TestSession_DecompositionAsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	target, c, root := heldSessions(t, "decompose-test", &Activities{})
	cfg := loadTeam(t, decompositionTeam)
	local, err := app.Run(t.Context(), cfg, app.Options{Question: "What is the capital of France?", Logging: true,
		LogRoot: filepath.Join(root, "local"), WorkspaceRoot: filepath.Join(root, "local-ws")})
	if err != nil {
		t.Fatal(err)
	}
	remote := runLogged(t, cfg, filepath.Join(root, "remote"), remoteOn(c, target))
	if remote.ExitCode != 0 || remote.Winner != "integrator" || remote.EndReason != event.EndAllStopped {
		t.Fatalf("Temporal: %+v", remote.Result)
	}
	if remote.FinalAnswer != local.FinalAnswer {
		t.Errorf("final answer on Temporal:\n%s\nlocally:\n%s", remote.FinalAnswer, local.FinalAnswer)
	}
	type logged struct {
		subtasks []event.SubtasksAssigned
		parts    []event.PartsIntegrated
		stopped  map[string]bool // agents whose stop counted
	}
	read := func(dir string) logged {
		l := logged{stopped: map[string]bool{}}
		for _, e := range readLog(t, dir) {
			switch p := e.Payload.(type) {
			case event.SubtasksAssigned:
				l.subtasks = append(l.subtasks, p)
			case event.PartsIntegrated:
				l.parts = append(l.parts, p)
			case event.AgentStopped:
				if !p.Stale {
					l.stopped[p.Agent] = true
				}
			}
		}
		return l
	}
	lo, re := read(local.Dir), read(remote.Dir)
	if len(re.subtasks) != 1 || re.subtasks[0].Agent != "frontend" || !cmp.Equal(re.subtasks, lo.subtasks) {
		t.Errorf("subtasks on Temporal %+v, locally %+v", re.subtasks, lo.subtasks)
	}
	if len(re.parts) != 1 || len(re.parts[0].Conflicts) != 1 || !cmp.Equal(re.parts, lo.parts) {
		t.Errorf("parts on Temporal %+v, locally %+v", re.parts, lo.parts)
	}
	if len(re.stopped) != 3 {
		t.Errorf("stopped on Temporal: %v, want every agent", re.stopped)
	}
	ws := func(dir string) map[string]string {
		return workspaceFiles(t, filepath.Join(dir, "final", "integrator", "workspace"))
	}
	got, want := ws(remote.Dir), ws(local.Dir)
	if got["api/server.go"] != "package api" || !cmp.Equal(got, want) {
		t.Errorf("final workspace on Temporal differs from the local run's:\n%s", cmp.Diff(want, got))
	}
}

// TestSession_DecompositionKeepsConfiguredSubtasks: agents' own subtasks reach the workers,
// so no decomposer call is made for them, as locally.
func TestSession_DecompositionKeepsConfiguredSubtasks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	onTemporal := plainSessions(t, "subtasks-test")
	cfg := loadTeam(t, `
agents:
  - id: page
    subtask: Build the page.
    backend: {type: scripted, answers: ["The page."]}
  - id: api
    subtask: Build the API.
    backend: {type: scripted, answers: ["The API."]}
orchestrator: {coordination_mode: decomposition}
`)
	res := runLogged(t, cfg, t.TempDir(), onTemporal)
	if res.ExitCode != 0 || res.Winner != "api" {
		t.Fatalf("result %+v", res.Result)
	}
	for _, e := range readLog(t, res.Dir) {
		switch p := e.Payload.(type) {
		case event.ModelCalled:
			if p.Stage == provider.StageDecompose {
				t.Error("the decomposer was asked for subtasks the config gives")
			}
		case event.SubtasksAssigned:
			if len(p.Subtasks) != 2 || p.Subtasks[1].Text != "Build the API." || p.Subtasks[1].Source != event.SubtaskConfig {
				t.Errorf("subtasks %+v, want the config's", p.Subtasks)
			}
		}
	}
}
