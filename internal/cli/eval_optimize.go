package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"massgen/internal/app"
	"massgen/internal/eval"
	"massgen/internal/provider/simulated"
)

// optimizeFlags are massgen eval --optimize's.
type optimizeFlags struct {
	on         bool
	candidates string
	propose    int
	sample     int
	refine     bool
	maxCost    float64
	out        string
}

func addOptimizeFlags(fl *pflag.FlagSet, f *optimizeFlags) {
	fl.BoolVar(&f.on, "optimize", false, "search the agents' instructions for the best accuracy on the dataset and write it as a config")
	fl.StringVar(&f.candidates, "candidates", "", "with --optimize, the candidate instructions `FILE` (YAML list)")
	fl.IntVar(&f.propose, "propose", 0, "with --optimize, `N` more candidates written by the first agent's model")
	fl.IntVar(&f.sample, "sample", 0, "with --optimize, run each candidate on `N` items drawn with --seed (0: all)")
	fl.BoolVar(&f.refine, "refine", false, "with --optimize, one more round: the best joined with the runner-up")
	fl.Float64Var(&f.maxCost, "max-cost", 0, "with --optimize, stop the search once `USD` is spent (0: no cap)")
	fl.StringVar(&f.out, "optimize-out", "", "with --optimize, where the best config goes (`FILE`; default best.yaml in the run folder)")
}

// maxCandidatesFile bounds --candidates.
const maxCandidatesFile = 256 << 10

// check refuses the search flags without --optimize, and what the search cannot do.
func (f optimizeFlags) check(cmd *cobra.Command, pop *simulated.Population) error {
	if !f.on {
		for _, name := range []string{"candidates", "propose", "sample", "refine", "max-cost", "optimize-out"} {
			if cmd.Flags().Changed(name) {
				return exitf(ExitConfig, "--%s goes with --optimize", name)
			}
		}
		return nil
	}
	switch {
	case f.propose < 0 || f.propose > eval.MaxCandidates-1:
		return exitf(ExitConfig, "--propose %d: use 0 to %d", f.propose, eval.MaxCandidates-1)
	case f.sample < 0:
		return exitf(ExitConfig, "--sample %d: use a positive number, or 0 for every item", f.sample)
	case f.maxCost < 0:
		return exitf(ExitConfig, "--max-cost %v: use a positive amount in USD, or 0 for no cap", f.maxCost)
	case pop != nil && f.propose > 0:
		return exitf(ExitConfig, "--propose needs a model that writes; simulated agents answer from their statistics: give --candidates FILE")
	case f.candidates == "" && f.propose == 0:
		return exitf(ExitConfig, "--optimize needs candidates: --candidates FILE, --propose N, or both")
	}
	return nil
}

// loadCandidates reads --candidates: a YAML list of system_message strings or
// {name, system_message, agents} mappings.
func loadCandidates(path string) ([]eval.Candidate, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--candidates: %w", err)
	}
	if st.Size() > maxCandidatesFile {
		return nil, fmt.Errorf("--candidates: %s is %d bytes, over the %d-byte limit", path, st.Size(), maxCandidatesFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--candidates: %w", err)
	}
	var raw []any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("--candidates %s: %s (write a list: `- \"Think step by step.\"` or `- {name: careful, system_message: ...}`)", path, yaml.FormatError(err, false, false))
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("--candidates %s holds no candidate: write a list of system messages", path)
	}
	var out []eval.Candidate
	for k, r := range raw {
		c := eval.Candidate{Name: fmt.Sprintf("candidate_%d", k+1), From: "file"}
		switch v := r.(type) {
		case string:
			c.SystemMessage = v
		case map[string]any:
			b, _ := yaml.Marshal(v)
			var m eval.Candidate
			if err := yaml.UnmarshalWithOptions(b, &m, yaml.DisallowUnknownField()); err != nil {
				return nil, fmt.Errorf("--candidates %s: item %d: %s (a candidate has name, system_message and agents)", path, k+1, yaml.FormatError(err, false, false))
			}
			m.From = c.From
			if m.Name == "" {
				m.Name = c.Name
			}
			c = m
		default:
			return nil, fmt.Errorf("--candidates %s: item %d is %T: give a system message or a {name, system_message, agents} mapping", path, k+1, r)
		}
		out = append(out, c)
	}
	return out, nil
}

