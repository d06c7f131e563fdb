package eval

import (
	"fmt"
	"math"
	"testing"
)

// TestSummarize_IndependentAgents is the check: three independent agents right 70% of
// the time each. Over 1,000 items laid out in the exact proportions (343 all right, 147 for
// each pair, 63 for each one alone, 27 none right) oracle@3 is 1 - 0.3^3 = 97.3% and the
// majority of three 0.7^3 + 3 * 0.7^2 * 0.3 = 78.4%, the wrong answers agreeing with each
// other. The team's vote here picks agent 1's answer, so it scores agent 1's 70%.
func TestSummarize_IndependentAgents(t *testing.T) {
	patterns := []struct {
		right [3]bool
		n     int
	}{
		{[3]bool{true, true, true}, 343},
		{[3]bool{true, true, false}, 147}, {[3]bool{true, false, true}, 147}, {[3]bool{false, true, true}, 147},
		{[3]bool{true, false, false}, 63}, {[3]bool{false, true, false}, 63}, {[3]bool{false, false, true}, 63},
		{[3]bool{false, false, false}, 27},
	}
	var items []Item
	recs := map[string]Record{}
	for _, p := range patterns {
		for range p.n {
			id := fmt.Sprintf("q%d", len(items)+1)
			it := Item{ID: id, Grader: GraderNumeric, Answers: []string{"42"}, Tolerance: DefaultTolerance}
			items = append(items, it)
			rec := Record{ID: id, Status: StatusOK, CostKnown: true}
			for k, right := range p.right {
				ans := "The answer is 41."
				if right {
					ans = "The answer is 42."
				}
				rec.Agents = append(rec.Agents, AgentRecord{ID: fmt.Sprintf("a%d", k+1), Answers: []string{ans}})
			}
			rec.Final = rec.Agents[0].Answers[0]
			recs[id] = rec
		}
	}
	s := Summarize(items, recs)
	check := func(name string, got Ratio, n, of int) {
		t.Helper()
		if got.N != n || got.Of != of || math.Abs(got.Rate-float64(n)/float64(of)) > 1e-12 {
			t.Errorf("%s = %+v, want %d/%d", name, got, n, of)
		}
	}
	check("oracle latest", s.OracleLatest, 973, 1000)
	check("oracle any", s.OracleAny, 973, 1000)
	check("majority", s.Majority, 784, 1000)
	check("voted", s.Voted, 700, 1000)
	// Agreement: all right (343) or all wrong (27), the wrong answers being the same.
	check("agreement", s.Agreement, 370, 1000)
	for _, a := range s.Agents {
		check(a.ID+" first", a.First, 700, 1000)
		check(a.ID+" last", a.Last, 700, 1000)
	}
	if s.Graded != 1000 || s.Failed != 0 || s.Pending != 0 {
		t.Errorf("graded %d, failed %d, pending %d; want 1000, 0, 0", s.Graded, s.Failed, s.Pending)
	}
}

