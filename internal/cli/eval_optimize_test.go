package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/eval"
)

func readOptimize(t *testing.T, dir string) eval.OptimizeReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "optimize.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.OptimizeReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// On a seeded simulation where "check each step" is known to help and "answer fast" to
// hurt, the search picks the careful candidate, repeats exactly with the same seed, and
// writes a config that massgen --validate accepts, headed by every candidate's evidence.
func TestEvalOptimize_SimulationPicksTheKnownBetter(t *testing.T) {
	t.Chdir(t.TempDir())
	items, pop, cands := repoFile(t, "examples/eval/sim_items.jsonl"), repoFile(t, "examples/eval/sim_instructions.yaml"), repoFile(t, "examples/eval/candidates.yaml")
	run := func(out string) (eval.OptimizeReport, string) {
		code, stdout, stderr := execute(t, t.Context(), "eval", items, "--simulate", pop, "--seed", "3", "--optimize", "--candidates", cands,
			"--sample", "30", "--refine", "--out", out, "--no-logs", "--quiet")
		if code != ExitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		return readOptimize(t, out), stdout
	}
	rep, stdout := run("one")
	if len(rep.Items) != 30 || len(rep.Results) != 5 { // baseline, 3 from the file, 1 refined
		t.Fatalf("%d items, %d candidates:\n%s", len(rep.Items), len(rep.Results), stdout)
	}
	acc := map[string]int{}
	for _, r := range rep.Results {
		acc[r.Name] = r.Correct
	}
	if win := rep.Results[rep.Best].Name; win != "careful" && !strings.HasPrefix(win, "careful+") {
		t.Errorf("best is %s, want careful (or careful refined): %v", win, acc)
	}
	if !(acc["careful"] > acc["baseline"] && acc["baseline"] > acc["quick"]) {
		t.Errorf("accuracies %v: want careful > baseline > quick, as the effects say", acc)
	}
	again, _ := run("two")
	if again.Best != rep.Best || again.Results[rep.Best].Correct != rep.Results[rep.Best].Correct || strings.Join(again.Items, ",") != strings.Join(rep.Items, ",") {
		t.Error("the same seed gave another search")
	}
	best := filepath.Join("one", "best.yaml")
	b, err := os.ReadFile(best)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# massgen eval --optimize", "baseline", "quick", "check each step"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("best.yaml lacks %q:\n%s", want, b)
		}
	}
	if code, out, stderr := execute(t, t.Context(), "--validate", best); code != ExitOK {
		t.Errorf("massgen --validate %s: exit %d\n%s%s\n%s", best, code, out, stderr, b)
	}
}

// A real config file (the scripted team) gets the winner's system message written into it;
// --propose writes candidates with the first agent's model (scripted here), and the cost
// cap stops the search.
func TestEvalOptimize_ConfigFileAndProposer(t *testing.T) {
	t.Chdir(t.TempDir())
	sample, team := repoFile(t, "examples/eval/sample.jsonl"), repoFile(t, "examples/eval/team.yaml")
	code, stdout, stderr := execute(t, t.Context(), "eval", sample, "--config", team, "--optimize", "--propose", "2", "--sample", "4",
		"--out", "run", "--no-logs", "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rep := readOptimize(t, "run")
	if len(rep.Results) != 3 || rep.Results[1].From != "proposed" || rep.Results[1].SystemMessage == "" {
		t.Fatalf("candidates %+v", rep.Results)
	}
	best := filepath.Join("run", "best.yaml")
	if code, out, stderr := execute(t, t.Context(), "--validate", best); code != ExitOK {
		b, _ := os.ReadFile(best)
		t.Errorf("massgen --validate: exit %d\n%s%s\n%s", code, out, stderr, b)
	}
	b, _ := os.ReadFile(best)
	if win := rep.Results[rep.Best]; win.SystemMessage != "" && !strings.Contains(string(b), win.SystemMessage) {
		t.Errorf("best.yaml lacks the winner's message %q:\n%s", win.SystemMessage, b)
	}
}

func TestEvalOptimize_BadInput(t *testing.T) {
	t.Chdir(t.TempDir())
	items, pop := repoFile(t, "examples/eval/sim_items.jsonl"), repoFile(t, "examples/eval/sim_instructions.yaml")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte("- {name: x, agents: {nobody: hi}}\n"), 0o600)
	junk := filepath.Join(t.TempDir(), "junk.yaml")
	_ = os.WriteFile(junk, []byte("- {name: x, sytem_message: hi}\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--candidates", bad}, "--candidates goes with --optimize"},
		{[]string{"--optimize"}, "needs candidates"},
		{[]string{"--optimize", "--propose", "2"}, "simulated agents"},
		{[]string{"--optimize", "--candidates", bad}, `names agent "nobody"`},
		{[]string{"--optimize", "--candidates", junk}, "sytem_message"},
		{[]string{"--optimize", "--candidates", bad, "--max-cost", "-1"}, "--max-cost"},
	} {
		code, _, stderr := execute(t, t.Context(), append([]string{"eval", items, "--simulate", pop, "--out", "x", "--quiet"}, tc.args...)...)
		if code != ExitConfig || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 1 saying %q", tc.args, code, stderr, tc.want)
		}
	}
}
