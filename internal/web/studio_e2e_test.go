package web

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
)

// permissionAsked and permissionDecided stand in for the permission engine's events
// (PermissionAsked{Agent, ID, Action, Target, Rule}, PermissionDecided{Agent, ID, Decision,
// By}), built on another branch: the page is drawn against exactly that contract.
type permissionAsked struct {
	Agent  string `json:"agent"`
	ID     string `json:"id"`
	Action string `json:"action"`
	Target string `json:"target"`
	Rule   string `json:"rule"`
}

func (permissionAsked) Type() string { return "permission_asked" }

// askingRun is a session that only asks one permission and waits to be stopped.
func askingRun(ctx context.Context, logRoot string, o app.Options) (app.Result, error) {
	id := "log_" + strings.Replace(time.Now().Format("20060102_150405.000000"), ".", "_", 1)
	if err := os.MkdirAll(filepath.Join(logRoot, id, "turn_1"), 0o755); err != nil {
		return app.Result{}, err
	}
	seq := int64(0)
	emit := func(p event.Payload) {
		seq++
		for _, s := range o.Sinks {
			s.Handle(event.Event{Seq: seq, Time: time.Now(), Payload: p})
		}
	}
	emit(event.SessionStarted{Question: o.Question, Turn: 1, SessionID: id,
		Agents: []event.AgentInfo{{ID: "builder", Label: "agent1", Backend: "scripted", Model: "scripted"}}})
	emit(event.TurnStarted{Agent: "builder", Version: 0})
	emit(permissionAsked{Agent: "builder", ID: "ask-1", Action: "execute_command", Target: "rm -rf build/", Rule: "ask: execute_command rm *"})
	<-ctx.Done()
	emit(event.SessionEnded{Status: event.StatusInterrupted, ExitCode: 4, Error: "interrupted"})
	return app.Result{}, nil
}

// TestE2E_Studio drives the studio in chromium: a 4-agent session whose answers are tool calls
// (every answer in its column and on the timeline, nodes and arrows counted against
// events.jsonl, stale votes, the winner's files), keyboard navigation, a phone-sized viewport,
// the setup wizard writing a team that then runs, steering (message, stop an agent, Answer
// now, stop the session) and a permission ask. Screenshots go to $MASSGEN_E2E_ARTIFACTS.
func TestE2E_Studio(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test takes about 20 s")
	}
	node, env := nodeEnv(t, []string{"playwright-core"}, true)
	const token = "e2e-studio-token"
	tmp := t.TempDir()
	root := filepath.Join(tmp, "logs")
	setupDir := filepath.Join(tmp, "configs")
	studio, rep := config.Load(repoFile(t, "internal/web/testdata/studio4.yaml"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	perm := loadTeam(t, "perm", "agents:\n  - id: builder\n    backend: {type: scripted, answers: [\"x\"]}\n")
	opts := Options{
		Teams:   map[string]*config.Config{"studio4": studio, "steer": loadTeam(t, "steer", steerTeam), "perm": perm},
		LogRoot: root, Token: token, Version: "e2e", SetupDir: setupDir,
		Run: func(ctx context.Context, cfg *config.Config, o app.Options) (app.Result, error) {
			if cfg == perm {
				return askingRun(ctx, root, o)
			}
			o.WorkspaceRoot = filepath.Join(tmp, "workspaces")
			return app.Run(ctx, cfg, o)
		},
	}
	_, addr := serveListener(t, opts)
	shots := os.Getenv("MASSGEN_E2E_ARTIFACTS")
	if shots == "" {
		shots = filepath.Join(tmp, "shots")
	}
	shots = filepath.Join(shots, "studio")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	out := runNode(t, node, env, "internal/web/e2e/studio.mjs", "http://"+addr+"/?token="+token, shots)
	var res struct {
		Studio, Wizard, Steer  string
		Answers, Votes, Arrows int
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("script output %q: %v", out, err)
	}
	// The browser counted what the page drew; check those counts against the log itself.
	evs, err := event.ReadFile(filepath.Join(root, filepath.FromSlash(res.Studio), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	answers, votes := 0, 0
	for _, e := range evs {
		switch e.Payload.(type) {
		case event.AnswerSubmitted:
			answers++
		case event.VoteCast, event.VoteIgnored:
			votes++
		}
	}
	if res.Answers != answers || res.Votes != votes || answers < 5 {
		t.Errorf("the page drew %d answers and %d votes; events.jsonl has %d and %d", res.Answers, res.Votes, answers, votes)
	}
	// The wizard's file passes the validator of --validate, and its team ran.
	saved := filepath.Join(setupDir, "wizard_team.yaml")
	if _, rep := config.Load(saved); !rep.OK() {
		t.Errorf("the wizard saved a config --validate refuses: %s", rep.Text())
	}
	if end := lastEnd(t, mustEvents(t, root, res.Wizard)); end.ExitCode != 0 {
		t.Errorf("the wizard's team ended %+v", end)
	}
	if end := lastEnd(t, mustEvents(t, root, res.Steer)); end.Status != event.StatusInterrupted {
		t.Errorf("the stopped run ended %+v", end)
	}
	for _, name := range []string{"session-agents.png", "session-timeline.png", "mobile-session.png", "wizard.png", "steer.png", "permission.png"} {
		if info, err := os.Stat(filepath.Join(shots, name)); err != nil || info.Size() < 5000 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	t.Logf("screenshots in %s", shots)
}

func mustEvents(t *testing.T, root, id string) []event.Event {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(root, filepath.FromSlash(id), "events.jsonl"))
	if err != nil {
		t.Fatal(fmt.Errorf("session %s: %w", id, err))
	}
	return evs
}

// TestJS_Units runs the checks of the studio's pure modules (the diff, the event fold) in node.
func TestJS_Units(t *testing.T) {
	node, env := nodeEnv(t, nil, false)
	if out := strings.TrimSpace(string(runNode(t, node, env, "internal/web/e2e/units.mjs"))); out != "ok" {
		t.Errorf("units.mjs: %s", out)
	}
}