// TestSummarize_Spend checks the sums: tokens and cost over every finished item (failed ones
// too), accuracy over the graded ones only, cost unknown as soon as one item's is.
func TestSummarize_Spend(t *testing.T) {
	items := []Item{
		{ID: "a", Grader: GraderExact, Answers: []string{"x"}},
		{ID: "b", Grader: GraderExact, Answers: []string{"x"}},
		{ID: "c", Grader: GraderExact, Answers: []string{"x"}},
		{ID: "d", Grader: GraderExact, Answers: []string{"x"}},
	}
	recs := map[string]Record{
		"a": {ID: "a", Status: StatusOK, Final: "x", Tokens: Tokens{100, 40, 10, 5}, CostUSD: 0.25, CostKnown: true, Seconds: 2,
			Agents: []AgentRecord{{ID: "p", Answers: []string{"x"}, CostUSD: 0.2, FirstCostUSD: 0.1, FirstTokens: Tokens{Input: 50}}},
			Votes:  []Vote{{"p", "p"}, {"q", "p"}}},
		"b": {ID: "b", Status: StatusOK, Final: "y", Tokens: Tokens{200, 0, 20, 0}, CostUSD: 0.5, CostKnown: false, Seconds: 4,
			Agents: []AgentRecord{{ID: "p", Answers: []string{"y", "x"}, CostUSD: 0.4, FirstCostUSD: 0.3, FirstTokens: Tokens{Input: 70}}},
			Votes:  []Vote{{"q", "q"}}},
		"c": {ID: "c", Status: StatusFailed, Error: "every agent failed", Tokens: Tokens{Input: 7}, CostUSD: 0.01, CostKnown: true, Seconds: 6},
		// "d" has not run.
		"other": {ID: "other", Status: StatusOK, Final: "x", Tokens: Tokens{Input: 1000}}, // not in the dataset
	}
	s := Summarize(items, recs)
	if want := (Tokens{307, 40, 30, 5}); s.Tokens != want {
		t.Errorf("tokens = %+v, want %+v", s.Tokens, want)
	}
	if math.Abs(s.CostUSD-0.76) > 1e-12 || s.CostKnown {
		t.Errorf("cost = %v known %v, want 0.76 unknown", s.CostUSD, s.CostKnown)
	}
	if s.Graded != 2 || s.Failed != 1 || s.Pending != 1 || s.Items != 4 {
		t.Errorf("items %d graded %d failed %d pending %d; want 4 2 1 1", s.Items, s.Graded, s.Failed, s.Pending)
	}
	if s.Voted != (Ratio{1, 2, 0.5}) {
		t.Errorf("voted = %+v, want 1/2", s.Voted)
	}
	if s.SelfVotes != (Ratio{2, 3, 2.0 / 3}) {
		t.Errorf("self votes = %+v, want 2/3", s.SelfVotes)
	}
	if s.ItemSeconds != (Seconds{Total: 12, Mean: 4, Max: 6}) {
		t.Errorf("item seconds = %+v, want 12 total, 4 mean, 6 max", s.ItemSeconds)
	}
	if len(s.Agents) != 1 {
		t.Fatalf("agents = %+v, want p only", s.Agents)
	}
	p := s.Agents[0]
	if p.First != (Ratio{1, 2, 0.5}) || p.Last != (Ratio{2, 2, 1}) || math.Abs(p.CostUSD-0.6) > 1e-12 || math.Abs(p.FirstCostUSD-0.4) > 1e-12 || p.FirstTokens.Input != 120 {
		t.Errorf("agent p = %+v", p)
	}
	if s.OracleLatest != (Ratio{2, 2, 1}) || s.OracleAny != (Ratio{2, 2, 1}) {
		t.Errorf("oracle latest %+v any %+v, want 2/2 each", s.OracleLatest, s.OracleAny)
	}
}

// TestSummarize_CallsPerItem splits the team's calls and tokens by whether the first answers
// agreed, counts graded items only, and names the best member with what its first answers cost.
func TestSummarize_CallsPerItem(t *testing.T) {
	items := []Item{
		{ID: "same", Grader: GraderExact, Answers: []string{"x"}},
		{ID: "split", Grader: GraderExact, Answers: []string{"x"}},
		{ID: "split2", Grader: GraderExact, Answers: []string{"x"}},
		{ID: "failed", Grader: GraderExact, Answers: []string{"x"}},
	}
	agents := func(p, q string, pCalls int) []AgentRecord {
		return []AgentRecord{
			{ID: "p", Answers: []string{p}, FirstCalls: pCalls, FirstTokens: Tokens{Input: 100, Output: 10}},
			{ID: "q", Answers: []string{q}, FirstCalls: 1, FirstTokens: Tokens{Input: 100, Output: 30}},
		}
	}
	recs := map[string]Record{
		"same":   {ID: "same", Status: StatusOK, Final: "x", Calls: 3, Tokens: Tokens{Input: 400, Output: 100}, Agents: agents("x", "x", 1)},
		"split":  {ID: "split", Status: StatusOK, Final: "x", Calls: 5, Tokens: Tokens{Input: 900, Output: 100}, Agents: agents("x", "y", 2)},
		"split2": {ID: "split2", Status: StatusOK, Final: "y", Calls: 7, Tokens: Tokens{Input: 1100, Output: 100}, Agents: agents("y", "x", 3)},
		"failed": {ID: "failed", Status: StatusFailed, Calls: 99, Tokens: Tokens{Input: 9999}},
	}
	s := Summarize(items, recs)
	want := Spend{Team: PerItem{Calls: 5, Tokens: 900}, Agree: PerItem{Calls: 3, Tokens: 500}, AgreeItems: 1,
		Disagree: PerItem{Calls: 6, Tokens: 1100}, DisagreeItems: 2, Majority: PerItem{Calls: 3, Tokens: 240}}
	if s.Spend != want {
		t.Errorf("spend = %+v, want %+v", s.Spend, want)
	}
	if s.Calls != 114 {
		t.Errorf("calls = %d, want 114 (every finished item)", s.Calls)
	}
	// p and q are right on 2 of 3 each: the first in order is the best.
	if len(s.BestMember) != 1 || s.BestMember[0] != (Baseline{Agent: "p", Samples: 1, Accuracy: Ratio{2, 3, 2.0 / 3}, Spend: PerItem{Calls: 2, Tokens: 110}}) {
		t.Errorf("best member = %+v", s.BestMember)
	}
}
