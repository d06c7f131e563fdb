package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLiveView_PermissionAsk: a permissions: ask rule holds an agent's execute_command until
// the person at the live view presses y; the command then runs, and the ledger says a person
// allowed it.
func TestLiveView_PermissionAsk(t *testing.T) {
	work := t.TempDir()
	cfg := filepath.Join(work, "ask.yaml")
	if err := os.WriteFile(cfg, []byte(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      permissions:
        automation_default: deny-all
        rules: {ask: ["command(echo *)"]}
      tool_calls:
        - {name: execute_command, args: {command: "echo approved-by-a-person"}}
        - {name: write_file, args: {path: result.txt, content: "{{result}}"}}
      answers: ["I ran the command once it was approved."]
orchestrator: {final_presentation: verbatim}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	screen, keys := tmuxSession(t, work, "cd "+work+" && "+binary+" --config "+cfg+" 'Run the command.'; echo EXIT=\\$?; sleep 30")
	asked := waitFor(t, screen, "y allow · n deny", 15*time.Second)
	if !strings.Contains(asked, `permission: builder wants command "echo approved-by-a-person" (rule command(echo *))`) {
		t.Errorf("the ask reads:\n%s", asked)
	}
	keys("y")
	waitFor(t, screen, "EXIT=", 30*time.Second)
	ledgers, _ := filepath.Glob(filepath.Join(work, ".massgen", "massgen_logs", "log_*", "turn_1", "approvals", "ledger.jsonl"))
	if len(ledgers) != 1 {
		t.Fatalf("ledgers: %v\n%s", ledgers, screen())
	}
	b, _ := os.ReadFile(ledgers[0])
	if !strings.Contains(string(b), `"decision":"allow","operator":"human"`) || !strings.Contains(string(b), `"by":"person"`) {
		t.Errorf("ledger:\n%s", b)
	}
	results, _ := filepath.Glob(filepath.Join(work, ".massgen", "massgen_logs", "log_*", "turn_1", "final", "builder", "workspace", "result.txt"))
	if len(results) != 1 {
		t.Fatalf("no result.txt")
	}
	if r, _ := os.ReadFile(results[0]); !strings.Contains(string(r), "approved-by-a-person") {
		t.Errorf("result.txt = %q", r)
	}
}
