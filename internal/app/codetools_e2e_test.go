package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// TestE2E_CodeBasedMCPTool: with enable_code_based_tools, the real npm MCP server's tools are
// Python in the agent's workspace, not tools of the model; a command imports one and calls
// it, and massgen runs the call. A command that drops the token, or guesses one, is refused,
// and the server's environment (its fake credential) never reaches the commands. Locally and
// in the srt sandbox, where the call goes through the sandbox's relay.
func TestE2E_CodeBasedMCPTool(t *testing.T) {
	server := everythingServer(t)
	requirePython3(t)
	for _, mode := range []string{"local", "srt"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "srt" {
				needBwrap(t)
			}
			const call = `python3 -c 'from servers.everything import echo; print(echo(message="hi from code"))'`
			cfg, rep := config.Parse("code.yaml", []byte(fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: %s
      enable_code_based_tools: true
      mcp_servers:
        - {name: everything, command: %q, env: {SERVICE_TOKEN: "sk-server-credential-77"}}
      tool_calls:
        - {name: execute_command, args: {command: %q}}
        - {name: execute_command, args: {command: %q}}
        - {name: execute_command, args: {command: %q}}
        - {name: execute_command, args: {command: "env; cat servers/everything/echo.py .mcp/client.py"}}
        - {name: mcp__everything__echo, args: {message: "direct"}}
      answers: ["The echo tool answered from code."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`, mode, server, call, "unset MASSGEN_TOOLS_TOKEN; "+call, "MASSGEN_TOOLS_TOKEN=0000 "+call)))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			root := t.TempDir()
			var out bytes.Buffer
			res, err := Run(t.Context(), cfg, Options{Question: "Echo from code.", Logging: true,
				LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 {
				t.Fatalf("result %+v\n%s", res.Result, out.String())
			}
			rs, fromCode := resultsInOrder(t, res.Dir), resultsFrom(t, res.Dir, true)
			// The code's one authorised call is the agent's tool call too: in the log and the views.
			if len(fromCode) != 1 || !strings.HasSuffix(fromCode[0].Tool, "echo") || fromCode[0].IsError ||
				!strings.Contains(fromCode[0].Content, "hi from code") || !strings.HasPrefix(fromCode[0].CallID, "code-") {
				t.Errorf("calls from code in events.jsonl: %+v", fromCode)
			}
			if !strings.Contains(out.String(), "(from code)") {
				t.Errorf("the live output does not show the call from code:\n%s", out.String())
			}
			if len(rs) != 5 {
				t.Fatalf("tool results: %+v", rs)
			}
			if rs[0].IsError || !strings.Contains(rs[0].Content, "hi from code") {
				t.Errorf("the call from code: %+v", rs[0])
			}
			for _, r := range rs[1:3] {
				if !r.IsError || !strings.Contains(r.Content, "ToolError") || !strings.Contains(r.Content, "unauthorized") || strings.Contains(r.Content, "hi from code") {
					t.Errorf("a call without the token: %+v", r)
				}
			}
			if strings.Contains(rs[3].Content, "sk-server-credential-77") || strings.Contains(rs[3].Content, server) {
				t.Errorf("the commands see the MCP server's command or credential: %s", rs[3].Content)
			}
			if !rs[4].IsError || !strings.Contains(rs[4].Content, "unknown tool") {
				t.Errorf("the model was offered a tool that is code: %+v", rs[4])
			}
			if _, err := os.Stat(filepath.Join(res.Dir, "final", "builder", "workspace", "servers", "everything", "echo.py")); err != nil {
				t.Errorf("the wrappers are not in the workspace: %v", err)
			}
		})
	}
}

// TestE2E_CodeToolTokenNeverLogged is the attack: an agent with code-based tools runs env (and
// prints its token outright) with execute_command. Its commands need the token, so they hold
// it; but it is the session's secret, redacted like a key from what the commands print, so no
// file of the run (events.jsonl, the logs, status.json, answers, snapshots) holds it. The test
// learns the token through a command that prints it backwards, which no redactor can know.
func TestE2E_CodeToolTokenNeverLogged(t *testing.T) {
	server := everythingServer(t)
	requirePython3(t)
	const call = `python3 -c 'from servers.everything import echo; print(echo(message="hi from code"))'`
	const backwards = `python3 -c 'import os; print("backwards:" + os.environ["MASSGEN_TOOLS_TOKEN"][::-1] + ":")'`
	cfg, rep := config.Parse("code.yaml", []byte(fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      enable_code_based_tools: true
      mcp_servers:
        - {name: everything, command: %q}
      tool_calls:
        - {name: execute_command, args: {command: %q}}
        - {name: execute_command, args: {command: "env"}}
        - {name: execute_command, args: {command: "echo token=$MASSGEN_TOOLS_TOKEN; echo $MASSGEN_TOOLS_TOKEN | cut -c3-"}}
        - {name: execute_command, args: {command: %q}}
      answers: ["Done."]
      vote: agent1
orchestrator: {final_presentation: verbatim}
`, server, call, backwards)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Show your environment.", Logging: true, Debug: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	rs := resultsInOrder(t, res.Dir)
	if len(rs) != 4 || rs[0].IsError || !strings.Contains(rs[0].Content, "hi from code") {
		t.Fatalf("the call from code did not work, so the token was not there to leak: %+v", rs)
	}
	if !strings.Contains(rs[1].Content, "MASSGEN_TOOLS_TOKEN=") {
		t.Fatalf("env did not run: %s", rs[1].Content)
	}
	_, rev, ok := strings.Cut(rs[3].Content, "backwards:")
	rev, _, _ = strings.Cut(rev, ":")
	if !ok || len(rev) < 32 {
		t.Fatalf("no token printed backwards: %q", rs[3].Content)
	}
	token := []rune(rev)
	slices.Reverse(token)
	secret := string(token)
	files := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if i := bytes.Index(b, []byte(secret[2:])); i >= 0 {
			t.Errorf("%s holds the tools token: %q", path, b[max(i-40, 0):min(i+len(secret)+10, len(b))])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"events.jsonl", "massgen.log", "massgen_debug.log", "status.json"} {
		if _, err := os.Stat(filepath.Join(res.Dir, name)); err != nil {
			t.Errorf("the run wrote no %s to look in: %v", name, err)
		}
	}
	if strings.Contains(out.String(), secret[2:]) {
		t.Error("the live view showed the tools token")
	}
}
