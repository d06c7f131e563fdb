package web

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/app"
	"massgen/internal/config"
)

// pagesTeam: the writer's workspace gets notes.md; the idle agent's stays empty, so its answer
// leaves an empty snapshot folder in the log.
const pagesTeam = `agents:
  - id: writer
    backend:
      type: scripted
      latency: 0s
      cwd: ws1
      tool_calls:
        - {name: write_file, args: {path: notes.md, content: "# Notes\n"}}
      answers: ["The notes are in notes.md."]
      vote: longest
  - id: idle
    backend: {type: scripted, latency: 0s, cwd: ws2, answers: ["Nothing written."], vote: longest}
`

// TestE2E_StudioPages drives single pages in chromium (e2e/pages.mjs): the Files tab without
// empty folders, links between the turns of a session, the session list and tabs on a
// 390 px phone, and the setup wizard's team name rule and team list.
func TestE2E_StudioPages(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test takes about 15 s")
	}
	node, env := nodeEnv(t, []string{"playwright-core"}, true)
	const token = "e2e-pages-token"
	tmp := t.TempDir()
	root := filepath.Join(tmp, "logs")
	opts := Options{
		Teams:   map[string]*config.Config{"pages": loadTeam(t, "pages", pagesTeam)},
		LogRoot: root, Token: token, Version: "e2e", SetupDir: filepath.Join(tmp, "configs"),
		Run: func(ctx context.Context, cfg *config.Config, o app.Options) (app.Result, error) {
			o.WorkspaceRoot = filepath.Join(tmp, "workspaces")
			return app.Run(ctx, cfg, o)
		},
	}
	_, addr := serveListener(t, opts)
	shots := os.Getenv("MASSGEN_E2E_ARTIFACTS")
	if shots == "" {
		shots = filepath.Join(tmp, "shots")
	}
	shots = filepath.Join(shots, "pages")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	out := runNode(t, node, env, "internal/web/e2e/pages.mjs", "http://"+addr+"/?token="+token, shots)
	var res struct{ Turn1, Turn2 string }
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("script output %q: %v", out, err)
	}
	// Both turns are of one session, each with its log.
	if log1, _, _ := strings.Cut(res.Turn1, "/"); !strings.HasPrefix(res.Turn2, log1+"/turn_2") {
		t.Errorf("turns %q and %q are not one session's", res.Turn1, res.Turn2)
	}
	for _, id := range []string{res.Turn1, res.Turn2} {
		if end := lastEnd(t, mustEvents(t, root, id)); end.ExitCode != 0 {
			t.Errorf("turn %s ended %+v", id, end)
		}
	}
	t.Logf("screenshots in %s", shots)
}
