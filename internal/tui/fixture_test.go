package tui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// updating reports whether -update was given: then golden files are rewritten. The flag is
// defined by charmbracelet/x/exp/golden, which teatest imports; it is defined here only if not.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/*.golden")
	}
}

// t0 is the start of every test session.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

const ms = time.Millisecond

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

var names = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"}

// started opens a session with n agents: the first eight have names, the rest are a<i>.
func started(n int) *stream {
	s := &stream{}
	var agents []event.AgentInfo
	models := []struct{ backend, model string }{{"openai", "gpt-5"}, {"claude", "claude-sonnet-4"}, {"gemini", "gemini-2.5-pro"}}
	for i := range n {
		id := fmt.Sprint("a", i+1)
		if i < len(names) {
			id = names[i]
		}
		mo := models[i%len(models)]
		agents = append(agents, event.AgentInfo{ID: id, Label: fmt.Sprint("agent", i+1), Backend: mo.backend, Model: mo.model})
	}
	return s.add(0, event.SessionStarted{
		Question:  "What is the best way to learn Go in a month, for someone who already writes Python every day at work?",
		Turn:      1,
		SessionID: "log_20250314_150926",
		LogDir:    ".massgen/massgen_logs/log_20250314_150926/turn_1",
		Agents:    agents,
		Settings:  event.Settings{VotingSensitivity: "lenient", AnswerNovelty: "lenient", FinalPresentation: "regenerate", FailureBudget: 3, TimeoutSeconds: 1800},
	})
}

func call(agent string) event.ModelCalled {
	return event.ModelCalled{Agent: agent, Stage: provider.StageInitial, Attempt: 1, Fresh: true}
}

const bobAnswer = "Week 1: the Tour of Go and Effective Go.\nWeek 2: a CLI with cobra.\nWeek 3: an HTTP service with net/http and tests.\nWeek 4: concurrency: goroutines, channels, context, errgroup.\n"

// midSession: alice answered and voted for bob, bob answered, carol is still thinking and
// streaming text after some reasoning.
func midSession() *stream {
	s := started(3)
	s.add(10*ms, event.TurnStarted{Agent: "alice", Version: 0, Fresh: true}).
		add(ms, event.TurnStarted{Agent: "bob", Version: 0, Fresh: true}).
		add(ms, event.TurnStarted{Agent: "carol", Version: 0, Fresh: true}).
		add(ms, call("alice")).add(ms, call("bob")).add(ms, call("carol")).
		add(100*ms, event.TextDelta{Agent: "alice", Text: "Read the Tour of Go, "}).
		add(ms, event.TextDelta{Agent: "alice", Text: "then build a CLI."}).
		add(ms, event.UsageReported{Agent: "alice", Usage: provider.Usage{InputTokens: 1200, CachedInputTokens: 200, OutputTokens: 300}, CostUSD: 0.0041}).
		add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "Read the Tour of Go, then build a CLI.", Version: 1}).
		add(100*ms, event.TextDelta{Agent: "bob", Text: bobAnswer}).
		add(ms, event.UsageReported{Agent: "bob", Usage: provider.Usage{InputTokens: 1500, OutputTokens: 900, ReasoningTokens: 400}, CostUSD: 0.0213}).
		add(ms, event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: bobAnswer, Version: 2}).
		add(ms, event.TurnStarted{Agent: "alice", Version: 2, Available: []string{"agent1", "agent2"}, Fresh: false}).
		add(ms, call("alice")).
		add(ms, event.ReasoningDelta{Agent: "carol", Text: "The user knows Python, so skip the basics and focus on types, interfaces and concurrency."}).
		add(ms, event.TextDelta{Agent: "carol", Text: "Spend the first week on the language itself: types, slices, maps, "}).
		add(ms, event.TextDelta{Agent: "carol", Text: "interfaces and errors as values.\n\nThen write small programs every day"}).
		add(10*ms, event.ToolCalled{Agent: "alice", Call: provider.ToolCall{ID: "c1", Name: "vote", Arguments: `{"agent_id":"agent2","reason":"more complete"}`}}).
		add(ms, event.VoteCast{Agent: "alice", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "agent2 gives a week-by-week plan with concrete projects and covers concurrency.", Version: 2})
	return s
}