// runOptimize is massgen eval --optimize: the search over the run o would make.
func runOptimize(cmd *cobra.Command, f evalFlags, o eval.Options, dataset string, stdout, stderr io.Writer) error {
	var cands []eval.Candidate
	if f.opt.candidates != "" {
		c, err := loadCandidates(f.opt.candidates)
		if err != nil {
			return exitf(ExitConfig, "%v", err)
		}
		cands = c
	}
	if err := eval.CheckCandidates(o.Config, cands); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	seed := int64(1)
	if o.Simulation != nil {
		seed = o.Simulation.Seed
	}
	if cmd.Flags().Changed("seed") {
		seed = f.seed
	}
	dir := filepath.Dir(o.Out)
	spent := 0.0
	if n := min(f.opt.propose, eval.MaxCandidates-1-len(cands)); n > 0 {
		p, err := proposer(o)
		if err != nil {
			return err
		}
		base := o.Config.Agents[0].SystemMessage
		proposed, cost, _, err := p.Propose(cmd.Context(), base, o.Items, n)
		spent += cost
		if err != nil {
			return exitf(ExitExecution, "%v", err)
		}
		cands = append(cands, proposed...)
	} else if f.opt.propose > 0 {
		fmt.Fprintf(stderr, "warning: --propose %d: the file's candidates already fill the %d allowed\n", f.opt.propose, eval.MaxCandidates)
	}
	opts := eval.OptimizeOptions{Base: o, Candidates: cands, Sample: f.opt.sample, Seed: seed, Refine: f.opt.refine,
		MaxCostUSD: f.opt.maxCost, Spent: spent, Dir: dir}
	if !f.quiet {
		opts.Progress = func(k int, c eval.Candidate, items int) {
			fmt.Fprintf(stderr, "massgen eval --optimize: candidate %d (%s, %s) on %d items\n", k, c.Name, c.From, items)
		}
	}
	rep, err := eval.Optimize(cmd.Context(), opts)
	if err != nil {
		return exitErr(err)
	}
	best := f.opt.out
	if best == "" {
		best = filepath.Join(dir, "best.yaml")
	}
	if err := eval.WriteOptimizeJSON(filepath.Join(dir, "optimize.json"), rep); err != nil {
		fmt.Fprintf(stderr, "massgen: %v\n", err)
	}
	werr := eval.WriteBest(best, rep, o.Config, o.Config.Path, o.Simulation, dataset)
	if err := eval.WriteOptimizeText(stdout, rep, dataset, best); err != nil {
		return exitf(ExitExecution, "%v", err)
	}
	switch {
	case errors.Is(werr, eval.ErrNoWinner):
		return exitf(ExitExecution, "%v (raise --max-cost or lower --sample)", werr)
	case werr != nil:
		return exitf(ExitExecution, "cannot write %s: %v", best, werr)
	case cmd.Context().Err() != nil:
		return exitf(ExitInterrupted, "interrupted: the best so far is in %s", best)
	}
	return nil
}

// proposer is the first agent's model, built as a run builds it.
func proposer(o eval.Options) (eval.Proposer, error) {
	b := o.Config.Agents[0].Backend
	key, from, err := app.APIKey(b, os.Getenv)
	if err != nil {
		return eval.Proposer{}, exitf(ExitConfig, "--propose writes with agent %s's model: %v", o.Config.Agents[0].ID, err)
	}
	if u, _, err := app.BaseURL(b, os.Getenv); err == nil && u != "" {
		b.BaseURL = u
	}
	p, err := app.NewProvider(b, key, from)
	if err != nil {
		return eval.Proposer{}, exitf(ExitConfig, "--propose: agent %s: %v", o.Config.Agents[0].ID, err)
	}
	return eval.Proposer{Provider: p, Backend: b.Type, Model: b.Model, Params: b.Params}, nil
}
