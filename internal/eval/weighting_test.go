package eval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimulated_VoteWeighting is the benchmark of vote_weighting, pinned: the same populations
// voting plain, weighted by the weights a run on other draws (seed 2) learned, and weighted by
// the confidence each voter states. The populations and seeds are fixed, so the figures repeat
// exactly; a change in how votes are counted shows here as a changed number.
func TestSimulated_VoteWeighting(t *testing.T) {
	items := simItems(t, 100)
	pops := map[string]string{
		// A calibrated 0.8 and two overconfident 0.55: the loud pair outvotes the strong one.
		"overconfident": `agents:
  - {id: strong, accuracy: 0.8, confidence: calibrated}
  - {id: weak1, accuracy: 0.55, confidence: overconfident}
  - {id: weak2, accuracy: 0.55, confidence: overconfident}
`,
		// Three calibrated 0.7 agents: the textbook majority.
		"independent": "agents:\n  - {id: a, accuracy: 0.7}\n  - {id: b, accuracy: 0.7}\n  - {id: c, accuracy: 0.7}\n",
	}
	dir := t.TempDir()
	for name, agents := range pops {
		learned := runSimulated(t, "seed: 2\n"+agents+answerThenVote, items).Summary
		w := Weights(learned)
		if len(w.Models) != 3 {
			t.Fatalf("%s: learned weights for %d models, want 3: %+v", name, len(w.Models), w)
		}
		b, _ := json.Marshal(w)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ow := readWeights(t, filepath.Join(dir, "overconfident.json"))
	if !(ow["sim-strong"] > ow["sim-weak1"]+ow["sim-weak2"]) {
		t.Errorf("learned weights %v: the strong agent should outweigh the two weak ones together", ow)
	}
	for _, tc := range []struct {
		pop, mode string
		correct   int
	}{
		{"overconfident", "plain", 68},
		{"overconfident", "weighted", 79},   // the strong agent decides
		{"overconfident", "confidence", 68}, // 0.95 from the weak pair outweighs
		{"independent", "plain", 77},
		{"independent", "weighted", 77},   // equal agents, equal-enough weights
		{"independent", "confidence", 88}, // calibrated: the sure voter wins
	} {
		t.Run(tc.pop+"/"+tc.mode, func(t *testing.T) {
			orch := answerThenVote + "  vote_weighting: " + tc.mode + "\n"
			if tc.mode == "weighted" {
				orch += "  vote_weights_file: " + filepath.Join(dir, tc.pop+".json") + "\n"
			}
			s := runSimulated(t, "seed: 1\n"+pops[tc.pop]+orch, items).Summary
			t.Logf("%s %s: voted %d, majority of first answers %d, best alone %d", tc.pop, tc.mode, s.Voted.N, s.Majority.N, s.BestMember[0].Accuracy.N)
			if s.Voted.N != tc.correct {
				t.Errorf("voted %d of 100 right, want %d", s.Voted.N, tc.correct)
			}
		})
	}
}

func readWeights(t *testing.T, path string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lw struct {
		Models map[string]struct{ Weight float64 } `json:"models"`
	}
	if err := json.Unmarshal(b, &lw); err != nil || !strings.Contains(string(b), "massgen eval") {
		t.Fatalf("weights file %s: %v", b, err)
	}
	out := map[string]float64{}
	for k, m := range lw.Models {
		out[k] = m.Weight
	}
	return out
}
