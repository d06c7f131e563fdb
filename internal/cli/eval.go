package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/eval"
	"massgen/internal/private"
	"massgen/internal/provider/simulated"
)

// evalFlags are the flags of massgen eval.
type evalFlags struct {
	temporal    temporalFlags
	configPath  string
	out         string
	resume      bool
	concurrency int
	rateLimits  []string
	callLimits  []string
	grader      string
	pattern     string
	tolerance   float64
	limit       int
	maxFailures int
	asJSON      bool
	noLogs      bool
	quiet       bool
	check       bool
	simulate    string
	seed        int64
	opt         optimizeFlags
}

// evalRoot is where eval runs go unless --out says otherwise.
var evalRoot = filepath.Join(".massgen", "eval")

const evalLong = `eval runs every item of a JSONL dataset through the team, one session per item, and
reports how often the team's final answer is right next to what its agents would have done
alone:

  voted accuracy      the team's final answer, graded
  majority            a majority vote over the first answers (ties: the first agent's group)
  oracle@N            some agent's latest answer was right; and some answer, any version
  best member         the agent whose first answers were right most often, alone
  each agent          its first answer (what it would have said alone) and its last one
  agreement           every agent's first answer says the same (after the grader's reading)
  self-votes          deciding votes cast for the voter's own answer
  calls, tokens       per item for the team, the majority and the best member; the team's
                      also where the first answers agree and where they differ
  tokens, cost, time  per item and in all (cost "+ unknown" when a model's price is unknown)

A dataset line is one JSON object:
  {"id": "q1", "question": "What is 6 x 7?", "answer": "42", "grader": "numeric"}
  {"id": "q2", "question": "Which is a prime?", "choices": ["4", "6", "7", "9"], "answer": "C"}
  keys: id (default line<N>), question, answer or answers (any may match), grader,
  choices (2-10, shown to the team as "A. ..." lines; the answer is a letter or a
  choice's text), tolerance (numeric), pattern (regex); other keys are ignored.

Graders (the item's "grader", else --grader, else choice with choices, else exact):
  exact     the answer, trimmed, equals an expected answer
  numeric   the number in \boxed{}, after ####, after "answer is"/"answer:", else the last
            number, within the tolerance (default 1e-6); 1,234 and 50% and 3/4 read as numbers
  regex     the item's pattern (or --pattern) matches the answer (Go RE2 syntax)
  choice    the letter chosen ("Answer: C", "(C)", "**C**", \boxed{C}, a lone capital)
  contains  an expected answer occurs in the answer, ignoring case and spacing

Every line is checked before any session starts: a bad line is reported with its number and
nothing runs (exit 1). Lines are at most 1 MiB, datasets at most 100,000 items (--limit N runs
the first N).

Results are appended to --out (default .massgen/eval/<dataset>_<time>/results.jsonl) as each
item finishes, with summary.json, report.md and chart.svg (accuracy against cost) written next
to it and each item's session log under logs/ there. Running again with the same --out, or
with --resume (the newest run of that dataset), skips the items already done and retries the
failed ones. Ctrl-C stops: the items finished are kept, exit 4. A failed item is recorded
with its error and the run goes on (exit 2 at the end); --max-failures stops after that many
failures in a row.

--simulate POPULATION.yaml runs simulated agents instead of a team (no network, no key):
each has an accuracy, a bias towards long answers, herding and a stated confidence, and
answers choice and numeric items with a known answer; every draw follows --seed, so a run
repeats exactly. The report adds the best member sampled N times with a majority vote
(self-consistency), and as many times as the team's tokens would pay for. Token counts are
simulated (a quarter of the characters read and written). Populations:
examples/eval/sim_*.yaml; items: examples/eval/sim_items.jsonl.

--optimize searches the agents' instructions, as DSPy's optimisers do: the config's own
(the baseline), those of --candidates FILE (a YAML list: a system_message string each, or
{name, system_message, agents: {ID: message}} for a message per agent) and --propose N more
written by the first agent's model run on the dataset (or --sample N items drawn with
--seed); --refine tries the best joined with the runner-up. The best (most right, then
cheapest) is written as a config file (--optimize-out, default best.yaml in the run folder)
headed by every candidate's accuracy and cost, which optimize.json holds too. --max-cost USD
stops the search when spent; at most 12 candidates run.

--concurrency runs items side by side. --rate-limit TYPE=RPM and --provider-concurrency
TYPE=N cap the model calls of a backend type (openai, claude, ...) across all items and
agents: calls wait for their turn, spaced 60/RPM seconds apart.

  massgen eval examples/eval/sample.jsonl --config examples/eval/team.yaml
  massgen eval examples/eval/sim_items.jsonl --simulate examples/eval/sim_independent.yaml --seed 1
  massgen eval examples/eval/sim_items.jsonl --simulate examples/eval/sim_instructions.yaml --optimize --candidates examples/eval/candidates.yaml`

