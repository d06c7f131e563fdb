package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// TestRun_MCPServerThatCannotStartStopsTheRun: examples/mcp_workspace.yaml in a fresh clone
// names a server that is not installed. The run stops before any model call, with exit 1 and
// a message naming the server, its command and what to do.
func TestRun_MCPServerThatCannotStartStopsTheRun(t *testing.T) {
	gpt := newFake(t, nil, openaiResponses("Paris."))
	missing := filepath.Join(t.TempDir(), "node_modules", ".bin", "mcp-server-everything")
	cfg, rep := config.Parse("tools.yaml", []byte(fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: openai
      model: gpt-5-mini
      base_url: "%s/v1"
      mcp_servers:
        - {name: everything, command: %q}
  - id: reviewer
    backend:
      type: scripted
      answers: ["Short."]
      mcp_servers:
        - {name: everything, command: %q}
`, gpt.URL, missing, missing)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	_, err := Run(t.Context(), cfg, Options{Question: "Echo a greeting.", Logging: true, LogRoot: filepath.Join(root, "logs"),
		WorkspaceRoot: filepath.Join(root, "ws"), Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-test"})})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != ExitConfig {
		t.Fatalf("error %v, want a configuration error (exit 1)", err)
	}
	msg := err.Error()
	for _, want := range []string{`agents builder, reviewer: mcp server "everything"`, "start " + missing,
		"check that `" + missing + "` is installed and on PATH", "no model was called"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Count(msg, `mcp server "everything"`) != 1 {
		t.Errorf("the server is reported more than once:\n%s", msg)
	}
	if n := gpt.requests.Load(); n != 0 {
		t.Errorf("%d model calls were made for a run that could not have its tools", n)
	}
}

// flakyServer is a stdio MCP server in sh: it answers initialize and tools/list (and refuses
// anything else it is asked, such as the 2026 protocol's server/discover), then exits a moment
// later, as a server that crashes mid-run.
const flakyServer = `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\),.*/\1/p')
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"flaky","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}\n' "$id"; sleep 0.2; echo "flaky: out of memory" >&2; exit 9 ;;
    *) [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id" ;;
  esac
done
`

// TestRun_MCPServerDyingMidRunIsReported: the session goes on without the server and ends
// normally, and the summary and status.json name the server that died.
func TestRun_MCPServerDyingMidRunIsReported(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	script := filepath.Join(t.TempDir(), "flaky.sh")
	if err := os.WriteFile(script, []byte(flakyServer), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Parse("tools.yaml", []byte(fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      latency: 0.6
      mcp_servers:
        - {name: flaky, command: /bin/sh, args: [%q]}
      tool_calls:
        - {name: mcp__flaky__echo, args: {}}
      answers: ["Done without the echo."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, latency: 0.6, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`, script)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Echo a greeting.", Logging: true, LogRoot: filepath.Join(root, "logs"),
		WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d (%v), want 0: a server dying mid-run does not fail the session\n%s", res.ExitCode, res.Err, out.String())
	}
	var status struct {
		Servers map[string]struct{ Status, Detail string } `json:"mcp_servers"`
	}
	readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
	if s := status.Servers["flaky"]; s.Status != "died" || !strings.Contains(s.Detail, "exit status 9") {
		t.Errorf("status.json mcp_servers = %+v, want flaky died with exit status 9", status.Servers)
	}
	_, summary, _ := strings.Cut(out.String(), "session completed")
	if !strings.Contains(summary, `mcp server flaky died during the session: exit status 9`) {
		t.Errorf("the summary does not name the server that died:\n%s", out.String())
	}
}
