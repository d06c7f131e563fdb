package cli

import (
	"testing"

	"massgen/internal/eval"
)

// TestEval_ChecklistGate runs examples/eval/twelve.jsonl (four items, every answer 12) with the
// team of examples/eval/checklist.yaml and, for comparison, the same team ungated
// (examples/eval/longest.yaml). Figures by hand: verbose says 11 at length, terse says 12,
// judge says "I make it 12.". Ungated all three vote for the longest answer, verbose's: voted
// 0/4, one self vote per item (verbose's). Gated, terse and judge rank terse's answer best
// (correctness first; judge's ties it and terse is the earlier agent) and verbose its own:
// terse wins 2-1 on every item, voted 4/4, two self votes per item (verbose, terse).
// Both: oracle@3 4/4 (terse, judge), majority of the first answers 4/4 (12 twice), no
// agreement (11 against 12).
func TestEval_ChecklistGate(t *testing.T) {
	for _, tc := range []struct {
		team        string
		voted, self int
		oracle, maj int
		agreeing    int
		agentsRight map[string]int
	}{
		{"examples/eval/longest.yaml", 0, 4, 4, 4, 0, map[string]int{"verbose": 0, "terse": 4, "judge": 4}},
		{"examples/eval/checklist.yaml", 4, 8, 4, 4, 0, map[string]int{"verbose": 0, "terse": 4, "judge": 4}},
	} {
		t.Run(tc.team, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, s, stderr := evalSummary(t, t.Context(), repoFile(t, "examples/eval/twelve.jsonl"), "--config", repoFile(t, tc.team))
			if code != ExitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, c := range []struct {
				name string
				got  eval.Ratio
				n    int
			}{
				{"voted", s.Voted, tc.voted}, {"oracle", s.OracleLatest, tc.oracle},
				{"majority", s.Majority, tc.maj}, {"agreement", s.Agreement, tc.agreeing},
			} {
				if c.got.N != c.n || c.got.Of != 4 {
					t.Errorf("%s = %d/%d, want %d/4", c.name, c.got.N, c.got.Of, c.n)
				}
			}
			if s.SelfVotes.N != tc.self || s.SelfVotes.Of != 12 {
				t.Errorf("self votes %d/%d, want %d/12", s.SelfVotes.N, s.SelfVotes.Of, tc.self)
			}
			for _, a := range s.Agents {
				if a.Last.N != tc.agentsRight[a.ID] {
					t.Errorf("%s right on %d items, want %d", a.ID, a.Last.N, tc.agentsRight[a.ID])
				}
			}
		})
	}
}
