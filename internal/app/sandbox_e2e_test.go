package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/childproc"
	"massgen/internal/childproc/proctest"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// sandboxYAML is a team whose builder runs two commands in the srt sandbox: one writes its
// workspace, one reads a file outside it.
func sandboxYAML(outside string) string {
	return fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: srt
      command_line_srt_read_mode: confined
      tool_calls:
        - {name: execute_command, args: {command: "echo sandboxed > out.txt && cat out.txt"}}
        - {name: execute_command, args: {command: "cat %s"}}
      answers: ["out.txt says sandboxed."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`, outside)
}

// TestE2E_SandboxedCommands: a scripted session with command_line_execution_mode: srt runs
// its commands in the sandbox, offline: the workspace write lands in the winner's workspace,
// the read outside fails, and nothing shows the outside file.
func TestE2E_SandboxedCommands(t *testing.T) {
	needBwrap(t)
	root := t.TempDir()
	outside := filepath.Join(root, "outside.txt")
	if err := os.WriteFile(outside, []byte("outside secret 77"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Parse("srt.yaml", []byte(sandboxYAML(outside)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Write out.txt.", Logging: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "builder" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(res.Dir, "final", "builder", "workspace", "out.txt")); err != nil || string(b) != "sandboxed\n" {
		t.Errorf("final workspace out.txt = %q, %v", b, err)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var results []event.ToolResult
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok {
			results = append(results, r)
		}
		if s, ok := e.Payload.(event.ToolServerStatus); ok && s.Server == event.ServerCommands && childproc.SandboxNote() == "" {
			t.Errorf("a confinement note, where the sandbox holds: %+v", s)
		}
	}
	if len(results) != 2 || results[0].IsError || !strings.Contains(results[0].Content, "sandboxed") ||
		!results[1].IsError || !strings.Contains(results[1].Content, "No such file") {
		t.Fatalf("tool results: %+v", results)
	}
	if strings.Contains(out.String(), "outside secret 77") {
		t.Error("the outside file was read")
	}
}

// Without bubblewrap, a session with srt commands stops at the start with exit code 1 and
// says what to do; no command runs unsandboxed. The check runs in a helper process: the
// sandbox probe runs once per process.
func TestE2E_SandboxMissingRefusesToStart(t *testing.T) {
	if ok, why := childproc.Confinement(); !ok {
		t.Skip("user namespaces are unavailable: " + why)
	}
	if os.Getenv("APP_TEST_SANDBOX_HELPER") != "" {
		root := os.Getenv("APP_TEST_ROOT")
		cfg, rep := config.Parse("srt.yaml", []byte(sandboxYAML(filepath.Join(root, "x"))))
		if !rep.OK() {
			fmt.Println(rep.Text())
		}
		_, err := Run(t.Context(), cfg, Options{Question: "Q?", LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws")})
		var ae *Error
		if errors.As(err, &ae) {
			fmt.Printf("code %d: %v\n", ae.Code, err)
		} else {
			fmt.Printf("error %v\n", err)
		}
		return
	}
	root := t.TempDir()
	out, err := proctest.Helper(t, []string{"-test.run=^TestE2E_SandboxMissingRefusesToStart$", "-test.count=1"},
		"APP_TEST_SANDBOX_HELPER=1", "APP_TEST_ROOT="+root, "PATH="+t.TempDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	for _, want := range []string{"code 1: agent builder: command_line_execution_mode: srt cannot run here",
		"bubblewrap (bwrap) is not installed", "command_line_execution_mode: local"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "ws")); err == nil {
		if matches, _ := filepath.Glob(filepath.Join(root, "ws", "*", "builder", "workspace", "out.txt")); len(matches) > 0 {
			t.Error("a command ran")
		}
	}
}
