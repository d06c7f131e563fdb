package view

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// session is a small recorded session: two agents, an improvement that invalidates a vote, a
// stale vote, a rejected call, an error, and a streamed final presentation.
func session() []event.Event {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	ps := []event.Payload{
		event.SessionStarted{Question: "What is the capital of France?", Turn: 1, SessionID: "log_x", LogDir: "logs/log_x/turn_1",
			Agents: []event.AgentInfo{{ID: "alice", Label: "agent1", Backend: "scripted", Model: "m1"}, {ID: "bob", Label: "agent2", Backend: "scripted", Model: "m2"}}},
		event.TextDelta{Agent: "alice", Text: "Paris is"},
		event.TextDelta{Agent: "bob", Text: "Lyon?\nNo: "},
		event.TextDelta{Agent: "alice", Text: " the capital."},
		event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "Paris is the capital.", Version: 1},
		event.UsageReported{Agent: "alice", Usage: provider.Usage{InputTokens: 1200, CachedInputTokens: 200, OutputTokens: 80, ReasoningTokens: 20}, CostUSD: 0.0123},
		event.TextDelta{Agent: "bob", Text: "Paris."},
		event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: "Paris.", Version: 2},
		event.ToolRejected{Agent: "alice", Tool: "vote", Error: `invalid agent_id "agent9"; valid agents: agent1, agent2`},
		event.VoteCast{Agent: "alice", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "Complete.", Version: 2},
		event.AnswerSubmitted{Agent: "bob", Label: "agent2.2", Content: "Paris, on the Seine.", Version: 3, Invalidated: []string{"alice"}},
		event.VoteIgnored{Agent: "alice", TargetLabel: "agent1", SeenVersion: 2, CurrentVersion: 3},
		event.AgentError{Agent: "alice", Message: "scripted: scripted failure", Consecutive: 1, Budget: 3},
		event.VoteCast{Agent: "alice", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.2", Reason: "Adds the river.", Version: 3},
		event.VoteCast{Agent: "bob", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.2", Reason: "Most complete.", Version: 3},
		event.CoordinationEnded{Reason: event.EndConsensus, Winner: "bob", WinnerLabel: "agent2", AnswerLabel: "agent2.2",
			Tally: []event.Tally{{Agent: "alice", Label: "agent1"}, {Agent: "bob", Label: "agent2", Votes: 2, Voters: []string{"alice", "bob"}}}},
		event.FinalStarted{Agent: "bob", Mode: "regenerate"},
		event.TextDelta{Agent: "bob", Text: "**Paris**, on the Seine.", Presentation: true},
		event.FinalAnswer{Agent: "bob", Label: "agent2.final", Content: "**Paris**, on the Seine.", Mode: "regenerate"},
		event.SessionEnded{Status: event.StatusCompleted, DurationSeconds: 2.5},
	}
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.Event{Seq: int64(i + 1), Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), Payload: p}
	}
	return evs
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestViews_Golden(t *testing.T) {
	tests := []struct {
		name string
		sink func(*bytes.Buffer) event.Sink
	}{
		{"plain.golden", func(b *bytes.Buffer) event.Sink { return NewPlain(b) }},
		{"plain_log.golden", func(b *bytes.Buffer) event.Sink {
			p := NewPlain(b)
			p.Timestamps, p.Reasoning, p.Calls = true, true, true
			return p
		}},
		{"automation.golden", func(b *bytes.Buffer) event.Sink { return NewAutomation(b) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			s := tc.sink(&b)
			for _, e := range session() {
				s.Handle(e)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

func TestPlain_VerbatimAndFallbackPrintTheAnswer(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		var b bytes.Buffer
		p := NewPlain(&b)
		p.Handle(event.Event{Payload: event.SessionStarted{Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}}}})
		p.Handle(event.Event{Payload: event.FinalStarted{Agent: "a", Mode: "verbatim"}})
		p.Handle(event.Event{Payload: event.FinalAnswer{Agent: "a", Content: "The stored answer.", Fallback: fallback}})
		if !bytes.Contains(b.Bytes(), []byte("The stored answer.")) {
			t.Errorf("fallback=%v: answer not printed:\n%s", fallback, b.String())
		}
	}
}
