package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"massgen/internal/childproc/proctest"
	"massgen/internal/event"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "massgen-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "massgen")
	// With the release builds' tag (scripts/release.sh), so that the start-up benchmark measures
	// what ships.
	if out, err := exec.Command("go", "build", "-tags", "grpcnotrace", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestInterrupt sends SIGINT to a real process mid-run: it must exit 4 and keep the log
// directory, with the best answer so far as the final answer.
func TestInterrupt(t *testing.T) {
	demo, err := filepath.Abs("../../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	cmd := exec.Command(binary, "--config", demo, "--no-display", "What is the capital of France?")
	cmd.Dir = work
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var out strings.Builder
	sent := false
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if !sent && strings.Contains(line, "new answer agent1.1") {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			sent = true
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	logs, _ := filepath.Glob(filepath.Join(work, ".massgen", "massgen_logs", "log_*", "turn_1"))
	if len(logs) != 1 {
		t.Fatalf("log dirs: %v", logs)
	}
	evs, err := event.ReadFile(filepath.Join(logs[0], "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	last, ok := evs[len(evs)-1].Payload.(event.SessionEnded)
	if !ok || last.ExitCode != 4 || last.Status != event.StatusInterrupted {
		t.Fatalf("last event %+v", evs[len(evs)-1].Payload)
	}
	answer, err := os.ReadFile(filepath.Join(logs[0], "final", "researcher", "answer.txt"))
	if err != nil || string(answer) != "Paris is the capital of France." {
		t.Fatalf("final answer %q, %v\n%s", answer, err, out.String())
	}
	status, err := os.ReadFile(filepath.Join(logs[0], "status.json"))
	if err != nil || !strings.Contains(string(status), `"status": "interrupted"`) {
		t.Fatalf("status.json: %v\n%s", err, status)
	}
}

// TestInterrupt_LeavesNoMCPServer kills a run that has an MCP server up: the server and its
// children must be gone when massgen exits.
func TestInterrupt_LeavesNoMCPServer(t *testing.T) {
	server, err := filepath.Abs("../../.ci/npm/node_modules/.bin/mcp-server-everything")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(server); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: .ci/run installs it", server)
		}
		t.Skip("the npm MCP server is not installed")
	}
	work := t.TempDir()
	tag := "MASSGEN_KILL_TAG_" + filepath.Base(work)
	cfg := filepath.Join(work, "mcp.yaml")
	yaml := "agents:\n  - id: a\n    backend:\n      type: scripted\n      mcp_servers:\n        - {name: everything, command: " + strconv.Quote(server) +
		", env: {" + tag + ": \"1\"}}\n      answers: [\"x\"]\n      faults: [{kind: hang}]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	tagged := func() []int { return proctest.WithEnv(t, tag+"=1") }
	if pids := tagged(); len(pids) > 0 { // and, without /proc, a skip before anything starts
		t.Fatalf("processes tagged before the run: %v", pids)
	}
	cmd := exec.Command(binary, "--config", cfg, "--no-display", "q")
	cmd.Dir = work
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var out strings.Builder
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "mcp server everything: ready") {
			if len(tagged()) == 0 {
				t.Error("the MCP server is not running while the session is")
			}
			_ = cmd.Process.Signal(syscall.SIGINT)
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	if pids := tagged(); len(pids) > 0 {
		t.Fatalf("processes left after the run: %v", pids)
	}
}
