package event

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
)

// every holds one value of each payload type, so a new type without a decoder fails here.
var every = []Payload{
	SessionStarted{Question: "q", Turn: 1, SessionID: "log_x", Agents: []AgentInfo{{ID: "a", Label: "agent1", Backend: "scripted", VotingSensitivity: "strict"}},
		History: []provider.Message{{Role: provider.RoleUser, Content: "earlier"}},
		Settings: Settings{FinalPresentation: "synthesize", FinalAnswerStrategy: "synthesize", PresenterAgent: "a", MaxNewAnswersGlobal: 4,
			DeferVotingUntilAllAnswered: true, DisableInjection: true, SkipVoting: true, PersonaGenerator: "methodology",
			Fairness: &Fairness{Enabled: true, LeadCapAnswers: 2, MaxMidstreamInjectionsPerRound: 2},
			Rounds:   &RoundTimeouts{InitialSeconds: 60, SubsequentSeconds: 30, GraceSeconds: 10}}},
	TurnStarted{Agent: "a", Version: 2, Available: []string{"agent1"}, Fresh: true},
	ModelCalled{Agent: "a", Stage: provider.StageInitial, Attempt: 1, Fresh: true, System: "s",
		Messages: []provider.Message{{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "vote", Arguments: "{}"}}}}},
	TextDelta{Agent: "a", Text: "Par"},
	ReasoningDelta{Agent: "a", Text: "hmm", Presentation: true},
	ToolCallStreaming{Agent: "a", CallID: "c", Tool: "new_answer", Bytes: 1100},
	ToolCalled{Agent: "a", Call: provider.ToolCall{ID: "c", Name: "new_answer", Arguments: `{"content":"x"}`}},
	ToolRejected{Agent: "a", CallID: "c", Tool: "vote", Error: "invalid"},
	ToolResult{Agent: "a", CallID: "c", Tool: "mcp__everything__echo", Content: "hi", DurationMS: 1.5},
	ToolOutput{Agent: "a", CallID: "c", Tool: "execute_command", Text: "line\n"},
	ToolServerStatus{Server: "everything", Status: "ready", Detail: "12 tools"},
	PersonasGenerated{Agent: "a", Mode: "perspective", Personas: []Persona{{Agent: "a", Label: "agent1", Text: "Favour the user.", Fallback: true}}, Warning: "empty reply"},
	QuestionParaphrased{Writer: "a", Model: "openai/gpt-5-nano", Strategy: "balanced", Variants: []Paraphrase{{Agent: "a", Label: "agent1", Text: "What city is France's capital?"}, {Agent: "b", Label: "agent2", Fallback: true, Why: "it is the original"}}, Warning: "1 of 2 paraphrases passed"},
	RoundTimeout{Agent: "a", Round: 1, Phase: RoundSoft, LimitSeconds: 60, GraceSeconds: 10, ElapsedSeconds: 61.5},
	VoteDeferred{Agent: "a", TargetLabel: "agent1", Reason: "mine", Waiting: []string{"agent2"}},
	AgentWaiting{Agent: "a", Reason: "waiting for agent2"},
	CriteriaEmerged{Agent: "a", Source: CriteriaSubagent, Version: 2, SubagentID: "criteria_critic_v2", Added: []Criterion{{ID: "E5", Text: "Cites a source.", Category: "standard"}},
		Evicted: []string{"E4"}, Criteria: []Criterion{{ID: "E5", Text: "Cites a source.", Category: "standard"}}, Warning: "1 dropped"},
	RoundEvaluated{Agent: "a", Version: 1, SubagentID: "round_evaluator_v1", Report: "E1 fails: no proof.", Warning: ""},
	EnforcementSent{Agent: "a", Message: "call a tool"},
	AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "Paris", Version: 1, Invalidated: []string{"b"}},
	VoteCast{Agent: "b", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "r", Version: 1},
	VoteIgnored{Agent: "b", TargetLabel: "agent1", SeenVersion: 1, CurrentVersion: 2},
	AgentError{Agent: "b", Message: "boom", Consecutive: 1, Budget: 3, Timeout: true},
	AgentDead{Agent: "b", Reason: "3 failures"},
	AgentSession{Agent: "a", SessionID: "7f1c-session"},
	UsageReported{Agent: "a", Usage: provider.Usage{InputTokens: 10, CachedInputTokens: 2, OutputTokens: 3, ReasoningTokens: 1}, CostUSD: 0.25},
	CoordinationEnded{Reason: EndConsensus, Winner: "a", WinnerLabel: "agent1", AnswerLabel: "agent1.1", Tally: []Tally{{Agent: "a", Label: "agent1", Votes: 1, Voters: []string{"b"}}}},
	FinalStarted{Agent: "a", Mode: "regenerate", Winner: "b", Note: "presenter"},
	FinalAnswer{Agent: "a", Label: "agent1.final", Content: "Paris.", Mode: "regenerate"},
	SessionEnded{Status: StatusCompleted, DurationSeconds: 1.5},
}

func TestJSONRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bus := NewBus(func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 4000, time.UTC) })
	bus.Subscribe(w)
	var want []Event
	for _, p := range every {
		want = append(want, bus.Publish(p))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for i, e := range got {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
	}
}

func TestRead_TruncatedLastLineIsIgnored(t *testing.T) {
	b, _ := json.Marshal(Event{Seq: 1, Payload: TextDelta{Agent: "a", Text: "x"}})
	evs, err := Read(strings.NewReader(string(b) + "\n" + `{"seq":2,"type":"text_de`))
	if err != nil || len(evs) != 1 {
		t.Fatalf("got %d events, %v", len(evs), err)
	}
}

func TestRead_BadLineNamesItsNumber(t *testing.T) {
	b, _ := json.Marshal(Event{Seq: 1, Payload: TextDelta{Agent: "a", Text: "x"}})
	_, err := Read(strings.NewReader("garbage\n" + string(b) + "\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("err = %v", err)
	}
	_, err = Read(strings.NewReader(`{"seq":1,"type":"no_such_event","data":{}}` + "\n" + string(b) + "\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown event type "no_such_event"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestWriter_FlushesStateChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Handle(Event{Seq: 1, Payload: TextDelta{Agent: "a", Text: "buffered"}})
	w.Handle(Event{Seq: 2, Payload: AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "x", Version: 1}})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Fatalf("%d lines on disk before Close, want 2 (an answer flushes)", n)
	}
}
