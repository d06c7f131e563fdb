package eval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// team is the scripted team every test item runs with; each item gets its own answers and
// votes (plans). Voting waits for every answer, so the deciding votes do not depend on which
// agent is quicker.
const team = `
agents:
  - id: a1
    backend: {type: scripted, answers: ["-"], latency: 1ms}
  - id: a2
    backend: {type: scripted, answers: ["-"], latency: 1ms}
  - id: a3
    backend: {type: scripted, answers: ["-"], latency: 1ms}
orchestrator:
  defer_voting_until_all_answered: true
  end_when_decided: false # every vote counted: the figures below are computed from all of them
`

// dataset holds seven items, one per grader and the tricky cases: the vote picking a wrong
// answer while an agent had it right (q4, q5), an agent right first and wrong after (q5), all
// agreeing on a wrong answer (q6), a session where every agent fails (q7).
const dataset = `{"id": "q1", "question": "What is 6 x 7?", "answer": "42", "grader": "numeric"}
{"id": "q2", "question": "Which city is the capital of Italy?", "choices": ["Paris", "Madrid", "Rome", "Berlin"], "answer": "Rome"}
{"id": "q3", "question": "Where is the Louvre?", "answer": "Paris", "grader": "contains"}
{"id": "q4", "question": "What is the largest animal?", "answer": "blue whale", "grader": "contains"}
{"id": "q5", "question": "How many days are in a week?", "grader": "regex", "pattern": "^\\s*7\\s*$"}
{"id": "q6", "question": "What is 10 x 10?", "answer": "100", "grader": "numeric"}
{"id": "q7", "question": "What is 1 + 1?", "answer": "2", "grader": "numeric"}
`

// plan is what one agent does on an item: its answers (a second one comes once it has read
// all three) and the label it votes for.
type plan struct {
	answers []string
	vote    string
	fail    bool
}

var plans = map[string][3]plan{
	"q1": {{[]string{"42"}, "agent1", false}, {[]string{"41"}, "agent1", false}, {[]string{"The answer is 42"}, "agent1", false}},
	"q2": {{[]string{"Answer: B"}, "agent1", false}, {[]string{"(C)"}, "agent2", false}, {[]string{"**C**"}, "agent2", false}},
	"q3": {{[]string{"Paris"}, "agent3", false}, {[]string{"paris"}, "agent3", false}, {[]string{"Paris."}, "agent3", false}},
	"q4": {{[]string{"The blue whale."}, "agent3", false}, {[]string{"An elephant", "The Blue Whale"}, "agent3", false}, {[]string{"Elephant"}, "agent3", false}},
	"q5": {{[]string{"7", "8"}, "agent2", false}, {[]string{"9"}, "agent2", false}, {[]string{"10"}, "agent2", false}},
	"q6": {{[]string{"3"}, "agent1", false}, {[]string{"3.0"}, "agent1", false}, {[]string{"The answer is 3"}, "agent1", false}},
	"q7": {{fail: true}, {fail: true}, {fail: true}},
}

// testTeam returns the team and ConfigFor that plays plans.
func testTeam(t *testing.T) (*config.Config, func(Item) *config.Config) {
	t.Helper()
	base, rep := config.Parse("team.yaml", []byte(team))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return base, func(it Item) *config.Config {
		cfg := *base
		cfg.Agents = slices.Clone(base.Agents)
		for k := range cfg.Agents {
			p := plans[it.ID][k]
			s := *cfg.Agents[k].Backend.Script
			s.Answers, s.Vote, s.ImproveAfter = p.answers, p.vote, 3
			if p.fail {
				s.Answers = []string{"never sent"}
				s.Faults = []config.Fault{{Kind: config.FaultFatal}}
			}
			cfg.Agents[k].Backend.Script = &s
		}
		return &cfg
	}
}

