package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	"massgen/internal/config"
	"massgen/internal/private"
)

// massgen eval --optimize: DSPy's optimisers done small and bounded. Candidates are
// instructions for the team's agents (one system_message for all, or one per agent: persona
// variants); each runs on the dataset (or a seeded sample of it) as an ordinary eval run, and
// the one whose team is right most often wins, the cheaper on a tie, the baseline (the
// config's own instructions) on a full tie. One optional refinement round tries the best
// joined with the runner-up. A cost cap and a candidate cap bound what the search can spend.

// Candidate is one set of instructions to try.
type Candidate struct {
	Name string `json:"name" yaml:"name"`
	// SystemMessage is every agent's system message; Agents, by agent id, override it per
	// agent. Both empty is the config's own instructions (the baseline).
	SystemMessage string            `json:"system_message,omitempty" yaml:"system_message"`
	Agents        map[string]string `json:"agents,omitempty" yaml:"agents"`
	// From says where it came from: baseline, file, proposed, refined.
	From string `json:"from"`
}

// Caps of a search.
const (
	MaxCandidates       = 12
	maxInstructionBytes = 8 << 10
)

// CandidateResult is one candidate's evidence.
type CandidateResult struct {
	Candidate
	Items     int     `json:"items"`
	Graded    int     `json:"graded"`
	Accuracy  float64 `json:"accuracy"`
	Correct   int     `json:"correct"`
	CostUSD   float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"`
	Tokens    Tokens  `json:"tokens"`
	Calls     int     `json:"calls"`
	Results   string  `json:"results"`
	// Complete is false when the cost cap (or a failure) stopped it before every item ran:
	// such a candidate cannot win.
	Complete bool   `json:"complete"`
	Stopped  string `json:"stopped,omitempty"`
}

// OptimizeOptions configure a search. Base is the eval run every candidate repeats (its
// Config, Items, Simulation, Limits, ...); Out and Team are set per candidate.
type OptimizeOptions struct {
	Base       Options
	Candidates []Candidate // besides the baseline, in order
	// Sample, when above 0 and below the item count, runs each candidate on that many items,
	// drawn with Seed (the same items for every candidate).
	Sample int
	Seed   int64
	Refine bool
	// MaxCostUSD caps the whole search (0: none): no candidate starts once it is spent, and
	// the running one stops starting items.
	MaxCostUSD float64
	// Spent is what was spent before the search (proposing candidates): it counts towards
	// MaxCostUSD and the report's cost.
	Spent float64
	// Dir holds each candidate's results (cand_<k>/results.jsonl).
	Dir string
	// Progress is told when a candidate starts (nil: silent).
	Progress func(k int, c Candidate, items int)
}

// OptimizeReport is what a search found.
type OptimizeReport struct {
	Results []CandidateResult `json:"candidates"`
	Best    int               `json:"best"` // index in Results
	Items   []string          `json:"items"`
	Seed    int64             `json:"seed"`
	CostUSD float64           `json:"cost_usd"`
	Stopped string            `json:"stopped,omitempty"`
}

// CheckCandidates checks candidates against the team: ids that exist, sizes, the cap.
func CheckCandidates(cfg *config.Config, cands []Candidate) error {
	if len(cands)+1 > MaxCandidates {
		return fmt.Errorf("%d candidates and the baseline are over the limit of %d", len(cands), MaxCandidates)
	}
	ids := map[string]bool{}
	for _, a := range cfg.Agents {
		ids[a.ID] = true
	}
	for k, c := range cands {
		if c.SystemMessage == "" && len(c.Agents) == 0 {
			return fmt.Errorf("candidate %d (%s) has no system_message and no agents: give it instructions", k+1, c.Name)
		}
		if len(c.SystemMessage) > maxInstructionBytes {
			return fmt.Errorf("candidate %d (%s): system_message is %d bytes, over the %d-byte limit", k+1, c.Name, len(c.SystemMessage), maxInstructionBytes)
		}
		for id, m := range c.Agents {
			if !ids[id] {
				return fmt.Errorf("candidate %d (%s) names agent %q, which the team does not have", k+1, c.Name, id)
			}
			if len(m) > maxInstructionBytes {
				return fmt.Errorf("candidate %d (%s): agent %s's message is %d bytes, over the %d-byte limit", k+1, c.Name, id, len(m), maxInstructionBytes)
			}
		}
	}
	return nil
}

// Instructions are the system messages the team's agents run with under c, in config order.
func (c Candidate) Instructions(cfg *config.Config) []string {
	out := make([]string, len(cfg.Agents))
	for k, a := range cfg.Agents {
		out[k] = a.SystemMessage
		if c.SystemMessage != "" {
			out[k] = c.SystemMessage
		}
		if m, ok := c.Agents[a.ID]; ok {
			out[k] = m
		}
	}
	return out
}

