package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// everythingServer returns the path of the reference MCP server that .ci/run installs from npm.
func everythingServer(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../.ci/npm/node_modules/.bin/mcp-server-everything")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: .ci/run installs it with npm", p)
		}
		t.Skipf("%s is not installed (npm install --prefix .ci/npm @modelcontextprotocol/server-everything)", p)
	}
	return p
}

// processesTagged lists the pids whose environment holds tag.
func processesTagged(tag string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(b, []byte(tag)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestE2E_MCPToolIntoWinningWorkspace: a scripted agent calls the real npm MCP server, writes
// the result into its workspace, answers and wins; the final workspace in the log folder holds
// the file, and no server process is left.
func TestE2E_MCPToolIntoWinningWorkspace(t *testing.T) {
	server := everythingServer(t)
	tag := fmt.Sprintf("MASSGEN_TEST_TAG_%d", os.Getpid())
	yaml := fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      mcp_servers:
        - {name: everything, command: %q, env: {%s: "1"}}
      exclude_tools: [trigger-long-running-operation]
      tool_calls:
        - {name: mcp__everything__echo, args: {message: "hello from massgen"}}
        - {name: write_file, args: {path: result.txt, content: "{{result}}"}}
      answers: ["I saved what the echo tool returned to result.txt in my workspace."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`, server, tag)
	cfg, rep := config.Parse("tools.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Echo a greeting into a file.", Logging: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "builder" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "final", "builder", "workspace", "result.txt"))
	if err != nil || !strings.Contains(string(b), "hello from massgen") {
		t.Fatalf("final workspace result.txt = %q, %v\n%s", b, err, out.String())
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok {
			if r.IsError {
				t.Errorf("%s failed: %s", r.Tool, r.Content)
			}
			calls = append(calls, r.Tool)
		}
	}
	if strings.Join(calls, ",") != "mcp__everything__echo,write_file" {
		t.Errorf("tool results: %v", calls)
	}
	if pids := processesTagged(tag); len(pids) > 0 {
		t.Errorf("MCP server processes left running: %v", pids)
	}
}

// TestE2E_PlanningModeHoldsBackMCP: with planning mode on and the judge naming the echo tool,
// the agent's echo call is refused during coordination, and the log says why.
func TestE2E_PlanningModeHoldsBackMCP(t *testing.T) {
	server := everythingServer(t)
	cfg, rep := config.Parse("plan.yaml", []byte(fmt.Sprintf(`
agents:
  - id: poster
    backend:
      type: scripted
      mcp_servers: [{name: everything, command: %q}]
      allowed_tools: [echo]
      planning: "IRREVERSIBLE: YES\nBLOCKED_TOOLS: echo"
      tool_calls: [{name: mcp__everything__echo, args: {message: "to the world"}}]
      answers: ["I would echo 'to the world' once the plan is chosen."]
orchestrator: {final_presentation: verbatim, coordination: {enable_planning_mode: true}}
`, server)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Announce it.", Logging: true, LogRoot: filepath.Join(root, "logs"),
		WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("result %+v %v\n%s", res.Result, err, out.String())
	}
	for _, want := range []string{
		"planning mode: mcp__everything__echo held back until the final presentation (irreversible actions needed)",
		"poster: mcp__everything__echo -> error: planning mode: mcp__everything__echo is held back",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
