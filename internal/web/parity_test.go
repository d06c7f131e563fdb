package web

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/event"
	"massgen/internal/readmodel"
	"massgen/internal/runlog"
)

// parityFold is what both folds must agree on for one log.
type parityFold struct {
	Winner string        `json:"winner"`
	Agents []parityAgent `json:"agents"`
}

type parityAgent struct {
	ID        string  `json:"id"`
	Rounds    int     `json:"rounds"`
	Answers   int     `json:"answers"`
	Votes     int     `json:"votes"`
	Reminders int     `json:"reminders"`
	Input     int64   `json:"input"`
	Cached    int64   `json:"cached"`
	Output    int64   `json:"output"`
	Reasoning int64   `json:"reasoning"`
	Cost      float64 `json:"cost"`
}

// TestStateJS_Parity folds real logs (the scripted demo team's, and the same run with a soft
// round timeout) in Go and in the dashboard's state.js, and compares rounds, answers, votes,
// usage, winner and the reminders shown: the browser re-folds the events it streams, so the
// two folds must not drift.
func TestStateJS_Parity(t *testing.T) {
	node, env := nodeEnv(t, nil, false)
	logs, err := filepath.Glob(filepath.Join("testdata", "parity", "*.jsonl"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no parity logs: %v", err)
	}
	args := []string{"internal/web/e2e/parity.mjs"}
	for _, l := range logs {
		args = append(args, filepath.Join("internal", "web", l))
	}
	var js []parityFold
	if err := json.Unmarshal(runNode(t, node, env, args...), &js); err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		t.Run(filepath.Base(l), func(t *testing.T) {
			if diff := cmp.Diff(goFold(t, l), js[i]); diff != "" {
				t.Errorf("the Go and JS folds differ (-go +js):\n%s", diff)
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
	out := parityFold{Winner: st.Winner, Agents: []parityAgent{}}
	for _, a := range st.Agents {
		u := a.Usage
		out.Agents = append(out.Agents, parityAgent{ID: a.ID, Rounds: a.Turns, Answers: len(a.Answers), Votes: a.VotesCast,
			Reminders: reminders[a.ID], Input: u.InputTokens, Cached: u.CachedInputTokens, Output: u.OutputTokens,
			Reasoning: u.ReasoningTokens, Cost: math.Round(a.CostUSD*1e9) / 1e9})
	}
	return out
}
