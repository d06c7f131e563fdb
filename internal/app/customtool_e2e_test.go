package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// massgenToolFile is a tool file as MassGen's examples are written: MassGen's result classes,
// type hints, an Args docstring, a default and a preset argument.
const massgenToolFile = `import os
from typing import Optional

from massgen.tool._result import ExecutionResult, TextContent


def add_numbers(a: int, b: int = 1, unit: str = "", agent_cwd: Optional[str] = None) -> ExecutionResult:
    """Add two numbers.

    Args:
        a: First number.
        b: Second number.
        unit: Set by preset_args.
    """
    print("this goes to stderr, not to the protocol")
    return ExecutionResult(output_blocks=[TextContent(data=f"{a} + {b} = {a + b} {unit} in {os.path.basename(agent_cwd or '')}")])


def fail(message: str) -> ExecutionResult:
    """Raise."""
    raise RuntimeError(message)


def read_env(name: str) -> str:
    """An environment variable, or <unset>."""
    return os.environ.get(name, "<unset>")
`

func requirePython3(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH: the custom tool tests need it")
	}
}

// TestE2E_CustomToolsInASession: a scripted agent calls MassGen-style Python tools; the
// results reach it (one is written into its workspace through {{result}}), a tool that raises
// is an error result and the session goes on, the tools see no API key, and no worker is left.
func TestE2E_CustomToolsInASession(t *testing.T) {
	requirePython3(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "math_tools.py")
	if err := os.WriteFile(file, []byte(massgenToolFile), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("MASSGEN_TEST_TAG_%d_CUSTOM", os.Getpid())
	t.Setenv(tag, "1")
	t.Setenv("OPENAI_API_KEY", "sk-e2e-custom-tool-SECRET")
	cfg, rep := config.Parse("tools.yaml", []byte(fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      custom_tools:
        - name: [add_numbers, fail, read_env]
          path: %q
          function: [add_numbers, fail, read_env]
          preset_args: [{unit: apples}, {}, {}]
          env_passthrough: [%s]
      tool_calls:
        - {name: custom_tool__fail, args: {message: "not today"}}
        - {name: custom_tool__read_env, args: {name: OPENAI_API_KEY}}
        - {name: custom_tool__add_numbers, args: {a: 2, b: 3}}
        - {name: write_file, args: {path: sum.txt, content: "{{result}}"}}
      answers: ["The sum is in sum.txt."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`, file, tag)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Add 2 and 3.", Logging: true, LogRoot: filepath.Join(root, "logs"),
		WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "builder" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	got := toolResults(t, res.Dir)
	if r := got["custom_tool__fail"]; !r.IsError || !strings.Contains(r.Content, "RuntimeError: not today") {
		t.Errorf("fail: %+v", r)
	}
	if r := got["custom_tool__read_env"]; r.IsError || r.Content != "<unset>" {
		t.Errorf("the tool saw the API key: %+v", r)
	}
	want := "2 + 3 = 5 apples in builder"
	if r := got["custom_tool__add_numbers"]; r.IsError || !strings.HasPrefix(r.Content, "2 + 3 = 5 apples in ") {
		t.Errorf("add_numbers: %+v", r)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "final", "builder", "workspace", "sum.txt"))
	if err != nil || !strings.HasPrefix(string(b), "2 + 3 = 5 apples") {
		t.Errorf("sum.txt = %q, %v (want %q)\n%s", b, err, want, out.String())
	}
	if !strings.Contains(out.String(), "custom_tool__add_numbers") {
		t.Errorf("the output does not show the call:\n%s", out.String())
	}
	waitNoneTagged(t, tag)
}

// TestRun_CustomToolThatCannotLoadStopsTheRun: a tool file with a syntax error stops the run
// before any model call, with exit 1 and Python's error naming the file and line.
func TestRun_CustomToolThatCannotLoadStopsTheRun(t *testing.T) {
	requirePython3(t)
	file := filepath.Join(t.TempDir(), "broken.py")
	if err := os.WriteFile(file, []byte("def broken(x: int)\n    return x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gpt := newFake(t, nil, openaiResponses("Paris."))
	cfg, rep := config.Parse("tools.yaml", []byte(fmt.Sprintf(`
agents:
  - id: a
    backend:
      type: openai
      model: gpt-5-mini
      base_url: "%s/v1"
      custom_tools: [{path: %q, function: broken}]
`, gpt.URL, file)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	_, err := Run(t.Context(), cfg, Options{Question: "Hi.", LogRoot: filepath.Join(root, "logs"),
		WorkspaceRoot: filepath.Join(root, "ws"), Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-test"})})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != ExitConfig {
		t.Fatalf("error %v, want a configuration error (exit 1)", err)
	}
	for _, want := range []string{"agent a: custom tool custom_tool__broken (function broken in " + file, "SyntaxError",
		"broken.py, line 1", "no model was called"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	if n := gpt.requests.Load(); n != 0 {
		t.Errorf("%d model calls were made", n)
	}
}

// waitNoneTagged fails when a process with tag in its environment is still running.
func waitNoneTagged(t *testing.T, tag string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(processesTagged(tag)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pids := processesTagged(tag); len(pids) > 0 {
		t.Errorf("custom tool processes left running: %v", pids)
	}
}

// toolResults are the last result of each tool in the turn's events.jsonl, by tool name.
func toolResults(t *testing.T, dir string) map[string]event.ToolResult {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]event.ToolResult{}
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok {
			got[r.Tool] = r
		}
	}
	return got
}
