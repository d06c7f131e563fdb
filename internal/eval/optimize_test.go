package eval

import (
	"context"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/provider"
)

// pricey bills every call $0.01, as a provider that reports its own cost, and counts the
// calls whose system prompt holds each instruction.
type pricey struct {
	provider.Provider
	seen *sync.Map
}

func (p pricey) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	for _, m := range []string{"Be terse.", "Be kind."} {
		if strings.Contains(req.System, m) {
			n, _ := p.seen.LoadOrStore(m, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
		}
	}
	return func(yield func(provider.Chunk, error) bool) {
		for c, err := range p.Provider.Stream(ctx, req) {
			if u, ok := c.(provider.UsageChunk); ok {
				u.Usage.CostUSD = 0.01
				c = u
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

func optimizeOptions(t *testing.T, dir string, seen *sync.Map) OptimizeOptions {
	cfg, rep := config.Parse("team.yaml", []byte(team))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	base := Options{Dataset: "set.jsonl", Items: loadTestItems(t)[:4], Config: cfg, Team: "t1", Getenv: func(string) string { return "" },
		NewProvider: func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
			p, err := app.NewProvider(b, key, keyEnv)
			return pricey{p, seen}, err
		}}
	return OptimizeOptions{Base: base, Dir: dir, Seed: 1,
		Candidates: []Candidate{{Name: "terse", SystemMessage: "Be terse.", From: "file"}, {Name: "kind", SystemMessage: "Be kind.", From: "file"}}}
}

// The cost cap stops the search: the candidate that spends it stops starting items, cannot
// win, and no candidate starts after it; with no finished candidate there is nothing to write.
func TestOptimize_CostCapStopsTheSearch(t *testing.T) {
	dir := t.TempDir()
	o := optimizeOptions(t, dir, &sync.Map{})
	o.MaxCostUSD = 0.05 // one item's session costs more (seven calls)
	rep, err := Optimize(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || rep.Results[0].Complete || rep.Results[0].Graded != 1 || rep.Best != -1 {
		t.Fatalf("results %+v best %d: want the baseline cut after its first item and no winner", rep.Results, rep.Best)
	}
	if !strings.Contains(rep.Stopped, "cost cap") || !strings.Contains(rep.Results[0].Stopped, "cost cap") {
		t.Errorf("stopped %q / %q, want both to name the cost cap", rep.Stopped, rep.Results[0].Stopped)
	}
	if rep.CostUSD < o.MaxCostUSD || rep.CostUSD > 0.5 {
		t.Errorf("spent $%v: want the one item's cost over the $%v cap", rep.CostUSD, o.MaxCostUSD)
	}
	if err := WriteBest(filepath.Join(dir, "best.yaml"), rep, o.Base.Config, "", nil, "set.jsonl"); err != ErrNoWinner {
		t.Errorf("WriteBest = %v, want ErrNoWinner", err)
	}
}

// Without a cap every candidate runs on the same items, each with its own instructions in
// every agent's requests; a tie on accuracy goes to the cheaper, then the baseline.
func TestOptimize_RunsEachCandidateWithItsInstructions(t *testing.T) {
	dir := t.TempDir()
	var seen sync.Map
	o := optimizeOptions(t, dir, &seen)
	o.Sample = 3
	rep, err := Optimize(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 3 || len(rep.Items) != 3 {
		t.Fatalf("%d results on %d items", len(rep.Results), len(rep.Items))
	}
	for _, r := range rep.Results {
		if !r.Complete || r.Graded != 3 || r.CostUSD <= 0 {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	for _, m := range []string{"Be terse.", "Be kind."} {
		if n, ok := seen.Load(m); !ok || n.(*atomic.Int32).Load() < 9 {
			t.Errorf("%q reached %v calls, want every agent's calls on 3 items", m, n)
		}
	}
	// Scripted agents answer the same whatever their instructions: all tie, and the
	// baseline wins unless another was cheaper.
	if b := rep.Results[rep.Best]; b.Name != "baseline" && b.CostUSD >= rep.Results[0].CostUSD {
		t.Errorf("best %s at $%v over the baseline at $%v", b.Name, b.CostUSD, rep.Results[0].CostUSD)
	}
	if got := sampleItems(o.Base.Items, 3, 1); len(got) != 3 || got[0].ID != rep.Items[0] {
		t.Errorf("the sample does not repeat with its seed: %v vs %v", got, rep.Items)
	}
}

func TestCheckCandidates(t *testing.T) {
	cfg, _ := config.Parse("team.yaml", []byte(team))
	long := strings.Repeat("x", maxInstructionBytes+1)
	for _, tc := range []struct {
		c    []Candidate
		want string
	}{
		{[]Candidate{{Name: "empty"}}, "no system_message"},
		{[]Candidate{{Name: "who", Agents: map[string]string{"zz": "hi"}}}, `agent "zz"`},
		{[]Candidate{{Name: "big", SystemMessage: long}}, "over the"},
		{make([]Candidate, MaxCandidates), "over the limit"},
	} {
		if err := CheckCandidates(cfg, tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.c[0].Name, err, tc.want)
		}
	}
}
