package runlog

import (
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
)

func TestReport_FilesAndFold(t *testing.T) {
	all := session().events
	cut := fold(all[:len(all)-1]) // no session_ended
	files := TurnSummary{N: 1, Dir: "/logs/log_x/turn_1", Question: "from the files", Status: event.StatusCompleted, Winner: "carol",
		Duration: 9, Usage: provider.Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: 0.5, CostKnown: true}
	now := t0.Add(time.Hour)
	cases := []struct {
		name       string
		sum        TurnSummary
		st         *readmodel.State
		status     string
		winner     string
		duration   float64
		withAgents bool
	}{
		{"files only", files, nil, event.StatusCompleted, "carol", 9, false},
		{"the fold wins", files, fold(all), event.StatusCompleted, "bob", 0.565, true},
		{"a log without its end, nothing else known", TurnSummary{N: 1, Status: StatusUnknown}, cut, StatusIncomplete, "bob", -1, true},
		{"a running turn lasts until now", TurnSummary{N: 1, Status: StatusRunning}, cut, StatusRunning, "bob", time.Hour.Seconds(), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Report(c.sum, c.st, now)
			if r.Status != c.status || r.Winner != c.winner || (c.duration >= 0 && r.DurationSeconds != c.duration) {
				t.Errorf("status %q winner %q duration %v, want %q %q %v", r.Status, r.Winner, r.DurationSeconds, c.status, c.winner, c.duration)
			}
			if got := len(r.Agents) > 0; got != c.withAgents {
				t.Errorf("agents %+v", r.Agents)
			}
			if c.st == nil {
				if r.Tokens != (Tokens{Input: 10, Output: 5, Total: 15}) || r.Latency != nil || r.Votes == nil || r.Tally == nil {
					t.Errorf("files-only report %+v", r)
				}
				return
			}
			if len(r.Votes) == 0 || len(r.Tally) == 0 || r.Latency == nil || r.Latency.Summary == "" || r.Tokens.Total != r.Tokens.Input+r.Tokens.Output {
				t.Errorf("folded report %+v", r)
			}
			n := 0
			for _, tl := range r.Tally {
				n += tl.Votes
			}
			if n != len(r.Votes) {
				t.Errorf("the tally counts %d votes, the voters %d", n, len(r.Votes))
			}
		})
	}
}
