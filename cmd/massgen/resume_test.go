package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/runlog"
)

// outcome is how a session ended, as its log says.
type outcome struct {
	winner, final string
	events        int
}

// TestKillAndResume is issue 15's test: kill -9 of a real massgen at 20 moments of a scripted
// session (seeded, spread over its events from the first to the final presentation's), then
// massgen resume, must end with the winner and the final answer of the uninterrupted run.
// Every fifth resume is killed too and resumed again.
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("20 killed and resumed sessions take about 30 s")
	}
	team, err := filepath.Abs("testdata/resume_team.yaml")
	if err != nil {
		t.Fatal(err)
	}
	question := "What is the capital of France?"
	base := t.TempDir()
	start := func(root string, args ...string) *exec.Cmd {
		cmd := exec.Command(binary, args...)
		cmd.Dir = base
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	want := func() outcome {
		root := filepath.Join(base, "baseline")
		cmd := start(root, "--config", team, "--automation", "--log-root", root, question)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("uninterrupted run: %v", err)
		}
		return ended(t, sessionDir(t, root))
	}()
	if want.winner == "" || want.final == "" {
		t.Fatalf("uninterrupted run: %+v", want)
	}
	rng := rand.New(rand.NewPCG(15, 2))
	phases := map[string]int{}
	for k := range 20 {
		root := filepath.Join(base, "run"+string(rune('a'+k)))
		at := 1 + rng.IntN(want.events-1)
		cmd := start(root, "--config", team, "--automation", "--log-root", root, question)
		phase := killAt(t, cmd, root, at)
		phases[phase]++
		dir := sessionDir(t, root)
		if phase == "finished" {
			_ = exec.Command(binary, "resume", dir).Run() // as above
			continue
		}
		again := ""
		if k%5 == 4 {
			// The resume dies too; the one after it takes up both.
			res := start(root, "resume", dir, "--automation")
			again = killAt(t, res, root, at+1+rng.IntN(want.events/3+1))
		}
		if again == "finished" {
			// Killed, maybe, right after its end: a resume brings the files up to date.
			_ = exec.Command(binary, "resume", dir).Run()
		} else {
			out, err := exec.Command(binary, "resume", dir, "--automation").CombinedOutput()
			if err != nil {
				t.Fatalf("kill %d (event %d, %s): resume: %v\n%s", k, at, phase, err, out)
			}
		}
		got := ended(t, dir)
		if got.winner != want.winner || got.final != want.final {
			t.Errorf("kill %d (event %d, %s): winner %q, final %q; the uninterrupted run: %q, %q",
				k, at, phase, got.winner, got.final, want.winner, want.final)
		}
	}
	t.Logf("kills by phase: %v (of %d events)", phases, want.events)
	if phases["coordination"] == 0 || phases["presentation"] == 0 {
		t.Errorf("the kills missed a phase: %v", phases)
	}
}

// killAt kills cmd with SIGKILL once the session under root has logged n events, and says in
// which phase the log then was ("finished" when the process ended first).
func killAt(t *testing.T, cmd *exec.Cmd, root string, n int) string {
	t.Helper()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-exited:
			return "finished"
		case <-deadline:
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("the session under %s never logged %d events", root, n)
		case <-time.After(time.Millisecond):
		}
		files, _ := filepath.Glob(filepath.Join(root, "log_*", "turn_1", "events.jsonl"))
		if len(files) == 0 {
			continue
		}
		data, _ := os.ReadFile(files[0])
		if bytes.Count(data, []byte("\n")) < n {
			continue
		}
		_ = cmd.Process.Kill()
		<-exited
		data, _ = os.ReadFile(files[0])
		switch {
		case bytes.Contains(data, []byte(`"type":"session_ended"`)):
			return "finished"
		case bytes.Contains(data, []byte(`"type":"final_started"`)):
			return "presentation"
		}
		return "coordination"
	}
}

func sessionDir(t *testing.T, root string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "log_*"))
	if len(dirs) != 1 {
		t.Fatalf("%s holds %d sessions, want 1", root, len(dirs))
	}
	return dirs[0]
}

// ended reads how the session in dir ended: it must have ended, once, and completed.
func ended(t *testing.T, dir string) outcome {
	t.Helper()
	turn := filepath.Join(dir, "turn_1")
	tr, err := runlog.ReadTurn(turn)
	if err != nil {
		t.Fatal(err)
	}
	s := tr.State
	if !s.Ended || s.SessionStatus != event.StatusCompleted || s.Final == nil {
		t.Fatalf("%s: ended %v, status %q, final %v", turn, s.Ended, s.SessionStatus, s.Final != nil)
	}
	var st struct {
		Meta struct {
			Status string `json:"status"`
		} `json:"meta"`
		Results struct {
			Winner string `json:"winner"`
		} `json:"results"`
	}
	data, err := os.ReadFile(filepath.Join(turn, "status.json"))
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil || st.Meta.Status != event.StatusCompleted || st.Results.Winner != s.Winner {
		t.Fatalf("%s: status.json %s (%v)", turn, data, err)
	}
	answer, err := os.ReadFile(filepath.Join(turn, "final", s.Winner, "answer.txt"))
	if err != nil || strings.TrimSpace(string(answer)) != strings.TrimSpace(s.Final.Content) {
		t.Fatalf("%s: final/%s/answer.txt %q (%v), the log's final answer %q", turn, s.Winner, answer, err, s.Final.Content)
	}
	return outcome{winner: s.Winner, final: s.Final.Content, events: len(tr.Events)}
}