// Optimize runs the search. An error is a run that could not go on (as Run's).
func Optimize(ctx context.Context, o OptimizeOptions) (OptimizeReport, error) {
	base := o.Base
	if err := CheckCandidates(base.Config, o.Candidates); err != nil {
		return OptimizeReport{}, err
	}
	items := sampleItems(base.Items, o.Sample, o.Seed)
	rep := OptimizeReport{Seed: o.Seed, Best: -1, CostUSD: o.Spent}
	for _, it := range items {
		rep.Items = append(rep.Items, it.ID)
	}
	cands := append([]Candidate{{Name: "baseline", From: "baseline"}}, o.Candidates...)
	try := func(c Candidate) error {
		k := len(rep.Results)
		if o.MaxCostUSD > 0 && rep.CostUSD >= o.MaxCostUSD {
			rep.Stopped = fmt.Sprintf("the cost cap $%.4f was spent before candidate %s", o.MaxCostUSD, c.Name)
			return nil
		}
		if o.Progress != nil {
			o.Progress(k, c, len(items))
		}
		res, err := runCandidate(ctx, o, items, k, c, o.MaxCostUSD-rep.CostUSD)
		rep.CostUSD += res.CostUSD
		rep.Results = append(rep.Results, res)
		return err
	}
	for _, c := range cands {
		if err := try(c); err != nil || ctx.Err() != nil {
			rep.Best = best(rep.Results)
			return rep, err
		}
	}
	if o.Refine && rep.Stopped == "" {
		if c, ok := refinement(base.Config, rep.Results); ok && len(rep.Results) < MaxCandidates {
			if err := try(c); err != nil {
				rep.Best = best(rep.Results)
				return rep, err
			}
		}
	}
	rep.Best = best(rep.Results)
	return rep, nil
}

// runCandidate runs the items with c's instructions; budget caps its cost (<= 0: none left
// is handled by the caller; no cap when the search has none).
func runCandidate(ctx context.Context, o OptimizeOptions, items []Item, k int, c Candidate, budget float64) (CandidateResult, error) {
	run := o.Base
	cfg := *run.Config
	cfg.Agents = slices.Clone(run.Config.Agents)
	instr := c.Instructions(&cfg)
	for i := range cfg.Agents {
		cfg.Agents[i].SystemMessage = instr[i]
	}
	run.Config, run.Items = &cfg, items
	if run.Simulation != nil {
		run.Simulation = run.Simulation.WithInstructions(instr)
	}
	dir := filepath.Join(o.Dir, fmt.Sprintf("cand_%d", k))
	if err := private.MkdirAll(dir); err != nil {
		return CandidateResult{Candidate: c, Items: len(items)}, fmt.Errorf("create %s: %w", dir, err)
	}
	run.Out = filepath.Join(dir, ResultsFile)
	run.LogRoot = filepath.Join(dir, LogsDir)
	run.Team = candidateID(run.Team, instr)
	if o.MaxCostUSD > 0 {
		run.MaxCostUSD = budget
	}
	out, err := Run(ctx, run)
	s := out.Summary
	res := CandidateResult{Candidate: c, Items: len(items), Graded: s.Graded, Correct: s.Voted.N, Accuracy: s.Voted.Rate,
		CostUSD: s.CostUSD, CostKnown: s.CostKnown, Tokens: s.Tokens, Calls: s.Calls, Results: run.Out, Stopped: out.Stopped}
	res.Complete = err == nil && out.ExitCode == 0 && s.Graded == len(items)
	if err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

func candidateID(team string, instr []string) string {
	h := sha256.New()
	h.Write([]byte(team))
	for _, s := range instr {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// sampleItems draws n items with seed (all of them when n is 0 or not below their count),
// keeping the dataset's order.
func sampleItems(items []Item, n int, seed int64) []Item {
	if n <= 0 || n >= len(items) {
		return items
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x6d617373))
	pick := r.Perm(len(items))[:n]
	slices.Sort(pick)
	out := make([]Item, n)
	for k, i := range pick {
		out[k] = items[i]
	}
	return out
}

// best is the complete candidate right most often, then the cheaper, then the earlier (the
// baseline first); -1 when none is complete.
func best(rs []CandidateResult) int {
	b := -1
	for k, r := range rs {
		if !r.Complete {
			continue
		}
		if b < 0 || r.Correct > rs[b].Correct || r.Correct == rs[b].Correct && r.CostUSD < rs[b].CostUSD {
			b = k
		}
	}
	return b
}

// refinement is the best candidate's instructions joined with the runner-up's: DSPy's
// optimisers combine what worked; ok is false with fewer than two complete candidates that
// differ, or when the two are the baseline and one more (nothing to join).
func refinement(cfg *config.Config, rs []CandidateResult) (Candidate, bool) {
	order := make([]int, 0, len(rs))
	for k, r := range rs {
		if r.Complete {
			order = append(order, k)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return rs[b].Correct - rs[a].Correct })
	if len(order) < 2 {
		return Candidate{}, false
	}
	first, second := rs[order[0]].Candidate, rs[order[1]].Candidate
	a, b := first.Instructions(cfg), second.Instructions(cfg)
	joined := Candidate{Name: first.Name + "+" + second.Name, From: "refined", Agents: map[string]string{}}
	differ := false
	for k, ag := range cfg.Agents {
		m := a[k]
		if b[k] != "" && !strings.Contains(a[k], b[k]) {
			m = strings.TrimSpace(a[k] + "\n\n" + b[k])
			differ = true
		}
		joined.Agents[ag.ID] = m
	}
	if !differ {
		return Candidate{}, false
	}
	return joined, true
}

// ErrNoWinner is returned by WriteBest when no candidate ran on every item.
var ErrNoWinner = errors.New("no candidate ran on every item: nothing to write")

// bestOf is the report's winner.
func (r OptimizeReport) bestOf() (CandidateResult, error) {
	if r.Best < 0 || r.Best >= len(r.Results) {
		return CandidateResult{}, ErrNoWinner
	}
	return r.Results[r.Best], nil
}
