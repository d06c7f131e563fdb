package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/cliagent/clitest"
	"massgen/internal/event"
)

// A Claude Code agent whose model keeps calling vote after coordination ended is stopped
// within seconds, and what it spent is counted, estimated and said so (new-user review M2:
// about 200 requests over 30 s, none of them counted). cc votes and waits on its vote while
// claude votes; consensus answers cc's vote with "stop now", and its model votes again.
func TestE2E_CLIAgentThatWillNotStopIsStoppedAndBilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real CLIs")
	}
	t.Parallel()
	claude := cliMembers[0]
	cc := claude
	cc.id = "cc"
	scripts := map[string]clitest.Script{
		"claude": {File: "a.txt", Content: "a"},
		"cc":     {File: "b.txt", Content: "b", Relentless: true},
	}
	cfg, brains := cliTeam(t, []cliMember{claude, cc}, scripts, "")
	var rec recorder
	res, err := Run(t.Context(), cfg, Options{Question: "Write a file.", Logging: true, LogRoot: t.TempDir(),
		WorkspaceRoot: clitest.StateDir(t), Getenv: func(k string) string { return keys[k] }, Sinks: []event.Sink{&rec}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "claude" {
		t.Fatalf("exit %d, winner %q: %v", res.ExitCode, res.Winner, res.Err)
	}
	// The last vote ends coordination; coordination_ended waits for the CLIs' wrap-up, which
	// used to last until the engine's 10 s bound (30 s before it).
	var lastVote, ended time.Time
	var ccUsage []event.UsageReported
	var warning string
	for _, e := range rec.all() {
		switch p := e.Payload.(type) {
		case event.VoteCast:
			lastVote = e.Time
		case event.CoordinationEnded:
			ended = e.Time
		case event.UsageReported:
			if p.Agent == "cc" && ended.IsZero() && !lastVote.IsZero() {
				ccUsage = append(ccUsage, p)
			}
		case event.AgentError:
			if p.Agent == "cc" && ended.IsZero() {
				warning = p.Message
			}
		}
	}
	if lastVote.IsZero() || ended.IsZero() {
		t.Fatalf("no vote_cast or coordination_ended: %+v", rec.all())
	}
	if wait := ended.Sub(lastVote); wait > 8*time.Second {
		t.Errorf("coordination_ended came %s after the last vote: the CLI was not stopped promptly", wait)
	}
	// Finish answers the vote cc waits on, then two more calls; the third is not answered.
	if n := brains["cc"].Told(); n == 0 || n > 3 {
		t.Errorf("cc's model got %d requests after it was told coordination had ended, want 1 to 3", n)
	}
	if len(ccUsage) != 1 || !ccUsage[0].Usage.Estimated || ccUsage[0].Usage.InputTokens <= 0 {
		t.Errorf("cc's usage reported at its wrap-up = %+v, want one estimate with input > 0", ccUsage)
	}
	if !strings.Contains(warning, "was stopped after") || !strings.Contains(warning, "its usage is estimated") {
		t.Errorf("warning = %q, want one saying the CLI was stopped and its usage estimated", warning)
	}
	if u := statusUsage(t, res.Dir, "cc"); !u.Estimated || u.Input <= 0 {
		t.Errorf("cc's usage in status.json = %+v, want an estimate with input > 0", u)
	}
}

// A Ctrl-C while a Claude Code agent waits on its vote still counts what its run used: the
// CLI reports usage only when a run ends, and the run is stopped instead. claude's model never
// answers, so coordination is still going on when cc has voted.
func TestE2E_CLIAgentInterruptedWhileWaitingIsBilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real CLIs")
	}
	t.Parallel()
	claude := cliMembers[0]
	cc := claude
	cc.id = "cc"
	scripts := map[string]clitest.Script{
		"claude": {File: "a.txt", Content: "a", Hang: true},
		"cc":     {File: "b.txt", Content: "b", Vote: "agent2"},
	}
	cfg, brains := cliTeam(t, []cliMember{claude, cc}, scripts, "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := recorder{on: func(e event.Event) {
		if v, ok := e.Payload.(event.VoteCast); ok && v.Agent == "cc" {
			cancel() // as Ctrl-C does
		}
	}}
	res, err := Run(ctx, cfg, Options{Question: "Write a file.", Logging: true, LogRoot: t.TempDir(),
		WorkspaceRoot: clitest.StateDir(t), Getenv: func(k string) string { return keys[k] }, Sinks: []event.Sink{&rec}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != ExitInterrupted {
		t.Fatalf("exit %d, want %d (interrupted): %v", res.ExitCode, ExitInterrupted, res.Err)
	}
	var voted bool
	for _, e := range rec.all() {
		if v, ok := e.Payload.(event.VoteCast); ok && v.Agent == "cc" {
			voted = true
		}
	}
	if !voted {
		t.Fatal("cc never voted: the test interrupted something else")
	}
	if n := brains["cc"].Told(); n != 0 {
		t.Errorf("cc's model got %d requests after the interrupt, want none", n)
	}
	if u := statusUsage(t, res.Dir, "cc"); !u.Estimated || u.Input <= 0 {
		t.Errorf("cc's usage in status.json = %+v, want an estimate with input > 0", u)
	}
}

// recorder keeps every event of a session, and calls on (when set) with each.
type recorder struct {
	on func(event.Event)

	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) Handle(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	if r.on != nil {
		r.on(e)
	}
}

func (r *recorder) all() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

type statusTokens struct {
	Input     int64 `json:"input_tokens"`
	Estimated bool  `json:"estimated"`
}

// statusUsage is an agent's usage as the turn's status.json shows it.
func statusUsage(t *testing.T, dir, agent string) statusTokens {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		Agents map[string]struct {
			Usage statusTokens `json:"usage"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		t.Fatal(err)
	}
	return status.Agents[agent].Usage
}