func newEval(stdout, stderr io.Writer) *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval DATASET.jsonl [--config team.yaml | --simulate population.yaml] [--out results.jsonl] [--concurrency N]",
		Short: "Measure the team on a dataset: voted accuracy against its agents alone, cost and time",
		Long:  evalLong,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitf(ExitConfig, "eval takes one dataset file: massgen eval DATASET.jsonl --config team.yaml")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEval(cmd, f, args[0], stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.configPath, "config", "", "the team's config `FILE` (default: as for a run)")
	fl.StringVar(&f.out, "out", "", "the results `FILE` (.jsonl), or a folder for it (default .massgen/eval/<dataset>_<time>/)")
	fl.BoolVar(&f.resume, "resume", false, "continue the newest run of this dataset (or --out): skip finished items")
	fl.IntVar(&f.concurrency, "concurrency", 1, "`N` items run at once")
	fl.StringArrayVar(&f.rateLimits, "rate-limit", nil, "at most RPM model calls a minute for backend TYPE (`TYPE=RPM`); repeat for more")
	fl.StringArrayVar(&f.callLimits, "provider-concurrency", nil, "at most N model calls of backend TYPE at once (`TYPE=N`); repeat for more")
	fl.StringVar(&f.grader, "grader", "", "grader of the items that name none: exact, numeric, regex, choice or contains")
	fl.StringVar(&f.pattern, "pattern", "", "regex grader's `PATTERN` for the items without one")
	fl.Float64Var(&f.tolerance, "tolerance", 0, "numeric grader's tolerance for the items without one (default 1e-6)")
	fl.IntVar(&f.limit, "limit", 0, "run only the first `N` items (0: all)")
	fl.IntVar(&f.maxFailures, "max-failures", 10, "stop after `N` items in a row failed (0: never)")
	fl.BoolVar(&f.asJSON, "json", false, "print the summary as JSON")
	fl.BoolVar(&f.noLogs, "no-logs", false, "do not write the items' session logs")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	fl.BoolVar(&f.check, "check", false, "check the dataset and the config, say what would run, and stop")
	fl.StringVar(&f.simulate, "simulate", "", "run the simulated agents of a population `FILE` instead of a team (examples/eval/sim_*.yaml)")
	fl.Int64Var(&f.seed, "seed", 0, "with --simulate, the seed of every draw (default: the population file's seed, else 1)")
	addTemporalFlags(fl, &f.temporal)
	addOptimizeFlags(fl, &f.opt)
	return cmd
}

