package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/eval"
)

// evalSummary runs massgen eval with --json and decodes the summary.
func evalSummary(t *testing.T, ctx context.Context, args ...string) (int, eval.Summary, string) {
	t.Helper()
	code, out, stderr := execute(t, ctx, append([]string{"eval", "--json", "--quiet"}, args...)...)
	var s eval.Summary
	if out != "" {
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("exit %d, stdout is not a summary: %v\n%s\nstderr:\n%s", code, err, out, stderr)
		}
	}
	return code, s, stderr
}

// TestEval_Sample runs the bundled sample with the bundled offline team. Its agents say the
// same thing to every question, so each figure follows from the 12 items by hand (see
// examples/eval/team.yaml): quick says 36, then 42; careful chooses B and names Paris; chemist
// names Au and chooses D; everyone votes for careful's, the longest answer.
func TestEval_Sample(t *testing.T) {
	t.Chdir(t.TempDir())
	code, s, stderr := evalSummary(t, t.Context(), repoFile(t, "examples/eval/sample.jsonl"),
		"--config", repoFile(t, "examples/eval/team.yaml"), "--concurrency", "4")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, c := range []struct {
		name string
		got  eval.Ratio
		n    int
	}{
		{"voted", s.Voted, 2},                // planet (B), tower (Paris)
		{"oracle latest", s.OracleLatest, 5}, // sequence (quick's 42), planet, air (D), tower, gold (Au)
		{"oracle any", s.OracleAny, 6},       // and percent (quick's first, 36)
		{"majority", s.Majority, 2},          // percent (36 alone readable), planet (B, D tie: careful first)
		{"agreement", s.Agreement, 0},
	} {
		if c.got.N != c.n || c.got.Of != 12 {
			t.Errorf("%s = %d/%d, want %d/12", c.name, c.got.N, c.got.Of, c.n)
		}
	}
	if s.SelfVotes.N != 12 || s.SelfVotes.Of != 36 {
		t.Errorf("self votes %d/%d, want 12/36 (careful's own vote on each item)", s.SelfVotes.N, s.SelfVotes.Of)
	}
	wantAgents := map[string][2]int{"quick": {1, 1}, "careful": {2, 2}, "chemist": {2, 2}}
	for _, a := range s.Agents {
		if w := wantAgents[a.ID]; a.First.N != w[0] || a.Last.N != w[1] || a.First.Of != 12 {
			t.Errorf("%s: first %d/%d last %d, want %d and %d of 12", a.ID, a.First.N, a.First.Of, a.Last.N, w[0], w[1])
		}
	}
	dir := filepath.Dir(s.Results)
	if !strings.HasPrefix(dir, filepath.Join(mustGetwd(t), ".massgen", "eval", "sample_")) {
		t.Errorf("results in %s, want .massgen/eval/sample_<time>/", dir)
	}
	for _, f := range []string{eval.ResultsFile, eval.SummaryFile, eval.ReportFile, eval.ChartFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	for _, it := range s.PerItem {
		if _, err := os.Stat(filepath.Join(it.LogDir, "events.jsonl")); err != nil {
			t.Errorf("%s: no session log at %q", it.ID, it.LogDir)
		}
	}

	// --resume continues the newest run of the dataset: nothing is left to do.
	before := countEntries(t, filepath.Join(dir, eval.LogsDir))
	code, _, stderr = execute(t, t.Context(), "eval", "--resume", repoFile(t, "examples/eval/sample.jsonl"), "--config", repoFile(t, "examples/eval/team.yaml"))
	if code != ExitOK || !strings.Contains(stderr, "continuing "+s.Results+": 12 of 12 items have a result there") {
		t.Errorf("--resume: exit %d\n%s", code, stderr)
	}
	if after := countEntries(t, filepath.Join(dir, eval.LogsDir)); after != before {
		t.Errorf("--resume of a finished run started %d sessions", after-before)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func countEntries(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestEval_Interrupted: Ctrl-C stops the run with exit 4, the finished items stay in the
// results file, and the same command with --out finishes the rest.
func TestEval_Interrupted(t *testing.T) {
	t.Chdir(t.TempDir())
	sample, team := repoFile(t, "examples/eval/sample.jsonl"), repoFile(t, "examples/eval/team.yaml")
	out := filepath.Join(mustGetwd(t), "run", eval.ResultsFile)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		// Interrupt once two items are in.
		for ctx.Err() == nil {
			if data, err := os.ReadFile(out); err == nil && strings.Count(string(data), "\n") >= 2 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	code, stdout, stderr := execute(t, ctx, "eval", sample, "--config", team, "--out", out)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want 4\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "interrupted with ") || !strings.Contains(stderr, "the same command with --out "+out+" finishes the rest") {
		t.Errorf("stderr:\n%s", stderr)
	}
	done, _, err := eval.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) < 2 || len(done) == 12 {
		t.Fatalf("%d items in the results file after Ctrl-C, want 2 to 11", len(done))
	}
	if !strings.Contains(stdout, "not run") {
		t.Errorf("the summary of an interrupted run does not show the items not run:\n%s", stdout)
	}
	code, s, stderr := evalSummary(t, t.Context(), sample, "--config", team, "--out", out)
	if code != ExitOK || s.Graded != 12 || s.Voted.N != 2 {
		t.Errorf("finishing run: exit %d, %d graded, voted %d; want 0, 12, 2\n%s", code, s.Graded, s.Voted.N, stderr)
	}
	if n := countEntries(t, filepath.Join(filepath.Dir(out), eval.LogsDir)); n > 12+1 {
		// At most the one item in flight at Ctrl-C runs twice.
		t.Errorf("%d sessions for 12 items", n)
	}
}

func TestEval_Refusals(t *testing.T) {
	t.Chdir(t.TempDir())
	bad := filepath.Join(mustGetwd(t), "bad.jsonl")
	data := `{"id": "a", "question": "q", "answer": "1"}
{"id": "b", "question": "q"}
{"id": "c", "question": "q", "answer": "x", "grader": "numeric"}
`
	if err := os.WriteFile(bad, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	team := repoFile(t, "examples/eval/team.yaml")
	sample := repoFile(t, "examples/eval/sample.jsonl")
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"bad lines", []string{bad, "--config", team},
			[]string{"error: " + bad + ":2: item b has no answer", "error: " + bad + `:3: answer "x" holds no number`, "the dataset has 2 bad lines; fix them and run again (nothing ran)"}},
		{"no dataset", []string{"nosuch.jsonl", "--config", team}, []string{"no dataset at nosuch.jsonl"}},
		{"two datasets", []string{sample, sample}, []string{"eval takes one dataset file"}},
		{"concurrency", []string{sample, "--config", team, "--concurrency", "0"}, []string{"--concurrency 0"}},
		{"rate limit", []string{sample, "--config", team, "--rate-limit", "openai"}, []string{`--rate-limit "openai": want TYPE=N`}},
		{"provider concurrency", []string{sample, "--config", team, "--provider-concurrency", "nosuch=2"}, []string{`unknown backend type "nosuch"`}},
		{"grader", []string{sample, "--config", team, "--grader", "fuzzy"}, []string{`unknown grader "fuzzy"`}},
		{"resume without a run", []string{sample, "--config", team, "--resume"}, []string{"--resume: no earlier run of sample"}},
		{"bad config", []string{sample, "--config", "nosuch.yaml"}, []string{"nosuch.yaml"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := execute(t, t.Context(), append([]string{"eval"}, tt.args...)...)
			if code != ExitConfig {
				t.Errorf("exit %d, want 1\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			noLogs(t)
		})
	}
}

func TestEval_Check(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, stderr := execute(t, t.Context(), "eval", "--check", repoFile(t, "examples/eval/sample.jsonl"), "--config", repoFile(t, "examples/eval/team.yaml"), "--out", "run")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"dataset: 12 items, graders: 1 exact, 6 numeric, 1 regex, 3 choice, 1 contains\n",
		"team: quick (scripted), careful (scripted), chemist (scripted)\n",
		"results: " + filepath.Join(mustGetwd(t), "run", eval.ResultsFile) + " (0 done, 12 to run)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--check output lacks %q:\n%s", want, out)
		}
	}
	noLogs(t)
	if _, err := os.Stat("run"); err == nil {
		t.Error("--check created the run folder")
	}
}
