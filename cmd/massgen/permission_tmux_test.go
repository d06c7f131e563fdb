package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPermissionAsk_AtTheTerminal: a permissions: ask rule holds an agent's execute_command
// until the person at the terminal answers, in the live view (y or n) and in plain output (a
// line): allowed, the command runs; denied, it does not; the ledger says a person decided.
func TestPermissionAsk_AtTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		name, flags, prompt, asked string
		keys                       []string
		decision                   string
	}{
		{"live view allows", "", "y allow · n deny", `permission: builder wants command "echo approved-by-a-person" (rule command(echo *))`,
			[]string{"y"}, "allow"},
		{"plain output allows", "--no-display", "Allow? [y/N]", `permission: builder wants command "echo approved-by-a-person" (command(echo *))`,
			[]string{"y", "Enter"}, "allow"},
		{"plain output denies", "--no-display", "Allow? [y/N]", `permission: builder wants command`, []string{"n", "Enter"}, "deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testPermissionAsk(t, tc.flags, tc.prompt, tc.asked, tc.keys, tc.decision)
		})
	}
}

// askTeam writes, in a fresh folder, a team whose agent runs one command a permissions: ask
// rule holds, then writes its output to result.txt; it returns the folder and the config.
func askTeam(t *testing.T) (work, cfg string) {
	t.Helper()
	work = t.TempDir()
	cfg = filepath.Join(work, "ask.yaml")
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
	return work, cfg
}

func testPermissionAsk(t *testing.T, flags, prompt, asked string, keys []string, decision string) {
	work, cfg := askTeam(t)
	screen, send := tmuxSession(t, work, "cd "+work+" && "+binary+" "+flags+" --config "+cfg+" 'Run the command.'; echo EXIT=\\$?; sleep 30")
	if shown := waitFor(t, screen, prompt, 15*time.Second); !strings.Contains(shown, asked) {
		t.Errorf("the ask reads:\n%s", shown)
	}
	send(keys...)
	waitFor(t, screen, "EXIT=", 30*time.Second)
	ledgers, _ := filepath.Glob(filepath.Join(work, ".massgen", "massgen_logs", "log_*", "turn_1", "approvals", "ledger.jsonl"))
	if len(ledgers) != 1 {
		t.Fatalf("ledgers: %v\n%s", ledgers, screen())
	}
	b, _ := os.ReadFile(ledgers[0])
	if !strings.Contains(string(b), `"decision":"`+decision+`","operator":"human"`) || !strings.Contains(string(b), `"by":"person"`) {
		t.Errorf("ledger:\n%s", b)
	}
	results, _ := filepath.Glob(filepath.Join(work, ".massgen", "massgen_logs", "log_*", "turn_1", "final", "builder", "workspace", "result.txt"))
	if len(results) != 1 {
		t.Fatalf("no result.txt\n%s", screen())
	}
	r, _ := os.ReadFile(results[0])
	ran := strings.Contains(string(r), "approved-by-a-person") && !strings.Contains(string(r), "denied by permissions")
	if ran != (decision == "allow") {
		t.Errorf("decision %s, result.txt = %q", decision, r)
	}
}

// At the interactive prompt the ask is answered the same way, and the prompt reads the next
// line after the turn: the terminal is blocking again once the ask's read gave it back.
func TestPermissionAsk_InteractivePromptGoesOn(t *testing.T) {
	t.Parallel()
	work, cfg := askTeam(t)
	// fdinfo: whether the terminal massgen leaves to the shell is blocking again.
	screen, send := tmuxSession(t, work, "cd "+work+" && "+binary+" --no-display --config "+cfg+"; echo EXIT=\\$?; grep flags /proc/self/fdinfo/0; sleep 30")
	waitFor(t, screen, "User:", 15*time.Second)
	send("Run it.", "Enter")
	waitFor(t, screen, "Allow? [y/N]", 15*time.Second)
	send("y", "Enter")
	waitFor(t, screen, "session completed", 15*time.Second)
	send("/status", "Enter")
	waitFor(t, screen, "turns: 1", 10*time.Second)
	send("/quit", "Enter")
	s := waitFor(t, screen, "flags:", 10*time.Second)
	if !strings.Contains(s, "EXIT=0") || !strings.Contains(s, "permission: allow") {
		t.Errorf("screen:\n%s", s)
	}
	_, flags, _ := strings.Cut(s, "flags:")
	mode, err := strconv.ParseInt(strings.Fields(flags)[0], 8, 64)
	if err != nil || mode&syscall.O_NONBLOCK != 0 {
		t.Errorf("the terminal is left non-blocking (flags %q, %v)", strings.Fields(flags)[0], err)
	}
}
