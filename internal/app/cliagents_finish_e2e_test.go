package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/cliagent/clitest"
)

// A Claude Code agent whose model keeps calling vote after coordination ended is stopped
// within seconds, and what it spent is counted, estimated and said so (new-user review M2:
// about 200 requests over 30 s, none of them counted).
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
	res, err := Run(t.Context(), cfg, Options{Question: "Write a file.", Logging: true, LogRoot: t.TempDir(),
		WorkspaceRoot: clitest.StateDir(t), Getenv: func(k string) string { return keys[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %v", res.ExitCode, res.Err)
	}
	events, err := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ended, final time.Time
	var warning string
	var ccUsage struct {
		Input     int64 `json:"input_tokens"`
		Estimated bool  `json:"estimated"`
	}
	for _, line := range strings.Split(string(events), "\n") {
		var e struct {
			Time time.Time `json:"time"`
			Type string    `json:"type"`
			Data struct {
				Agent        string          `json:"agent"`
				Message      string          `json:"message"`
				Presentation bool            `json:"presentation"`
				Usage        json.RawMessage `json:"usage"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch {
		case e.Type == "coordination_ended":
			ended = e.Time
		case e.Type == "final_started":
			final = e.Time
		case e.Type == "agent_error" && e.Data.Agent == "cc" && !ended.IsZero():
			warning = e.Data.Message
		case e.Type == "usage_reported" && e.Data.Agent == "cc" && !ended.IsZero() && final.IsZero():
			_ = json.Unmarshal(e.Data.Usage, &ccUsage)
		}
	}
	if ended.IsZero() || final.IsZero() {
		t.Fatalf("no coordination_ended or final_started in %s", events)
	}
	if wait := final.Sub(ended); wait > 12*time.Second {
		t.Errorf("the presentation started %s after coordination ended: the CLI was not stopped promptly", wait)
	}
	if n := brains["cc"].Requests(); n > 15 {
		t.Errorf("cc's CLI made %d model requests: it went on voting", n)
	}
	if t.Failed() || !ccUsage.Estimated {
		_, tail, _ := strings.Cut(string(events), `"coordination_ended"`)
		t.Logf("cc's model saw %d requests; events after coordination ended:\n%s", brains["cc"].Requests(), tail)
	}
	if !ccUsage.Estimated || ccUsage.Input <= 0 {
		t.Errorf("cc's usage after coordination = %+v, want an estimate with input > 0", ccUsage)
	}
	if !strings.Contains(warning, "was stopped after") || !strings.Contains(warning, "its usage is estimated") {
		t.Errorf("warning = %q, want one saying the CLI was stopped and its usage estimated", warning)
	}
}