// session is a whole run: three agents answer, alice's first vote is invalidated by bob's
// answer, carol's stale vote is ignored, carol fails three times and dies, alice and bob
// converge on bob's answer, and bob presents the final answer.
func session() *stream {
	s := started(3)
	s.add(10*ms, event.TurnStarted{Agent: "alice", Version: 0, Fresh: true}).
		add(ms, event.TurnStarted{Agent: "bob", Version: 0, Fresh: true}).
		add(ms, event.TurnStarted{Agent: "carol", Version: 0, Fresh: true}).
		add(ms, call("alice")).add(ms, call("bob")).add(ms, call("carol")).
		add(100*ms, event.TextDelta{Agent: "alice", Text: "Read the Tour of Go, then build a CLI."}).
		add(ms, event.UsageReported{Agent: "alice", Usage: provider.Usage{InputTokens: 1200, CachedInputTokens: 200, OutputTokens: 300}, CostUSD: 0.0041}).
		add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "Read the Tour of Go, then build a CLI.", Version: 1}).
		add(ms, event.TurnStarted{Agent: "alice", Version: 1, Available: []string{"agent1"}, Fresh: true}).
		add(50*ms, event.VoteCast{Agent: "alice", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "It is the only answer so far.", Version: 1}).
		add(200*ms, event.UsageReported{Agent: "bob", Usage: provider.Usage{InputTokens: 1500, OutputTokens: 900, ReasoningTokens: 400}, CostUSD: 0.0213}).
		add(0, event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Version: 2, Invalidated: []string{"alice"}, Content: bobAnswer}).
		add(ms, event.AgentError{Agent: "carol", Message: "gemini: status 503: overloaded", Consecutive: 1, Budget: 3}).
		add(ms, event.TurnStarted{Agent: "alice", Version: 2, Available: []string{"agent1", "agent2"}, Fresh: false}).
		add(ms, event.TurnStarted{Agent: "bob", Version: 2, Available: []string{"agent1", "agent2"}, Fresh: true}).
		add(ms, event.TurnStarted{Agent: "carol", Version: 1, Available: []string{"agent1"}, Fresh: true}).
		add(ms, event.ToolRejected{Agent: "carol", CallID: "c1", Tool: "vote", Error: `vote: unknown agent_id "agent9"; valid: agent1`}).
		add(ms, event.VoteIgnored{Agent: "carol", TargetLabel: "agent1", Reason: "only one", SeenVersion: 1, CurrentVersion: 2}).
		add(ms, event.AgentError{Agent: "carol", Message: "gemini: status 503: overloaded", Consecutive: 2, Budget: 3}).
		add(ms, event.AgentError{Agent: "carol", Message: "agent timed out after 300s", Consecutive: 3, Budget: 3, Timeout: true}).
		add(0, event.AgentDead{Agent: "carol", Reason: "3 consecutive failed turns"}).
		add(40*ms, event.VoteCast{Agent: "alice", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "agent2 gives a week-by-week plan with concrete projects and covers concurrency, which agent1 lacks.", Version: 2}).
		add(40*ms, event.VoteCast{Agent: "bob", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "More complete than agent1.", Version: 2}).
		add(ms, event.CoordinationEnded{Reason: event.EndConsensus, Winner: "bob", WinnerLabel: "agent2", AnswerLabel: "agent2.1", Tally: []event.Tally{{Agent: "bob", Label: "agent2", Votes: 2, Voters: []string{"alice", "bob"}}}}).
		add(ms, event.FinalStarted{Agent: "bob", Mode: "regenerate"}).
		add(100*ms, event.TextDelta{Agent: "bob", Text: "## A four-week plan", Presentation: true}).
		add(ms, event.FinalAnswer{Agent: "bob", Label: "agent2.final", Mode: "regenerate", Content: finalMD}).
		add(ms, event.SessionEnded{Status: event.StatusCompleted, ExitCode: 0, DurationSeconds: 0.57})
	return s
}

const finalMD = "## A four-week plan\n\n1. **Week 1**: the Tour of Go.\n2. **Week 2**: a CLI with `cobra`.\n3. **Week 3**: an HTTP service.\n4. **Week 4**: concurrency.\n\n```go\nfunc main() { fmt.Println(\"hello\") }\n```\n"

// eightAgents is a session with eight agents in various states, for the tabs layout.
func eightAgents() *stream {
	s := started(8)
	for i, n := range names {
		s.add(ms, event.TurnStarted{Agent: n, Fresh: true})
		if i%3 != 2 {
			s.add(ms, call(n)).add(ms, event.TextDelta{Agent: n, Text: fmt.Sprintf("%s thinks Go is learned best by writing programs.", n)})
		}
	}
	s.add(10*ms, event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: bobAnswer, Version: 1}).
		add(ms, event.VoteCast{Agent: "dave", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "good", Version: 1}).
		add(ms, event.AgentError{Agent: "erin", Message: "rate limited", Consecutive: 1, Budget: 3}).
		add(ms, event.AgentDead{Agent: "heidi", Reason: "invalid API key"})
	return s
}

// newModel returns a model of size w x h with events applied through Update, as a program
// would.
func newModel(w, h int, events []event.Event) *Model {
	m := New()
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(EventBatchMsg{Events: events})
	return m
}

// press sends keys, each a key name as tea.KeyPressMsg.String gives it.
func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// screenText is the model's view without styles, with trailing spaces trimmed per line.
func screenText(m *Model) string {
	lines := strings.Split(ansi.Strip(m.View().Content), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func teaInterrupt() tea.Msg { return tea.InterruptMsg{} }