func loadTestItems(t *testing.T) []Item {
	t.Helper()
	items, _, err := Load(strings.NewReader(dataset), "set.jsonl", Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func testOptions(t *testing.T, dir string) Options {
	base, configFor := testTeam(t)
	return Options{Dataset: "set.jsonl", Items: loadTestItems(t), Config: base, ConfigFor: configFor, Team: "t1",
		Out: filepath.Join(dir, ResultsFile), Logging: true, LogRoot: filepath.Join(dir, LogsDir), Getenv: func(string) string { return "" }}
}

// sessions counts the session folders written under the log root: one per item run.
func sessions(t *testing.T, root string) int {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(entries)
}

func TestRun_Metrics(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t, dir)
	out, err := Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := out.Summary
	if out.ExitCode != app.ExitExecution {
		t.Errorf("exit code %d, want 2 (q7 failed)", out.ExitCode)
	}
	// Hand-computed from plans: see the comments of each figure.
	want := map[string]Ratio{
		"voted":         {3, 6, 0.5},     // q1 "42", q2 "(C)", q3 "Paris."; q4 Elephant, q5 9, q6 3 are wrong
		"oracle latest": {4, 6, 4.0 / 6}, // q1-q3, q4 (a1, a2's last); not q5 (8, 9, 10), not q6
		"oracle any":    {5, 6, 5.0 / 6}, // and q5 (a1's first, 7)
		"majority":      {5, 6, 5.0 / 6}, // q1 42 x2, q2 C x2, q3 paris x3, q4 and q5 three-way ties won by a1; q6 3 x3 wrong
		"agreement":     {2, 6, 2.0 / 6}, // q3 (paris), q6 (3)
		"self votes":    {7, 18, 7.0 / 18},
		"a1 first":      {4, 6, 4.0 / 6}, // q1 q3 q4 q5
		"a1 last":       {3, 6, 3.0 / 6}, // q1 q3 q4
		"a2 first":      {2, 6, 2.0 / 6}, // q2 q3
		"a2 last":       {3, 6, 3.0 / 6}, // q2 q3 q4
		"a3 first":      {3, 6, 3.0 / 6}, // q1 q2 q3
		"a3 last":       {3, 6, 3.0 / 6},
	}
	got := map[string]Ratio{"voted": s.Voted, "oracle latest": s.OracleLatest, "oracle any": s.OracleAny,
		"majority": s.Majority, "agreement": s.Agreement, "self votes": s.SelfVotes}
	for _, a := range s.Agents {
		got[a.ID+" first"], got[a.ID+" last"] = a.First, a.Last
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); d != "" {
		t.Errorf("figures (-want +got):\n%s", d)
	}
	if s.Items != 7 || s.Graded != 6 || s.Failed != 1 || s.Pending != 0 {
		t.Errorf("items %d graded %d failed %d pending %d; want 7 6 1 0", s.Items, s.Graded, s.Failed, s.Pending)
	}
	if sessions(t, o.LogRoot) != 7 {
		t.Errorf("%d sessions, want 7", sessions(t, o.LogRoot))
	}

	recs, _, err := ReadResults(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 {
		t.Fatalf("%d results, want 7", len(recs))
	}
	if r := recs["q7"]; r.Status != StatusFailed || !strings.Contains(r.Error, "every agent failed") {
		t.Errorf("q7: status %s error %q, want failed: every agent failed", r.Status, r.Error)
	}
	if d := cmp.Diff([]Vote{{"a1", "a1"}, {"a2", "a2"}, {"a3", "a2"}}, sortVotes(recs["q2"].Votes)); d != "" {
		t.Errorf("q2 votes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"An elephant", "The Blue Whale"}, recs["q4"].Agents[1].Answers); d != "" {
		t.Errorf("q4 a2 answers (-want +got):\n%s", d)
	}
	// Tokens: each record's are its log's usage events, and the summary their sum.
	var total Tokens
	var seconds float64
	for _, it := range o.Items {
		r := recs[it.ID]
		if r.LogDir == "" || !strings.HasPrefix(r.LogDir, o.LogRoot) {
			t.Errorf("%s: log dir %q, want one under %s", it.ID, r.LogDir, o.LogRoot)
			continue
		}
		if fromLog := logTokens(t, r.LogDir); r.Tokens != fromLog {
			t.Errorf("%s: tokens %+v, the log says %+v", it.ID, r.Tokens, fromLog)
		}
		if r.Seconds <= 0 {
			t.Errorf("%s: wall time %v", it.ID, r.Seconds)
		}
		total = total.Add(r.Tokens)
		seconds += r.Seconds
	}
	if s.Tokens != total || total.Input == 0 || total.Output == 0 {
		t.Errorf("summary tokens %+v, items add up to %+v", s.Tokens, total)
	}
	if d := s.ItemSeconds.Total - seconds; d > 1e-9 || d < -1e-9 || s.WallSeconds <= 0 {
		t.Errorf("item seconds %+v (items add up to %v), wall %v", s.ItemSeconds, seconds, s.WallSeconds)
	}
	if !s.CostKnown || s.CostUSD != 0 {
		t.Errorf("cost %v known %v, want a known 0 (scripted agents are free)", s.CostUSD, s.CostKnown)
	}
}

func sortVotes(v []Vote) []Vote {
	v = slices.Clone(v)
	slices.SortFunc(v, func(a, b Vote) int { return strings.Compare(a.Voter, b.Voter) })
	return v
}

// logTokens adds up the usage events of a turn's events.jsonl.
func logTokens(t *testing.T, dir string) Tokens {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out Tokens
	for _, e := range evs {
		if u, ok := e.Payload.(event.UsageReported); ok {
			out = out.Add(Tokens{u.Usage.InputTokens, u.Usage.CachedInputTokens, u.Usage.OutputTokens, u.Usage.ReasoningTokens})
		}
	}
	return out
}

// TestRun_Resume: a second run with the same results file runs only the failed item again.
func TestRun_Resume(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t, dir)
	first, err := Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := sessions(t, o.LogRoot); n != 7 {
		t.Fatalf("first run: %d sessions, want 7", n)
	}
	var ran []string
	o.Progress = func(p Progress) { ran = append(ran, p.Item.ID) }
	second, err := Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := sessions(t, o.LogRoot); n != 8 {
		t.Errorf("second run: %d sessions in all, want 8 (q7 again)", n)
	}
	if d := cmp.Diff([]string{"q7"}, ran); d != "" {
		t.Errorf("second run ran (-want +got):\n%s", d)
	}
	if first.Summary.Voted != second.Summary.Voted || first.Summary.Majority != second.Summary.Majority {
		t.Errorf("resumed summary differs: %+v vs %+v", first.Summary.Voted, second.Summary.Voted)
	}

	// A results file whose items changed is refused before anything runs.
	o.Items = loadTestItems(t)
	o.Items[0].Answers = []string{"43"}
	_, err = Run(t.Context(), o)
	var ae *app.Error
	if !errors.As(err, &ae) || ae.Code != app.ExitConfig || !strings.Contains(err.Error(), "item q1 (line 1) is not the one") {
		t.Errorf("changed item: err = %v, want exit 1 naming q1", err)
	}
	if n := sessions(t, o.LogRoot); n != 8 {
		t.Errorf("a refused run started sessions: %d", n)
	}
}

// TestRun_Interrupted: Ctrl-C in the middle of the third item keeps the two finished ones
// (exit 4), and a resumed run does the other five.
func TestRun_Interrupted(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t, dir)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	configFor := o.ConfigFor
	o.ConfigFor = func(it Item) *config.Config {
		cfg := configFor(it)
		if it.ID == "q3" {
			// Slow this item's agents down and interrupt while they answer.
			for k := range cfg.Agents {
				s := *cfg.Agents[k].Backend.Script
				s.Latency = time.Second
				cfg.Agents[k].Backend.Script = &s
			}
			time.AfterFunc(50*time.Millisecond, cancel)
		}
		return cfg
	}
	out, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != app.ExitInterrupted {
		t.Errorf("exit code %d, want 4", out.ExitCode)
	}
	data, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"id":"q1"`) || !strings.HasPrefix(lines[1], `{"id":"q2"`) {
		t.Errorf("results file after Ctrl-C:\n%s\nwant q1 and q2 only", data)
	}
	if s := out.Summary; s.Graded != 2 || s.Pending != 5 {
		t.Errorf("graded %d pending %d, want 2 and 5", s.Graded, s.Pending)
	}
	o.ConfigFor = configFor
	var ran []string
	o.Progress = func(p Progress) { ran = append(ran, p.Item.ID) }
	res, err := Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"q3", "q4", "q5", "q6", "q7"}, ran); d != "" {
		t.Errorf("resumed run ran (-want +got):\n%s", d)
	}
	if res.Summary.Voted != (Ratio{3, 6, 0.5}) {
		t.Errorf("resumed voted accuracy %+v, want 3/6", res.Summary.Voted)
	}
}

// TestRun_Concurrency: items run side by side, and --provider-concurrency caps the model
// calls in flight across them.
func TestRun_Concurrency(t *testing.T) {
	for _, tt := range []struct {
		name    string
		limits  Limits
		wantMax func(int) bool
	}{
		{"no limit", Limits{}, func(n int) bool { return n > 3 }}, // several items' agents at once
		{"one call at a time", Limits{Concurrent: map[string]int{"scripted": 1}}, func(n int) bool { return n == 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions(t, dir)
			o.Concurrency, o.Limits = 4, tt.limits
			var inFlight, most atomic.Int64
			var mu sync.Mutex
			o.NewProvider = func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
				p, err := app.NewProvider(b, key, keyEnv)
				return counting{p: p, n: &inFlight, most: &most, mu: &mu}, err
			}
			configFor := o.ConfigFor
			o.ConfigFor = func(it Item) *config.Config {
				cfg := configFor(it)
				for k := range cfg.Agents {
					s := *cfg.Agents[k].Backend.Script
					s.Latency = 20 * time.Millisecond
					cfg.Agents[k].Backend.Script = &s
				}
				return cfg
			}
			out, err := Run(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.wantMax(int(most.Load())) {
				t.Errorf("at most %d calls in flight", most.Load())
			}
			if out.Summary.Voted != (Ratio{3, 6, 0.5}) || out.Summary.OracleAny != (Ratio{5, 6, 5.0 / 6}) {
				t.Errorf("voted %+v oracle %+v, want the figures of a run one item at a time", out.Summary.Voted, out.Summary.OracleAny)
			}
		})
	}
}

// TestRun_MaxFailures: once that many items in a row have failed, no more start.
func TestRun_MaxFailures(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t, dir)
	configFor := o.ConfigFor
	o.ConfigFor = func(it Item) *config.Config {
		cfg := configFor(Item{ID: "q7"}) // every agent fails on every item
		return cfg
	}
	o.MaxFailures = 2
	out, err := Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != app.ExitExecution || !strings.Contains(out.Stopped, "2 items in a row failed (--max-failures 2), the last with: every agent failed") {
		t.Errorf("exit %d, stopped %q", out.ExitCode, out.Stopped)
	}
	if s := out.Summary; s.Failed != 2 || s.Pending != 5 {
		t.Errorf("failed %d pending %d, want 2 and 5", s.Failed, s.Pending)
	}
	if n := sessions(t, o.LogRoot); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
}

// TestRun_ConfigError: a team that cannot start stops the run at the first item, with the
// app's exit code, and records nothing.
func TestRun_ConfigError(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t, dir)
	cfg, rep := config.Parse("team.yaml", []byte("agents:\n  - id: a\n    backend: {type: openai, model: gpt-5}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	o.Config, o.ConfigFor = cfg, nil
	_, err := Run(t.Context(), o)
	var ae *app.Error
	if !errors.As(err, &ae) || ae.Code != app.ExitConfig || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("err = %v, want exit 1 naming the missing key", err)
	}
	if recs, _, _ := ReadResults(o.Out); len(recs) != 0 {
		t.Errorf("%d items recorded", len(recs))
	}
}
