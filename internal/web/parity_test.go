package web

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
	"massgen/internal/runlog"
)

// parityFold is what both folds must agree on for one log.
type parityFold struct {
	Winner string `json:"winner"`
	// The orchestration restarts: the attempt that ended the log, how many it may run, and
	// the restarts.
	Attempt     int           `json:"attempt"`
	MaxAttempts int           `json:"max_attempts"`
	Restarts    int           `json:"restarts"`
	Agents      []parityAgent `json:"agents"`
	// Decision is the decision record (readmodel.Decision) as JSON, zero values dropped
	// (normalised): Go leaves them out (omitempty), the JS fold writes them.
	Decision any `json:"decision"`
}

type parityAgent struct {
	ID        string      `json:"id"`
	Rounds    int         `json:"rounds"`
	Answers   int         `json:"answers"`
	Votes     int         `json:"votes"`
	Reminders int         `json:"reminders"`
	Input     int64       `json:"input"`
	Cached    int64       `json:"cached"`
	Output    int64       `json:"output"`
	Reasoning int64       `json:"reasoning"`
	Cost      float64     `json:"cost"`
	CutOff    []parityCut `json:"cut_off"`
}

// parityCut is a call the end cut off (readmodel.CutCall; state.js's cutOff).
type parityCut struct {
	Tool    string `json:"tool"`
	Writing bool   `json:"writing"`
}

// TestStateJS_Parity folds real logs (the scripted demo team's, and the same run with a soft
// round timeout) in Go and in the dashboard's state.js, and compares rounds, answers, votes,
// usage, winner, the reminders shown and the calls the end cut off: the browser re-folds the
// events it streams, so the two folds must not drift. A third log, written here from events,
// has Answer now cut off a new_answer being written and a running tool.
func TestStateJS_Parity(t *testing.T) {
	node, env := nodeEnv(t, nil, false)
	logs, err := filepath.Glob(filepath.Join("testdata", "parity", "*.jsonl"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no parity logs: %v", err)
	}
	logs = append(logs, writeLog(t, "cut_off.jsonl", cutOffEvents()))
	for _, l := range decisionLogs() {
		logs = append(logs, writeLog(t, l.name, l.evs))
	}
	args := []string{"internal/web/e2e/parity.mjs"}
	for _, l := range logs {
		if !filepath.IsAbs(l) {
			l = filepath.Join("internal", "web", l)
		}
		args = append(args, l)
	}
	var js []parityFold
	if err := json.Unmarshal(runNode(t, node, env, args...), &js); err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		t.Run(filepath.Base(l), func(t *testing.T) {
			got := goFold(t, l)
			js[i].Decision = normalise(js[i].Decision)
			if diff := cmp.Diff(got, js[i]); diff != "" {
				t.Errorf("the Go and JS folds differ (-go +js):\n%s", diff)
			}
			if filepath.Base(l) == "restart.jsonl" && (got.Attempt != 2 || got.MaxAttempts != 3 || got.Restarts != 1) {
				t.Errorf("restart.jsonl folds to attempt %d/%d with %d restarts, want 2/3 and 1", got.Attempt, got.MaxAttempts, got.Restarts)
			}
			if filepath.Base(l) != "cut_off.jsonl" {
				return
			}
			// Equal, and not equally empty.
			want := [][]parityCut{{{Tool: "mcp__fs__list"}}, {{Tool: "new_answer", Writing: true}}, {}}
			for k, a := range got.Agents {
				if !cmp.Equal(a.CutOff, want[k]) {
					t.Errorf("%s cut off %v, want %v", a.ID, a.CutOff, want[k])
				}
			}
		})
	}
}

func goFold(t *testing.T, path string) parityFold {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	turn, err := runlog.ReadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	st := readmodel.NewState()
	reminders := map[string]int{}
	for _, e := range turn.Events {
		st.Apply(e)
		if p, ok := e.Payload.(event.EnforcementSent); ok && st.Agent(p.Agent).Reminded {
			reminders[p.Agent]++
		}
	}
	out := parityFold{Winner: st.Winner, Attempt: st.Attempt, MaxAttempts: st.MaxAttempts, Restarts: len(st.Restarts), Agents: []parityAgent{}}
	if d := st.Decision(); d != nil {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &out.Decision); err != nil {
			t.Fatal(err)
		}
		out.Decision = normalise(out.Decision)
	}
	for _, a := range st.Agents {
		u := a.Usage
		out.Agents = append(out.Agents, parityAgent{ID: a.ID, Rounds: a.Turns, Answers: len(a.Answers), Votes: a.VotesCast,
			Reminders: reminders[a.ID], Input: u.InputTokens, Cached: u.CachedInputTokens, Output: u.OutputTokens,
			Reasoning: u.ReasoningTokens, Cost: math.Round(a.CostUSD*1e9) / 1e9, CutOff: []parityCut{}})
		for _, c := range a.CutOff {
			last := &out.Agents[len(out.Agents)-1]
			last.CutOff = append(last.CutOff, parityCut{Tool: c.Tool, Writing: c.Writing})
		}
	}
	return out
}

// cutOffEvents: c answers; a runs a tool to its result, then calls another; b is writing its
// new_answer when Answer now ends coordination, and a's second tool never answers.
func cutOffEvents() []event.Payload {
	called := func(agent, id, name string) event.ToolCalled {
		return event.ToolCalled{Agent: agent, Call: provider.ToolCall{ID: id, Name: name, Arguments: `{"path":"."}`}}
	}
	agents := []event.AgentInfo{{ID: "a", Label: "agent1"}, {ID: "b", Label: "agent2"}, {ID: "c", Label: "agent3"}}
	var evs []event.Payload
	evs = append(evs, event.SessionStarted{Question: "q", Turn: 1, Agents: agents})
	for _, x := range agents {
		evs = append(evs, event.TurnStarted{Agent: x.ID}, event.ModelCalled{Agent: x.ID, Attempt: 1})
	}
	return append(evs,
		event.UsageReported{Agent: "c", Usage: provider.Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: 0.001},
		event.AnswerSubmitted{Agent: "c", Label: "agent3.1", Content: "C1", Version: 1},
		called("a", "r1", "mcp__fs__read"),
		event.ToolResult{Agent: "a", CallID: "r1", Tool: "mcp__fs__read", Content: "ok", DurationMS: 3},
		event.ModelCalled{Agent: "a", Attempt: 1},
		called("a", "r2", "mcp__fs__list"),
		event.ToolCallStreaming{Agent: "b", CallID: "w1", Tool: "new_answer", Bytes: 16},
		event.CoordinationEnded{Reason: event.EndAnswerNow, Winner: "c", WinnerLabel: "agent3", AnswerLabel: "agent3.1"},
		event.FinalAnswer{Agent: "c", Label: "agent3.final", Content: "C1", Mode: "verbatim"},
		event.SessionEnded{Status: event.StatusCompleted},
	)
}

// writeLog writes payloads as an events.jsonl named name, as the run log does, and returns its
// path.
func writeLog(t *testing.T, name string, payloads []event.Payload) string {
	t.Helper()
	var b []byte
	t0 := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	for i, p := range payloads {
		line, err := event.EncodeLine(event.Event{Seq: int64(i + 1), Time: t0.Add(time.Duration(i) * time.Millisecond), Payload: p})
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, line...)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
