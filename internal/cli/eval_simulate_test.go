package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEval_Simulate runs the README's benchmark: the bundled item set with the independent
// population, twice with seed 1 and once with seed 2. The same seed gives the same figures,
// those the README prints; the summary says the run is simulated and carries the best member
// sampled.
func TestEval_Simulate(t *testing.T) {
	t.Chdir(t.TempDir())
	items, pop := repoFile(t, "examples/eval/sim_items.jsonl"), repoFile(t, "examples/eval/sim_independent.yaml")
	run := func(out string, seed string) (int, string) {
		code, s, stderr := evalSummary(t, t.Context(), items, "--simulate", pop, "--seed", seed, "--out", out, "--no-logs")
		if code != ExitOK {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if seed == "1" {
			// README.md, "Simulated populations": keep the two in step.
			got := fmt.Sprintf("voted %d, majority %d, oracle %d, best %s %d, x3 %d, x%d %d; %.2f calls, %.0f tokens an item",
				s.Voted.N, s.Majority.N, s.OracleLatest.N, s.BestMember[0].Agent, s.BestMember[0].Accuracy.N,
				s.BestMember[1].Accuracy.N, s.BestMember[2].Samples, s.BestMember[2].Accuracy.N, s.Spend.Team.Calls, s.Spend.Team.Tokens)
			if want := "voted 75, majority 75, oracle 95, best a 70, x3 75, x9 77; 7.00 calls, 5225 tokens an item"; got != want {
				t.Errorf("seed 1: %s\nREADME: %s", got, want)
			}
		}
		if s.Graded != 100 || s.Simulation == nil || s.Simulation.Seed == 0 || len(s.BestMember) < 2 {
			t.Fatalf("graded %d, simulation %+v, best member %+v", s.Graded, s.Simulation, s.BestMember)
		}
		if s.Voted != s.Majority {
			t.Errorf("voted %+v, majority %+v: the independent population votes as a majority", s.Voted, s.Majority)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		// The figures without the paths and times that differ between runs.
		var figures []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, "seconds") && !strings.Contains(l, `"results"`) && !strings.Contains(l, `"total"`) &&
				!strings.Contains(l, `"mean"`) && !strings.Contains(l, `"max"`) && !strings.Contains(l, `"seed"`) {
				figures = append(figures, l)
			}
		}
		return code, strings.Join(figures, "\n")
	}
	_, first := run("one", "1")
	_, again := run("two", "1")
	_, other := run("three", "2")
	if first != again {
		t.Error("the same seed gave other figures")
	}
	if first == other {
		t.Error("another seed gave the same figures")
	}
}

func TestEval_SimulateRefusals(t *testing.T) {
	t.Chdir(t.TempDir())
	items, pop := repoFile(t, "examples/eval/sim_items.jsonl"), repoFile(t, "examples/eval/sim_independent.yaml")
	sample, team := repoFile(t, "examples/eval/sample.jsonl"), repoFile(t, "examples/eval/team.yaml")
	bad := filepath.Join(t.TempDir(), "pop.yaml")
	if err := os.WriteFile(bad, []byte("agents:\n  - {id: a, accuracy: often}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	simulatedTeam := filepath.Join(t.TempDir(), "team.yaml")
	if err := os.WriteFile(simulatedTeam, []byte("agents:\n  - id: a\n    backend: {type: simulated}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"seed without simulate", []string{"eval", sample, "--config", team, "--seed", "3"}, "--seed goes with --simulate"},
		{"simulate with config", []string{"eval", items, "--simulate", pop, "--config", team}, "drop --config"},
		{"items it cannot answer", []string{"eval", sample, "--simulate", pop}, "simulated agents answer choice and numeric items only"},
		{"bad population", []string{"eval", items, "--simulate", bad}, "pop.yaml:2:23: a number is needed here"},
		{"no population", []string{"eval", items, "--simulate", "nosuch.yaml"}, "no population file at nosuch.yaml"},
		{"simulated type in a config", []string{"eval", items, "--config", simulatedTeam}, "simulated agents run only under massgen eval --simulate"},
		{"simulated type in a run", []string{"--config", simulatedTeam, "What is 2 + 2?"}, "backend type `simulated` is a test backend"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := execute(t, t.Context(), tt.args...)
			if code != ExitConfig || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want 1 with %q:\n%s", code, tt.want, stderr)
			}
		})
	}
}

func TestEval_SimulateCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, stderr := execute(t, t.Context(), "eval", "--check", repoFile(t, "examples/eval/sim_items.jsonl"),
		"--simulate", repoFile(t, "examples/eval/sim_herding.yaml"), "--seed", "9", "--out", "run")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"dataset: 100 items, graders: 50 numeric, 50 choice\n",
		"team: loud (simulated sim-loud), follower1 (simulated sim-follower1), follower2 (simulated sim-follower2)\n",
		"simulation: " + repoFile(t, "examples/eval/sim_herding.yaml") + ", seed 9\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--check output lacks %q:\n%s", want, out)
		}
	}
}

// TestEval_SimulateLazy is issue 25's target for lazy start, on the README's figures: the same
// voted accuracy as the independent team, and on the items where the agents in play agree at
// most half of the independent team's calls.
func TestEval_SimulateLazy(t *testing.T) {
	t.Chdir(t.TempDir())
	items := repoFile(t, "examples/eval/sim_items.jsonl")
	summary := func(pop string) (voted int, agreeCalls, calls float64) {
		code, s, stderr := evalSummary(t, t.Context(), items, "--simulate", repoFile(t, pop), "--seed", "1", "--out", filepath.Base(pop), "--no-logs")
		if code != ExitOK {
			t.Fatalf("%s: exit %d\n%s", pop, code, stderr)
		}
		return s.Voted.N, s.Spend.Agree.Calls, s.Spend.Team.Calls
	}
	allVoted, allAgree, all := summary("examples/eval/sim_independent.yaml")
	lazyVoted, lazyAgree, lazy := summary("examples/eval/sim_lazy.yaml")
	// README.md, "Simulated populations": keep the two in step.
	if got := fmt.Sprintf("voted %d, %.2f calls an item, %.2f where they agree", lazyVoted, lazy, lazyAgree); got != "voted 75, 4.26 calls an item, 3.00 where they agree" {
		t.Errorf("lazy: %s", got)
	}
	if lazyVoted < allVoted || 2*lazyAgree > allAgree || lazy >= all {
		t.Errorf("lazy: voted %d, %.2f calls (%.2f where they agree); every agent: voted %d, %.2f calls (%.2f)",
			lazyVoted, lazy, lazyAgree, allVoted, all, allAgree)
	}
}