func runEval(cmd *cobra.Command, f evalFlags, dataset string, stdout, stderr io.Writer) error {
	switch {
	case f.concurrency < 1:
		return exitf(ExitConfig, "--concurrency %d: run at least 1 item at a time", f.concurrency)
	case f.limit < 0:
		return exitf(ExitConfig, "--limit %d: use a positive number, or 0 for every item", f.limit)
	case f.maxFailures < 0:
		return exitf(ExitConfig, "--max-failures %d: use a positive number, or 0 for no limit", f.maxFailures)
	case f.temporal.addr != "" && (len(f.rateLimits) > 0 || len(f.callLimits) > 0):
		return exitf(ExitConfig, "--rate-limit and --provider-concurrency limit this process's model calls; with --temporal the workers make them: use --concurrency to bound the sessions at once")
	}
	lims := eval.Limits{RPM: map[string]int{}, Concurrent: map[string]int{}}
	for _, v := range f.rateLimits {
		if err := eval.ParseLimit(lims.RPM, "--rate-limit", v); err != nil {
			return exitf(ExitConfig, "%v", err)
		}
	}
	for _, v := range f.callLimits {
		if err := eval.ParseLimit(lims.Concurrent, "--provider-concurrency", v); err != nil {
			return exitf(ExitConfig, "%v", err)
		}
	}
	items, err := loadDataset(dataset, f, stderr)
	if err != nil {
		return err
	}
	if err := app.LoadDotEnv(stderr); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	var cfg *config.Config
	var pop *simulated.Population
	team := ""
	if f.simulate != "" {
		if pop, err = loadPopulation(cmd, f, items); err != nil {
			return err
		}
		if cfg, err = pop.Config(); err != nil {
			return exitf(ExitConfig, "%v", err)
		}
		team = pop.ID()
	} else {
		if cmd.Flags().Changed("seed") && !f.opt.on {
			return exitf(ExitConfig, "--seed goes with --simulate (or --optimize's --sample): real agents are not seeded")
		}
		if cfg, _, err = loadConfig(runOptions{configPath: f.configPath}, stderr); err != nil {
			return err
		}
		team = teamID(cfg)
	}
	out, err := evalOut(f, dataset)
	if err != nil {
		return err
	}
	if err := checkTemporal(f.temporal, cfg); err != nil {
		return err
	}
	if err := f.opt.check(cmd, pop); err != nil {
		return err
	}
	if f.check {
		return evalCheck(items, cfg, pop, out, stdout)
	}
	remote, closeRemote, err := f.temporal.remote(cmd.Context())
	if err != nil {
		return err
	}
	defer closeRemote()
	if err := private.MkdirAll(filepath.Dir(out)); err != nil {
		return exitf(ExitExecution, "cannot create the folder of %s: %v", out, err)
	}
	o := eval.Options{Dataset: dataset, Items: items, Config: cfg, Team: team, Out: out, Simulation: pop,
		Logging: !f.noLogs, LogRoot: filepath.Join(filepath.Dir(out), eval.LogsDir),
		Concurrency: f.concurrency, Limits: lims, MaxFailures: f.maxFailures,
		Version: Version, Args: os.Args, Remote: remote}
	if !f.quiet {
		o.Progress = func(p eval.Progress) { fmt.Fprintln(stderr, progressLine(p)) }
	}
	if f.opt.on {
		return runOptimize(cmd, f, o, dataset, stdout, stderr)
	}
	if !f.quiet {
		if done, _, err := eval.ReadResults(out); err == nil && len(done) > 0 {
			fmt.Fprintf(stderr, "continuing %s: %d of %d items have a result there\n", out, countDone(items, done), len(items))
		}
		fmt.Fprintf(stderr, "massgen eval: %s with %s, %d at a time; results in %s\n", plural(len(items), "item"), teamText(cfg), f.concurrency, out)
	}
	res, err := eval.Run(cmd.Context(), o)
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if err != nil {
		return exitErr(err)
	}
	if err := eval.WriteReports(res.Summary); err != nil {
		fmt.Fprintf(stderr, "massgen: %v\n", err)
	}
	if f.asJSON {
		err = eval.WriteJSON(stdout, res.Summary)
	} else {
		err = eval.WriteText(stdout, res.Summary)
	}
	if err != nil {
		return exitf(ExitExecution, "%v", err)
	}
	s := res.Summary
	switch res.ExitCode {
	case ExitInterrupted:
		return exitf(ExitInterrupted, "interrupted with %d of %d items done; the same command with --out %s finishes the rest", s.Graded+s.Failed, s.Items, out)
	case ExitExecution:
		msg := fmt.Sprintf("%s failed; the same command with --out %s runs them again", plural(s.Failed, "item"), out)
		if res.Stopped != "" {
			msg = "stopped: " + res.Stopped + "; " + msg
		}
		return exitf(ExitExecution, "%s", msg)
	}
	return nil
}

