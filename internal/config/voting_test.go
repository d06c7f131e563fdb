package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestVoteWeighting(t *testing.T) {
	dir := t.TempDir()
	weights := `{"source": "massgen eval", "models": {"gpt-4o": {"items": 50, "correct": 40, "weight": 1.358}}}`
	if err := os.WriteFile(filepath.Join(dir, "w.json"), []byte(weights), 0o644); err != nil {
		t.Fatal(err)
	}
	agents := `agents:
  - {id: a, backend: {type: openai, model: gpt-4o}}
  - {id: b, backend: {type: openai, model: gpt-4o-mini}}
`
	for _, tc := range []struct {
		name, orch string
		want       []float64 // VoteWeights
		issue      string    // "" for a clean config, else part of the error or warning
		ok         bool
	}{
		{"default is plain", "", nil, "", true},
		{"explicit weights", "vote_weighting: weighted\n  agent_weights: {a: 2.5}", []float64{2.5, 1}, "", true},
		{"confidence with weights", "vote_weighting: confidence\n  agent_weights: {b: 0.5}", []float64{1, 0.5}, "", true},
		{"learned from the file, b not in it", "vote_weighting: weighted\n  vote_weights_file: w.json", []float64{1.358, 1}, "has no weight for b (gpt-4o-mini): they weigh 1", true},
		{"agent_weights wins over the file", "vote_weighting: weighted\n  vote_weights_file: w.json\n  agent_weights: {a: 3, b: 2}", []float64{3, 2}, "", true},
		{"unknown agent", "vote_weighting: weighted\n  agent_weights: {c: 2}", nil, "agent_weights names `c`, which is not the id of an agent", false},
		{"weight out of range", "vote_weighting: weighted\n  agent_weights: {a: 0}", nil, "agent_weights.a is 0 (use a number from 0.001 to 1000)", false},
		{"not a number", "vote_weighting: weighted\n  agent_weights: {a: heavy}", nil, "must be a number", false},
		{"missing file", "vote_weighting: weighted\n  vote_weights_file: nope.json", nil, "no weights file at", false},
		{"weights without weighting warn", "agent_weights: {a: 2}", nil, "`agent_weights` has no effect: vote_weighting is plain", true},
		{"weighted without weights warns", "vote_weighting: weighted", []float64{1, 1}, "weighs every vote 1, as plain does", true},
		{"unknown mode", "vote_weighting: loud", nil, "use `plain`, `weighted` or `confidence`", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := agents
			if tc.orch != "" {
				doc += "orchestrator:\n  " + tc.orch + "\n"
			}
			cfg, rep := Parse(filepath.Join(dir, "c.yaml"), []byte(doc))
			if rep.OK() != tc.ok {
				t.Fatalf("ok = %v, want %v:\n%s", rep.OK(), tc.ok, rep.Text())
			}
			if tc.issue == "" && (len(rep.Errors) > 0 || len(rep.Warnings) > 0) {
				t.Fatalf("unexpected issues:\n%s", rep.Text())
			}
			if !strings.Contains(rep.Text(), tc.issue) {
				t.Fatalf("report lacks %q:\n%s", tc.issue, rep.Text())
			}
			if tc.ok && !slices.Equal(cfg.VoteWeights(), tc.want) {
				t.Fatalf("VoteWeights() = %v, want %v", cfg.VoteWeights(), tc.want)
			}
		})
	}
}

func TestLearnWeight(t *testing.T) {
	for _, tc := range []struct {
		correct, items int
		want           float64
	}{
		{0, 0, 0.05},    // nothing known: the floor
		{80, 100, 1.35}, // ln(81/21)
		{55, 100, 0.196},
		{10, 100, 0.05},   // worse than chance: the floor, not a negative weight
		{100, 100, 4.615}, // ln(101)
	} {
		if got := LearnWeight(tc.correct, tc.items); got < tc.want-0.001 || got > tc.want+0.001 {
			t.Errorf("LearnWeight(%d, %d) = %v, want %v", tc.correct, tc.items, got, tc.want)
		}
	}
}
