package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLiveView_InTmux runs the demo in a real terminal (tmux) and reads the screen: the agents'
// columns while it runs, the final screen with the answer, and exit 0 after q.
func TestLiveView_InTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed; .ci/run installs it")
		}
		t.Skip("tmux is not installed")
	}
	demo, err := filepath.Abs("../../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	socket := filepath.Join(work, "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	script := "cd " + work + " && " + binary + " --config " + demo + " 'What is the capital of France?'; echo EXIT=$?; sleep 30"
	tmux("new-session", "-d", "-s", "demo", "-x", "160", "-y", "48", "env TERM=xterm-256color sh -c \""+script+"\"")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", socket, "kill-server").Run() })

	screen := func() string { return tmux("capture-pane", "-t", "demo", "-p") }
	waitFor := func(what string, timeout time.Duration) string {
		t.Helper()
		deadline := time.Now().Add(timeout)
		var s string
		for time.Now().Before(deadline) {
			if s = screen(); strings.Contains(s, what) {
				return s
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%q never appeared; the screen:\n%s", what, s)
		return ""
	}
	running := waitFor("agent3 historian", 15*time.Second)
	for _, want := range []string{"agent1 researcher", "agent2 skeptic", "scripted-historian", "q cancel"} {
		if !strings.Contains(running, want) {
			t.Errorf("running screen lacks %q:\n%s", want, running)
		}
	}
	final := waitFor("Final answer", 30*time.Second)
	for _, want := range []string{"Paris is the capital of France", "winner agent1 (researcher)", "3 votes", "log: .massgen/massgen_logs/log_"} {
		if !strings.Contains(final, want) {
			t.Errorf("final screen lacks %q:\n%s", want, final)
		}
	}
	tmux("send-keys", "-t", "demo", "q")
	after := waitFor("EXIT=", 10*time.Second)
	if !strings.Contains(after, "EXIT=0") || !strings.Contains(after, "logs: .massgen/massgen_logs/") {
		t.Errorf("after q:\n%s", after)
	}
}
