package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLiveView_OneShotLeavesFinalScreen: a one-shot run in a real terminal returns to the
// shell by itself once the session ends (no q), and its final screen stays on the terminal.
func TestLiveView_OneShotLeavesFinalScreen(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo in tmux (7 s)")
	}
	demo, err := filepath.Abs("../../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	screen, _ := tmuxSession(t, work, "cd "+work+" && "+binary+" --config "+demo+" 'What is the capital of France?'; echo EXIT=\\$?; sleep 30")
	after := waitFor(t, screen, "EXIT=", 30*time.Second)
	for _, want := range []string{"EXIT=0", "done · winner agent1 (researcher)", "Final answer · agent1 (researcher)",
		"Versailles was the royal seat from 1682 to 1789.", "Votes", "Usage", "total "} {
		if !strings.Contains(after, want) {
			t.Errorf("the terminal after the run lacks %q:\n%s", want, after)
		}
	}
	if strings.Contains(after, "q quit") {
		t.Errorf("the view's footer was left behind:\n%s", after)
	}
}