// loadDataset reads and checks every line of the dataset before anything runs.
func loadDataset(path string, f evalFlags, stderr io.Writer) ([]eval.Item, error) {
	file, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, exitf(ExitConfig, "no dataset at %s: pass a JSONL file, one item a line (massgen eval --help shows the format)", path)
		}
		return nil, exitf(ExitConfig, "cannot read the dataset: %v", err)
	}
	defer file.Close()
	items, warnings, err := eval.Load(file, path, eval.Defaults{Grader: eval.Grader(f.grader), Pattern: f.pattern, Tolerance: f.tolerance, Limit: f.limit})
	if err != nil {
		var le *eval.LoadError
		if errors.As(err, &le) {
			for _, l := range le.Lines {
				fmt.Fprintf(stderr, "error: %s\n", l)
			}
			return nil, exitf(ExitConfig, "the dataset has %s; fix them and run again (nothing ran)", plural(len(le.Lines), "bad line"))
		}
		return nil, exitf(ExitConfig, "%v", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	return items, nil
}

// evalOut is the results file: --out (a .jsonl file, or a folder for one), the newest run of
// the dataset with --resume, or a new run folder.
func evalOut(f evalFlags, dataset string) (string, error) {
	if f.out != "" {
		out := f.out
		if !strings.HasSuffix(strings.ToLower(out), ".jsonl") {
			out = filepath.Join(out, eval.ResultsFile)
		}
		abs, err := filepath.Abs(out)
		if err != nil {
			return "", exitf(ExitExecution, "cannot tell the current directory: %v", err)
		}
		if f.resume {
			if _, err := os.Stat(abs); err != nil {
				return "", exitf(ExitConfig, "--resume: there is no results file at %s to continue", abs)
			}
		}
		return abs, nil
	}
	root, err := filepath.Abs(evalRoot)
	if err != nil {
		return "", exitf(ExitExecution, "cannot tell the current directory: %v", err)
	}
	if f.resume {
		dir, err := eval.LatestRunDir(root, dataset)
		if err != nil {
			return "", exitf(ExitExecution, "%v", err)
		}
		if dir == "" {
			return "", exitf(ExitConfig, "--resume: no earlier run of %s under %s; run without --resume to start one", eval.DatasetName(dataset), root)
		}
		return filepath.Join(dir, eval.ResultsFile), nil
	}
	return filepath.Join(eval.NewRunDir(root, dataset, time.Now()), eval.ResultsFile), nil
}

// loadPopulation reads --simulate's population, with --seed applied, and checks that its
// agents can answer every item.
func loadPopulation(cmd *cobra.Command, f evalFlags, items []eval.Item) (*simulated.Population, error) {
	switch {
	case f.configPath != "":
		return nil, exitf(ExitConfig, "--simulate builds the team from the population file: drop --config (its orchestrator: block goes in the population file)")
	case f.temporal.addr != "":
		return nil, exitf(ExitConfig, "--simulate runs its agents in this process: drop --temporal")
	}
	pop, err := simulated.Load(f.simulate)
	if err != nil {
		return nil, exitf(ExitConfig, "%v", err)
	}
	if cmd.Flags().Changed("seed") {
		pop.Seed = f.seed
	}
	if err := eval.CheckSimulated(items); err != nil {
		return nil, exitf(ExitConfig, "%v", err)
	}
	return pop, nil
}

// evalCheck is --check: what a run would do, without running it.
func evalCheck(items []eval.Item, cfg *config.Config, pop *simulated.Population, out string, stdout io.Writer) error {
	done, _, err := eval.ReadResults(out)
	if err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	graders := map[eval.Grader]int{}
	for _, it := range items {
		graders[it.Grader]++
	}
	var parts []string
	for _, g := range eval.Graders {
		if graders[g] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", graders[g], g))
		}
	}
	n := countDone(items, done)
	fmt.Fprintf(stdout, "dataset: %s, graders: %s\n", plural(len(items), "item"), strings.Join(parts, ", "))
	fmt.Fprintf(stdout, "team: %s\n", teamText(cfg))
	if pop != nil {
		fmt.Fprintf(stdout, "simulation: %s, seed %d\n", pop.Path, pop.Seed)
	}
	fmt.Fprintf(stdout, "results: %s (%d done, %d to run)\n", out, n, len(items)-n)
	return nil
}

// teamText names the agents and their models: "a (openai gpt-5), b (scripted)".
func teamText(cfg *config.Config) string {
	agents := make([]string, len(cfg.Agents))
	for k, a := range cfg.Agents {
		what := a.Backend.Type
		if m := a.Backend.Model; m != "" && m != what {
			what += " " + m
		}
		agents[k] = fmt.Sprintf("%s (%s)", a.ID, what)
	}
	return strings.Join(agents, ", ")
}

// countDone counts the items with a successful result.
func countDone(items []eval.Item, done map[string]eval.Record) int {
	n := 0
	for _, it := range items {
		if r, ok := done[it.ID]; ok && r.Status == eval.StatusOK {
			n++
		}
	}
	return n
}

// teamID identifies the team in the results file: a hash of its config as metadata.json shows
// it (secrets removed).
func teamID(cfg *config.Config) string {
	b, err := json.Marshal(app.Redacted(cfg))
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// progressLine is one finished item on stderr.
func progressLine(p eval.Progress) string {
	r := p.Record
	head := fmt.Sprintf("[%d/%d %d%%", p.Done, p.Todo, 100*p.Done/max(p.Todo, 1))
	if left := p.Todo - p.Done; left > 0 && p.Done > 0 {
		// The items so far say how long the others take; concurrency is in Elapsed already.
		if eta := time.Duration(float64(p.Elapsed) / float64(p.Done) * float64(left)).Round(time.Second); eta > 0 {
			head += ", about " + eta.String() + " left"
		}
	}
	head += "] " + r.ID
	took := fmt.Sprintf("%.2fs", r.Seconds)
	if r.Status != eval.StatusOK {
		msg, _, _ := strings.Cut(r.Error, "\n")
		return fmt.Sprintf("%s: failed after %s: %s", head, took, msg)
	}
	verdict := "wrong"
	if r.Correct {
		verdict = "correct"
	}
	return fmt.Sprintf("%s: %s (%s)", head, verdict, took)
}
