package eval

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// reportSummary is a summary with every kind of line: priced agents, a failed item, an item
// not run, limits.
func reportSummary() Summary {
	return Summary{
		Dataset: "gsm8k.jsonl", Results: "/runs/gsm8k/results.jsonl", Items: 4, Graded: 2, Failed: 1, Pending: 1,
		Voted: Ratio{1, 2, 0.5}, OracleLatest: Ratio{2, 2, 1}, OracleAny: Ratio{2, 2, 1}, Majority: Ratio{1, 2, 0.5},
		Agreement: Ratio{0, 2, 0}, SelfVotes: Ratio{1, 4, 0.25},
		Agents: []AgentSummary{
			{ID: "gpt", First: Ratio{1, 2, 0.5}, Last: Ratio{2, 2, 1}, CostUSD: 0.0123, FirstCostUSD: 0.004, FirstTokens: Tokens{Input: 1200, Output: 300}},
			{ID: "claude", First: Ratio{2, 2, 1}, Last: Ratio{2, 2, 1}, CostUSD: 0.021, FirstCostUSD: 0.009, FirstTokens: Tokens{Input: 1100, Output: 500}},
		},
		Spend: Spend{Team: PerItem{Calls: 7, Tokens: 7345}, Agree: PerItem{}, AgreeItems: 0, Disagree: PerItem{Calls: 7, Tokens: 7345}, DisagreeItems: 2,
			Majority: PerItem{Calls: 2, Tokens: 1550}},
		BestMember: []Baseline{{Agent: "claude", Samples: 1, Accuracy: Ratio{2, 2, 1}, Spend: PerItem{Calls: 1, Tokens: 800}}},
		Tokens:     Tokens{Input: 12345, CachedInput: 2000, Output: 2345, Reasoning: 512}, Calls: 15, CostUSD: 0.0343, CostKnown: true,
		ItemSeconds: Seconds{Total: 36.5, Mean: 12.1667, Max: 20.25}, WallSeconds: 38.2, Limits: "openai 60/min",
		PerItem: []ItemSummary{
			{ID: "q1", Status: StatusOK, Correct: true, Oracle: true, Seconds: 12.25, CostUSD: 0.015, LogDir: "/runs/gsm8k/logs/log_1/turn_1"},
			{ID: "q2", Status: StatusOK, Oracle: true, Seconds: 20.25, CostUSD: 0.0183, LogDir: "/runs/gsm8k/logs/log_2/turn_1"},
			{ID: "q3", Status: StatusFailed, Seconds: 4, CostUSD: 0.001, Error: "every agent failed\nmore", LogDir: "/runs/gsm8k/logs/log_3/turn_1"},
			{ID: "q4", Status: "pending"},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s (-want +got):\n%s", name, d)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, reportSummary()); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.txt.golden", b.Bytes())
	// The header has two oracle rows; the per-item column says which one it is.
	if !bytes.Contains(b.Bytes(), []byte("voted  oracle (any)  agree")) {
		t.Errorf("the items' oracle column does not say which oracle:\n%s", b.String())
	}

	unknown := reportSummary()
	unknown.CostKnown = false
	b.Reset()
	if err := WriteText(&b, unknown); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte("cost: ≥ $0.034, some prices unknown\n")) {
		t.Errorf("a cost with unknown prices is not marked:\n%s", b.String())
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, reportSummary(), ChartFile); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.md.golden", b.Bytes())
	if !bytes.Contains(b.Bytes(), []byte("| voted | oracle (any) |")) {
		t.Errorf("the items' oracle column does not say which oracle:\n%s", b.String())
	}
}

func TestWriteChart(t *testing.T) {
	var b bytes.Buffer
	if err := WriteChart(&b, reportSummary()); err != nil {
		t.Fatal(err)
	}
	golden(t, "chart.svg.golden", b.Bytes())
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, reportSummary()); err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(reportSummary(), back); d != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", d)
	}
	for _, key := range []string{`"voted_accuracy"`, `"oracle_latest"`, `"oracle_any"`, `"majority_first"`, `"agreement"`, `"self_votes"`,
		`"first_answer_accuracy"`, `"cached_input"`, `"cost_known"`, `"item_seconds"`, `"per_item"`, `"log_dir"`,
		`"spend_per_item"`, `"best_member"`, `"calls"`} {
		if !bytes.Contains(b.Bytes(), []byte(key)) {
			t.Errorf("the JSON lacks %s", key)
		}
	}
}

// A simulated run says so, with its population and seed, and lists the best member sampled
// beside the team, the equal-cost line marked; a real run has no such lines.
func TestWriteText_Simulated(t *testing.T) {
	s := reportSummary()
	s.Simulation = &SimulationInfo{Population: "sim_independent.yaml", Seed: 3, Tokens: SimulatedTokens}
	s.BestMember = append(s.BestMember,
		Baseline{Agent: "claude", Samples: 2, Accuracy: Ratio{2, 2, 1}, Spend: PerItem{Calls: 2, Tokens: 1600}},
		Baseline{Agent: "claude", Samples: 9, Accuracy: Ratio{1, 2, 0.5}, Spend: PerItem{Calls: 9, Tokens: 7200}, EqualCost: true})
	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	// Column widths follow the longest name: compare the words of each line.
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"simulated: population sim_independent.yaml, seed 3; tokens are simulated",
		"\nbest member alone (claude) 2 2 100.0% 1.00 800\n",
		"\nbest member x2, majority (claude) 2 2 100.0% 2.00 1,600\n",
		"\nbest member x9, majority (claude), team's tokens 1 2 50.0% 9.00 7,200\n",
		"\nvoted (the team's final answer) 1 2 50.0% 7.00 7,345\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteText(&b, reportSummary()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "simulated") || strings.Contains(b.String(), "majority (claude)") {
		t.Errorf("a real run's report speaks of a simulation:\n%s", b.String())
	}
}
