package runlog

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// t0 is the start of every test session.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)

// stream builds an event sequence with Seq numbers and times relative to t0.
type stream struct {
	at     time.Duration
	events []event.Event
}

// add appends p, dt after the previous event.
func (s *stream) add(dt time.Duration, p event.Payload) *stream {
	s.at += dt
	s.events = append(s.events, event.Event{Seq: int64(len(s.events) + 1), Time: t0.Add(s.at), Payload: p})
	return s
}

func started() *stream {
	s := &stream{}
	return s.add(0, event.SessionStarted{
		Question:  "What is the best way to learn Go in a month, for someone who already writes Python?",
		Turn:      1,
		SessionID: "log_20250314_150926_535897",
		LogDir:    ".massgen/massgen_logs/log_20250314_150926_535897/turn_1",
		Agents: []event.AgentInfo{
			{ID: "alice", Label: "agent1", Backend: "openai", Model: "gpt-5"},
			{ID: "bob", Label: "agent2", Backend: "claude", Model: "claude-sonnet-4"},
			{ID: "carol", Label: "agent3", Backend: "gemini", Model: "gemini-2.5-pro"},
		},
		Settings: event.Settings{VotingSensitivity: "lenient", AnswerNovelty: "lenient", FinalPresentation: "regenerate", FailureBudget: 3, TimeoutSeconds: 1800, AgentTimeoutSeconds: 300},
	})
}

func call(agent string, fresh bool, msgs ...string) event.ModelCalled {
	m := event.ModelCalled{Agent: agent, Stage: provider.StageInitial, Attempt: 1, Fresh: fresh}
	if fresh {
		m.System = "You are " + agent + ", one of several agents answering the same question."
	}
	for _, c := range msgs {
		m.Messages = append(m.Messages, provider.Message{Role: provider.RoleUser, Content: c})
	}
	return m
}

// session is a whole run: three agents answer, one vote is invalidated by a new answer,
// carol's stale vote is ignored, carol fails three times and dies, alice and bob converge on
// bob's answer, bob presents the final answer.
func session() *stream {
	s := started()
	ms := time.Millisecond
	s.add(10*ms, event.TurnStarted{Agent: "alice", Version: 0, Fresh: true}).
		add(ms, event.TurnStarted{Agent: "bob", Version: 0, Fresh: true}).
		add(ms, event.TurnStarted{Agent: "carol", Version: 0, Fresh: true}).
		add(ms, call("alice", true, "Question: learn Go in a month?")).
		add(ms, call("bob", true, "Question: learn Go in a month?")).
		add(ms, call("carol", true, "Question: learn Go in a month?")).
		add(100*ms, event.TextDelta{Agent: "alice", Text: "Read the Tour of Go, "}).
		add(ms, event.TextDelta{Agent: "alice", Text: "then build a CLI."}).
		add(ms, event.UsageReported{Agent: "alice", Usage: provider.Usage{InputTokens: 1200, CachedInputTokens: 200, OutputTokens: 300}, CostUSD: 0.0041, Round: 1}).
		add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "Read the Tour of Go, then build a CLI.", Version: 1}).
		add(ms, event.TurnStarted{Agent: "alice", Version: 1, Available: []string{"agent1"}, Fresh: true}).
		add(ms, call("alice", true, "Question: learn Go in a month?", "agent1.1: Read the Tour of Go, then build a CLI.")).
		add(50*ms, event.VoteCast{Agent: "alice", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "It is the only answer so far.", Version: 1}).
		add(200*ms, event.UsageReported{Agent: "bob", Usage: provider.Usage{InputTokens: 1500, OutputTokens: 900, ReasoningTokens: 400, CacheWriteTokens: 1000}, CostUSD: 0.0213, Presentation: true}).
		add(0, event.AnswerSubmitted{
			Agent: "bob", Label: "agent2.1", Version: 2, Invalidated: []string{"alice"},
			Content: "Week 1: the Tour of Go and Effective Go.\nWeek 2: a CLI with cobra.\nWeek 3: an HTTP service with net/http and tests.\nWeek 4: concurrency: goroutines, channels, context, errgroup.\n",
		}).
		add(ms, event.AgentError{Agent: "carol", Message: "gemini: status 503: overloaded", Consecutive: 1, Budget: 3}).
		add(ms, event.TurnStarted{Agent: "alice", Version: 2, Available: []string{"agent1", "agent2"}, Fresh: false}).
		add(ms, call("alice", false, "New answers: agent2.1")).
		add(ms, event.TurnStarted{Agent: "bob", Version: 2, Available: []string{"agent1", "agent2"}, Fresh: true}).
		add(ms, call("bob", true, "Question: learn Go in a month?", "agent1.1: ...", "agent2.1: ...")).
		add(ms, event.TurnStarted{Agent: "carol", Version: 1, Available: []string{"agent1"}, Fresh: true}).
		add(ms, event.ToolRejected{Agent: "carol", CallID: "c1", Tool: "vote", Error: "vote: unknown agent_id \"agent9\"; valid: agent1"}).
		add(ms, event.VoteIgnored{Agent: "carol", TargetLabel: "agent1", Reason: "only one", SeenVersion: 1, CurrentVersion: 2}).
		add(ms, event.AgentError{Agent: "carol", Message: "gemini: status 503: overloaded", Consecutive: 2, Budget: 3}).
		add(ms, event.AgentError{Agent: "carol", Message: "agent timed out after 300s", Consecutive: 3, Budget: 3, Timeout: true}).
		add(0, event.AgentDead{Agent: "carol", Reason: "3 consecutive failed turns"}).
		add(40*ms, event.VoteCast{Agent: "alice", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "agent2 gives a week-by-week plan with concrete projects and covers concurrency, which agent1 lacks entirely; it is the more useful answer for a Python developer.", Version: 2}).
		add(40*ms, event.VoteCast{Agent: "bob", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "More complete.", Version: 2}).
		add(ms, event.CoordinationEnded{Reason: event.EndConsensus, Winner: "bob", WinnerLabel: "agent2", AnswerLabel: "agent2.1", Tally: []event.Tally{{Agent: "bob", Label: "agent2", Votes: 2, Voters: []string{"alice", "bob"}}}}).
		add(ms, event.FinalStarted{Agent: "bob", Mode: "regenerate"}).
		add(ms, event.ModelCalled{Agent: "bob", Stage: provider.StagePresentation, Attempt: 1, Messages: []provider.Message{{Role: provider.RoleUser, Content: "Present the final answer."}}}).
		add(100*ms, event.TextDelta{Agent: "bob", Text: "A four-week plan", Presentation: true}).
		add(ms, event.FinalAnswer{Agent: "bob", Label: "agent2.final", Mode: "regenerate", Content: "A four-week plan:\n1. Tour of Go.\n2. A CLI.\n3. An HTTP service.\n4. Concurrency.\n"}).
		add(ms, event.SessionEnded{Status: event.StatusCompleted, ExitCode: 0, DurationSeconds: 0.622})
	return s
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// fold applies events to a new State.
func fold(events []event.Event) *readmodel.State {
	s := readmodel.NewState()
	for _, e := range events {
		s.Apply(e)
	}
	return s
}
