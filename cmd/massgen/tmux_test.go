package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxSession starts script in a detached tmux session of the given size and returns a
// function that reads the screen and one that sends keys.
func tmuxSession(t *testing.T, work, script string) (screen func() string, keys func(...string)) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed; .ci/run installs it")
		}
		t.Skip("tmux is not installed")
	}
	socket := filepath.Join(work, "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", "demo", "-x", "160", "-y", "48", "env TERM=xterm-256color sh -c \""+script+"\"")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", socket, "kill-server").Run() })
	return func() string { return tmux("capture-pane", "-t", "demo", "-p") },
		func(k ...string) { tmux(append([]string{"send-keys", "-t", "demo"}, k...)...) }
}

// waitFor polls the screen until it shows what.
func waitFor(t *testing.T, screen func() string, what string, timeout time.Duration) string {
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

// TestLiveView_QuitMidRun: q while the agents work cancels the session, which exits 4 with its
// log folder written.
func TestLiveView_QuitMidRun(t *testing.T) {
	demo, err := filepath.Abs("../../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	screen, keys := tmuxSession(t, work, "cd "+work+" && "+binary+" --config "+demo+" 'What is the capital of France?'; echo EXIT=\\$?; sleep 30")
	waitFor(t, screen, "q cancel", 15*time.Second)
	keys("q")
	after := waitFor(t, screen, "EXIT=", 15*time.Second)
	if !strings.Contains(after, "EXIT=4") {
		t.Fatalf("after q mid-run:\n%s", after)
	}
	dirs, _ := filepath.Glob(filepath.Join(work, ".massgen", "massgen_logs", "log_*", "turn_1"))
	if len(dirs) != 1 {
		t.Fatalf("log folders: %v", dirs)
	}
	for _, f := range []string{"events.jsonl", "status.json", "metadata.json"} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Error(err)
		}
	}
}

// TestLiveView_InTmux runs the demo in a real terminal (tmux) and reads the screen: the agents'
// columns while it runs, the final screen with the answer, and exit 0 after q.
func TestLiveView_InTmux(t *testing.T) {
	demo, err := filepath.Abs("../../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	script := "cd " + work + " && " + binary + " --config " + demo + " 'What is the capital of France?'; echo EXIT=\\$?; sleep 30"
	screen, keys := tmuxSession(t, work, script)
	running := waitFor(t, screen, "agent3 historian", 15*time.Second)
	for _, want := range []string{"agent1 researcher", "agent2 skeptic", "scripted-historian", "q cancel"} {
		if !strings.Contains(running, want) {
			t.Errorf("running screen lacks %q:\n%s", want, running)
		}
	}
	final := waitFor(t, screen, "Final answer", 30*time.Second)
	for _, want := range []string{"Paris is the capital of France", "winner agent1 (researcher)", "3 votes", "log: " + work + "/.massgen/massgen_logs/log_"} {
		if !strings.Contains(final, want) {
			t.Errorf("final screen lacks %q:\n%s", want, final)
		}
	}
	keys("q")
	after := waitFor(t, screen, "EXIT=", 10*time.Second)
	if !strings.Contains(after, "EXIT=0") || !strings.Contains(after, "logs: "+work+"/.massgen/massgen_logs/") {
		t.Errorf("after q:\n%s", after)
	}
}

// TestReplayLive_QStopsEveryTurn: q in massgen replay --live of a session of three turns stops
// the whole replay, not only the turn it is in (review 2026-12-02: one q per turn).
func TestReplayLive_QStopsEveryTurn(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command(binary, "--config", fastDemo(t), "--no-display")
	cmd.Dir = work
	cmd.Stdin = strings.NewReader("What is the capital of France?\nAnd of Italy?\nAnd of Spain?\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("three turns: %v\n%s", err, out)
	}
	turns, _ := filepath.Glob(filepath.Join(work, ".massgen", "massgen_logs", "log_*", "turn_*"))
	if len(turns) != 3 {
		t.Fatalf("turn folders: %v", turns)
	}
	// At a thousandth of its pace a turn of the fast demo replays for many seconds.
	screen, keys := tmuxSession(t, work, "cd "+work+" && "+binary+" replay --live --speed 0.001; echo EXIT=\\$?; sleep 30")
	waitFor(t, screen, "q stop the replay", 15*time.Second)
	keys("q")
	after := waitFor(t, screen, "EXIT=", 5*time.Second)
	if !strings.Contains(after, "EXIT=0") || strings.Contains(after, "turn_2") {
		t.Errorf("after one q:\n%s", after)
	}
}
