package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/view"
)

// readLedger returns the audit ledger of a turn.
func readLedger(t *testing.T, dir string) []permission.Entry {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, permission.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []permission.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e permission.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("ledger line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// TestE2E_PermissionsDenyRuleBlocksCommand: a permissions: deny rule keeps execute_command
// from running: the model gets "denied by permissions rule ...", the file the command would
// have deleted is still there, and the ledger records the denial, with the secret the command
// carried redacted.
func TestE2E_PermissionsDenyRuleBlocksCommand(t *testing.T) {
	const secret = "sk-Zq9xW4vB7nK2mL8pR3tY6uJ1hG5fD0s"
	yaml := `
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      permissions:
        rules:
          deny: ["command(rm *)"]
          allow: ["write_file(./**)"]
      tool_calls:
        - {name: write_file, args: {path: victim.txt, content: "keep me"}}
        - {name: execute_command, args: {command: "rm victim.txt ` + secret + `"}}
        - {name: write_file, args: {path: result.txt, content: "{{result}}"}}
      answers: ["I tried to delete victim.txt."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`
	cfg, rep := config.Parse("perm.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Delete victim.txt.", Logging: true, Secrets: []string{secret},
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "builder" {
		t.Fatalf("exit %d, winner %q\n%s", res.ExitCode, res.Winner, out.String())
	}
	final := filepath.Join(res.Dir, "final", "builder", "workspace")
	if b, err := os.ReadFile(filepath.Join(final, "victim.txt")); err != nil || string(b) != "keep me" {
		t.Errorf("victim.txt = %q, %v: the denied command ran", b, err)
	}
	got, err := os.ReadFile(filepath.Join(final, "result.txt"))
	if err != nil || !strings.Contains(string(got), "denied by permissions rule command(rm *)") {
		t.Errorf("the model got %q (%v), not the denial", got, err)
	}
	var deny *permission.Entry
	entries := readLedger(t, res.Dir)
	for i, e := range entries {
		if e.Tool == "execute_command" {
			deny = &entries[i]
		}
	}
	if deny == nil || deny.Decision != "deny" || deny.By != "rule" || deny.Rule != "command(rm *)" || deny.Action != "command" ||
		deny.AgentID != "builder" || deny.Asked {
		t.Fatalf("ledger entry of the command = %+v (all: %+v)", deny, entries)
	}
	if len(entries) != 3 || entries[0].Decision != "allow" || entries[0].Rule != "write_file(./**)" {
		t.Errorf("ledger = %+v; want the two allowed writes and the denial", entries)
	}
	raw, _ := os.ReadFile(filepath.Join(res.Dir, permission.LedgerFile))
	if bytes.Contains(raw, []byte(secret)) {
		t.Errorf("the ledger holds the secret:\n%s", raw)
	}
	events, _ := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if !bytes.Contains(events, []byte(`"type":"permission_decided"`)) || bytes.Contains(events, []byte(secret)) {
		t.Errorf("events.jsonl lacks permission_decided or holds the secret")
	}
}

// TestE2E_PermissionsAutomationDefault: with nobody to answer, an ask follows
// automation_default: deny-all refuses the call, allow-all runs it.
func TestE2E_PermissionsAutomationDefault(t *testing.T) {
	for _, tc := range []struct{ def, want string }{
		{"deny-all", "denied by automation policy (automation_default: deny-all)"},
		{"allow-all", "hello"},
	} {
		t.Run(tc.def, func(t *testing.T) {
			yaml := `
agents:
  - id: a
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      permissions:
        automation_default: ` + tc.def + `
        rules: {ask: ["command(echo *)"]}
      tool_calls:
        - {name: execute_command, args: {command: "echo hello"}}
        - {name: write_file, args: {path: result.txt, content: "{{result}}"}}
      answers: ["done"]
orchestrator: {final_presentation: verbatim}
`
			cfg, rep := config.Parse("perm.yaml", []byte(yaml))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			root := t.TempDir()
			res, err := Run(t.Context(), cfg, Options{Question: "Say hello.", Logging: true,
				LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws")})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(res.Dir, "final", "a", "workspace", "result.txt"))
			if !strings.Contains(string(got), tc.want) {
				t.Errorf("result = %q, want %q", got, tc.want)
			}
			var cmd *permission.Entry
			entries := readLedger(t, res.Dir)
			for i := range entries {
				if entries[i].Tool == "execute_command" {
					cmd = &entries[i]
				}
			}
			if cmd == nil || !cmd.Asked || cmd.By != "automation_default" || cmd.Rule != "command(echo *)" || cmd.Operator != "policy" {
				t.Errorf("ledger entry = %+v", cmd)
			}
		})
	}
}
