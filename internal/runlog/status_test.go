package runlog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// TestStatusJSON_Golden renders status.json mid-run (after an invalidated vote, a dead agent
// and a fresh vote) and at the end.
func TestStatusJSON_Golden(t *testing.T) {
	events := session().events
	mid := 0
	for i, e := range events {
		if _, ok := e.Payload.(event.CoordinationEnded); ok {
			mid = i - 1 // before bob's vote: one current vote, bob streaming
			break
		}
	}
	running := fold(events[:mid])
	golden(t, "status_running.golden", StatusJSON(running, running.LastTime.Add(250*time.Millisecond)))
	done := fold(events)
	golden(t, "status_done.golden", StatusJSON(done, done.LastTime.Add(time.Second)))
}

func TestStatusJSON_CurrentState(t *testing.T) {
	s := started()
	long := strings.Repeat("because ", 30)
	s.add(time.Millisecond, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
		add(time.Millisecond, event.VoteCast{Agent: "bob", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "first", Version: 1}).
		add(time.Millisecond, event.AnswerSubmitted{Agent: "carol", Label: "agent3.1", Content: "C", Version: 2, Invalidated: []string{"bob"}}).
		add(time.Millisecond, event.VoteCast{Agent: "bob", Target: "carol", TargetLabel: "agent3", AnswerLabel: "agent3.1", Reason: long, Version: 2})
	var got struct {
		Coordination struct {
			Phase                string `json:"phase"`
			CompletionPercentage int    `json:"completion_percentage"`
		} `json:"coordination"`
		Agents map[string]struct {
			Status   string `json:"status"`
			VoteCast *struct {
				VotedForAgent string `json:"voted_for_agent"`
				ReasonPreview string `json:"reason_preview"`
			} `json:"vote_cast"`
			TimesRestarted int `json:"times_restarted"`
		} `json:"agents"`
		Results struct {
			Votes map[string]int `json:"votes"`
		} `json:"results"`
	}
	if err := json.Unmarshal(StatusJSON(fold(s.events), t0), &got); err != nil {
		t.Fatal(err)
	}
	bob := got.Agents["bob"]
	if bob.VoteCast == nil || bob.VoteCast.VotedForAgent != "carol" || bob.TimesRestarted != 1 {
		t.Errorf("bob = %+v, want his latest vote (for carol) and one restart", bob)
	}
	if n := len([]rune(bob.VoteCast.ReasonPreview)); n > reasonPreview {
		t.Errorf("reason preview has %d runes", n)
	}
	if len(got.Results.Votes) != 1 || got.Results.Votes["agent3.1"] != 1 {
		t.Errorf("votes = %v, want only the current vote", got.Results.Votes)
	}
	if got.Coordination.Phase != "enforcement" || got.Coordination.CompletionPercentage != 33 {
		t.Errorf("coordination = %+v", got.Coordination)
	}
}

// Usage the engine estimated for a call it cut off says so, for the agent and in the totals;
// reported usage carries no flag.
func TestStatusJSON_EstimatedUsage(t *testing.T) {
	s := started()
	s.add(time.Millisecond, event.UsageReported{Agent: "alice", Usage: provider.Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: 0.01}).
		add(time.Millisecond, event.UsageReported{Agent: "bob", Usage: provider.Usage{InputTokens: 900, OutputTokens: 4000, Estimated: true}, CostUSD: 0.06})
	type tokens struct {
		InputTokens int64 `json:"input_tokens"`
		Estimated   *bool `json:"estimated"`
	}
	var got struct {
		Agents map[string]struct {
			Usage tokens `json:"usage"`
		} `json:"agents"`
		Usage tokens `json:"usage"`
	}
	if err := json.Unmarshal(StatusJSON(fold(s.events), t0), &got); err != nil {
		t.Fatal(err)
	}
	if e := got.Agents["bob"].Usage.Estimated; e == nil || !*e {
		t.Errorf("bob's estimated usage is not marked: %+v", got.Agents["bob"])
	}
	if e := got.Agents["alice"].Usage.Estimated; e != nil {
		t.Errorf("alice's reported usage is marked estimated: %+v", got.Agents["alice"])
	}
	if e := got.Usage.Estimated; e == nil || !*e || got.Usage.InputTokens != 910 {
		t.Errorf("totals %+v, want 910 input tokens, marked estimated", got.Usage)
	}
}

// A CLI agent's own session id is in status.json, the latest one when it changes; other
// agents have none.
func TestStatusJSON_CLISession(t *testing.T) {
	s := started()
	s.add(time.Millisecond, event.AgentSession{Agent: "alice", SessionID: "s-1"}).
		add(time.Millisecond, event.AgentSession{Agent: "alice", SessionID: "s-2"})
	var got struct {
		Agents map[string]map[string]any `json:"agents"`
	}
	if err := json.Unmarshal(StatusJSON(fold(s.events), t0), &got); err != nil {
		t.Fatal(err)
	}
	if id := got.Agents["alice"]["cli_session_id"]; id != "s-2" {
		t.Errorf("alice's cli_session_id = %v, want s-2", id)
	}
	if id, ok := got.Agents["bob"]["cli_session_id"]; ok {
		t.Errorf("bob has a cli_session_id %v", id)
	}
}
