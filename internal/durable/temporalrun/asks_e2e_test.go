package temporalrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/permission"
)

// askTeam's builder writes two files under a rule that asks a person first.
const askTeam = `
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      permissions:
        automation_default: deny-all
        rules:
          ask: ["write_file(./**)"]
      tool_calls:
        - {name: write_file, args: {path: yes.txt, content: "allowed"}}
        - {name: write_file, args: {path: no.txt, content: "refused"}}
      answers: ["Done."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, latency: 200ms, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`

// TestSession_PermissionAsksReachTheStarter: a held session's permission gate asks on its
// worker; the asks reach the starter's broker as events, the person's answers (allow the first
// write, deny the second) reach the worker's gate through the workflow, and the workspace and
// the events show both decisions as the person's. Without a person (no broker), the gate
// follows automation_default at once.
func TestSession_PermissionAsksReachTheStarter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	target, c, root := heldSessions(t, "asks-test", &Activities{})
	cfg := loadTeam(t, askTeam)

	for _, person := range []bool{true, false} {
		t.Run(map[bool]string{true: "a person answers", false: "nobody to ask"}[person], func(t *testing.T) {
			var broker *permission.Broker
			var wg sync.WaitGroup
			answer := event.SinkFunc(func(e event.Event) {})
			if person {
				broker = permission.NewBroker()
				answer = event.SinkFunc(func(e event.Event) {
					if a, ok := e.Payload.(event.PermissionAsked); ok && e.Preview {
						decision := permission.Deny
						if strings.Contains(a.Target, "yes.txt") {
							decision = permission.Allow
						}
						// As a view does: from its own goroutine, once the ask is shown.
						wg.Go(func() {
							// The starter's relay takes the ask in the same publish, after this sink.
							err := broker.Answer(a.ID, decision)
							for k := 0; errors.Is(err, permission.ErrNoAsk) && k < 100; k++ {
								time.Sleep(10 * time.Millisecond)
								err = broker.Answer(a.ID, decision)
							}
							if err != nil {
								t.Errorf("answer %s: %v", a.ID, err)
							}
						})
					}
				})
			}
			remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
				o.Bus.Subscribe(answer)
				return Run(ctx, c, target, cfg, o)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := app.Run(ctx, cfg, app.Options{Question: "Write them.", Logging: true, LogRoot: filepath.Join(root, "logs"),
				Remote: remote, Approvals: broker})
			wg.Wait()
			if err != nil || res.ExitCode != 0 || res.Winner != "builder" {
				t.Fatalf("run: %+v, %v", res.Result, err)
			}
			got := workspaceFiles(t, filepath.Join(res.Dir, "final", "builder", "workspace"))
			wantFiles := map[bool]string{true: "map[yes.txt:allowed]", false: "map[]"}[person]
			if s := fmt.Sprint(got); s != wantFiles {
				t.Errorf("final workspace %s, want %s", s, wantFiles)
			}
			evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var decided []string
			for _, e := range evs {
				if d, ok := e.Payload.(event.PermissionDecided); ok {
					decided = append(decided, d.Decision+" by "+d.By)
				}
			}
			want := map[bool]string{true: "allow by person, deny by person", false: "deny by automation_default, deny by automation_default"}[person]
			if strings.Join(decided, ", ") != want {
				t.Errorf("decisions %v, want %s", decided, want)
			}
			// The audit ledger is in the starter's log folder, written from the workers'
			// decisions: one line each, as a local run writes it.
			raw, err := os.ReadFile(filepath.Join(res.Dir, permission.LedgerFile))
			if err != nil {
				t.Fatalf("no audit ledger in the log folder: %v", err)
			}
			var ledger []string
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				var e permission.Entry
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("ledger line %q: %v", line, err)
				}
				if e.AgentID != "builder" || e.Tool != "write_file" || e.Action == "" || e.Target == "" || e.RunID == "" {
					t.Errorf("ledger entry %+v lacks what the decision was about", e)
				}
				ledger = append(ledger, e.Decision+" by "+e.By)
			}
			if strings.Join(ledger, ", ") != want {
				t.Errorf("ledger %v, want %s", ledger, want)
			}
		})
	}
}
