package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"massgen/internal/event"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "massgen-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "massgen")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
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
