package engine

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// fakeSubagents plays the orchestrator's subagents: the critic proposes two criteria, the
// evaluator reports, each for 0.1 USD; it counts the launches by kind.
type fakeSubagents struct {
	mu    sync.Mutex
	kinds map[string]int
}

func (f *fakeSubagents) launch(_ context.Context, c SubagentCall) SubagentReply {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kinds == nil {
		f.kinds = map[string]int{}
	}
	f.kinds[c.Kind]++
	spent := provider.Usage{CostUSD: 0.1}
	switch c.Kind {
	case KindCriteriaCritic:
		b, _ := json.Marshal(map[string]any{"proposed_criteria": []map[string]string{
			{"text": "The answer states its assumptions.", "category": "standard"},
			{"text": "The answer shows a worked example.", "category": "standard"}}})
		return SubagentReply{ID: c.ID, Answer: string(b), Spent: spent}
	case KindRoundEvaluator:
		return SubagentReply{ID: c.ID, Answer: `{"criterion_findings": "E1 fails: the product is wrong"}`, Spent: spent}
	}
	return SubagentReply{ID: c.ID, Error: "unexpected kind " + c.Kind}
}

// runLocal runs o with Run and returns its log.
func runLocal(o Options) (Result, []event.Event) {
	var log []event.Event
	o.Bus = event.NewBus(nil)
	o.Bus.Subscribe(event.SinkFunc(func(e event.Event) { log = append(log, e) }))
	return Run(context.Background(), o), log
}

// sameState fails unless the session a replica rebuilds from x's ops holds what the
// orchestrator's subagents decided: a coordinator resumed from them asks none again.
func sameState(t *testing.T, x *Coordinator, o Options) {
	t.Helper()
	r := replica(o, x.Ops())
	if !maps.Equal(r.critiqued, x.s.critiqued) || !maps.Equal(r.evaluated, x.s.evaluated) ||
		r.criticRuns != x.s.criticRuns || r.evaluatorRuns != x.s.evaluatorRuns || !slices.Equal(r.reports, x.s.reports) {
		t.Errorf("replica: critiqued %v evaluated %v runs %d/%d reports %q; coordinator: %v %v %d/%d %q",
			r.critiqued, r.evaluated, r.criticRuns, r.evaluatorRuns, r.reports,
			x.s.critiqued, x.s.evaluated, x.s.criticRuns, x.s.evaluatorRuns, x.s.reports)
	}
	if !slices.Equal(r.m.Criteria(), x.s.m.Criteria()) {
		t.Errorf("replica's criteria %v, coordinator's %v", r.m.Criteria(), x.s.m.Criteria())
	}
	if r.cost != x.s.cost {
		t.Errorf("replica's cost %v, coordinator's %v", r.cost, x.s.cost)
	}
}

// spentOnce checks that the session's cost is its logged usage, each 0.1 USD subagent launch
// counted once.
func spentOnce(t *testing.T, res Result, log []event.Event, launches int) {
	t.Helper()
	var logged, subs float64
	for _, u := range ofType[event.UsageReported](log) {
		logged += u.CostUSD
		if u.Usage.CostUSD == 0.1 {
			subs += u.CostUSD
		}
	}
	if diff := res.CostUSD - logged; diff > 1e-9 || diff < -1e-9 {
		t.Errorf("cost %v, the log's usage %v", res.CostUSD, logged)
	}
	if want := 0.1 * float64(launches); subs < want-1e-9 || subs > want+1e-9 {
		t.Errorf("the subagents' usage in the log is %v, want %v (%d launches)", subs, want, launches)
	}
}

// bootstrap_subagent driven: the critic runs before a round, once per answer set, and the
// criteria it adds are the coordinator's, scored by later turns and rebuilt by replicas.
func TestCoordinator_CriticAsRun(t *testing.T) {
	var lf, df fakeSubagents
	lo := bootstrapOptions(config.CriteriaBootstrapSubagent)
	lo.Subagent = lf.launch
	want, local := runLocal(lo)
	o := bootstrapOptions(config.CriteriaBootstrapSubagent)
	o.Subagent = df.launch
	x, got, driven := driveCoordinator(t, o)
	if got.ExitCode != 0 || got.Winner == "" || want.ExitCode != 0 {
		t.Fatalf("driven: exit %d winner %q (%v); Run: exit %d (%v)", got.ExitCode, got.Winner, got.Err, want.ExitCode, want.Err)
	}
	evs := ofType[event.CriteriaEmerged](driven)
	if len(evs) == 0 || df.kinds[KindCriteriaCritic] != len(evs) {
		t.Fatalf("%d criteria_emerged events, %d critic runs", len(evs), df.kinds[KindCriteriaCritic])
	}
	first := evs[0]
	if first.Source != event.CriteriaSubagent || len(first.Added) != 2 || first.Added[0].ID != "E5" || first.SubagentID == "" || first.Warning != "" {
		t.Errorf("first criteria_emerged %+v", first)
	}
	if lt := ofType[event.CriteriaEmerged](local); len(lt) == 0 || !slices.Equal(emergedTexts(local)[:2], emergedTexts(driven)[:2]) {
		t.Errorf("Run's criteria %v, driven %v", emergedTexts(local), emergedTexts(driven))
	}
	seen := map[int]bool{}
	for _, ce := range evs {
		if seen[ce.Version] {
			t.Errorf("answer set %d critiqued twice", ce.Version)
		}
		seen[ce.Version] = true
	}
	if !scoresCriterion(driven, "E6") || !toldCriteria(driven, "worked example") {
		t.Error("no later checklist scored E6, or no agent was told it")
	}
	spentOnce(t, got, driven, df.kinds[KindCriteriaCritic])
	sameState(t, x, o)
}

// evaluatorOptions are one agent under the round evaluator: before each round after its
// first answer, the evaluator reviews the answers and the round opens with its report.
func evaluatorOptions(sub SubagentFunc) Options {
	o := bootstrapOptions("")
	o.Agents = o.Agents[:1]
	o.Orchestrator.RoundEvaluator = config.RoundEvaluator{Enabled: true, Managed: true, BeforeChecklist: true}
	o.Subagent = sub
	return o
}

func TestCoordinator_EvaluatorAsRun(t *testing.T) {
	var lf, df fakeSubagents
	want, local := runLocal(evaluatorOptions(lf.launch))
	x, got, driven := driveCoordinator(t, evaluatorOptions(df.launch))
	if got.ExitCode != 0 || got.Winner != want.Winner || got.FinalAnswer != want.FinalAnswer || got.CostUSD != want.CostUSD {
		t.Fatalf("driven: exit %d winner %q answer %q cost %v (%v); Run: winner %q answer %q cost %v",
			got.ExitCode, got.Winner, got.FinalAnswer, got.CostUSD, got.Err, want.Winner, want.FinalAnswer, want.CostUSD)
	}
	for name, log := range map[string][]event.Event{"Run": local, "driven": driven} {
		evs := ofType[event.RoundEvaluated](log)
		if len(evs) != 2 || evs[0].Version != 1 || evs[1].Version != 2 || evs[0].Warning != "" || !strings.Contains(evs[0].Report, "E1 fails") {
			t.Errorf("%s: round_evaluated %+v", name, evs)
		}
		read := 0
		for _, mc := range ofType[event.ModelCalled](log) {
			for _, m := range mc.Messages {
				read += strings.Count(m.Content, "<round_evaluator_report>")
			}
		}
		// Each report opens one round, and stays in the conversation after: the first is
		// read by the calls of two rounds, the second by one.
		if read == 0 {
			t.Errorf("%s: no call read a report", name)
		}
	}
	if lf.kinds[KindRoundEvaluator] != 2 || df.kinds[KindRoundEvaluator] != 2 {
		t.Errorf("evaluator runs: Run %d, driven %d; want 2", lf.kinds[KindRoundEvaluator], df.kinds[KindRoundEvaluator])
	}
	if count(local, "model_called") != count(driven, "model_called") {
		t.Errorf("model calls: Run %d, driven %d", count(local, "model_called"), count(driven, "model_called"))
	}
	spentOnce(t, got, driven, 2)
	sameState(t, x, evaluatorOptions(df.launch))
}

// A verifier subagent is launched by the coordinator as it presents, as Run does, and its
// spending counted once.
func TestCoordinator_VerifierSubagentAsRun(t *testing.T) {
	v := []config.Verifier{{Aspect: config.AspectCustom, Subagent: true, Instructions: "names a river"}}
	sub := func(_ context.Context, c SubagentCall) SubagentReply {
		if strings.Contains(c.Question, "Paris, of course.") {
			return SubagentReply{ID: c.ID, Answer: `{"verdict": "fail", "reason": "no river"}`, Spent: provider.Usage{CostUSD: 0.1}}
		}
		return SubagentReply{ID: c.ID, Answer: `{"verdict": "pass", "reason": "the Seine"}`, Spent: provider.Usage{CostUSD: 0.1}}
	}
	mk := func() Options {
		return Options{Question: "q", Agents: verifyTeam(nil, nil), Subagent: sub,
			Orchestrator: config.Orchestrator{Verifiers: v, FinalAnswerStrategy: config.StrategyWinnerReuse}}
	}
	_, local := runLocal(mk())
	x, got, driven := driveCoordinator(t, mk())
	if got.Winner != "a2" || !slices.Equal(verdictsOf(driven), verdictsOf(local)) {
		t.Errorf("driven: winner %s verdicts %v; Run's verdicts %v", got.Winner, verdictsOf(driven), verdictsOf(local))
	}
	vs := ofType[event.AnswerVerified](driven)
	if len(vs) != 2 || vs[0].SubagentID != "verifier_1_agent1_1" {
		t.Errorf("verdicts %+v", vs)
	}
	spentOnce(t, got, driven, 2)
	if r := replica(mk(), x.Ops()); r.cost != x.s.cost {
		t.Errorf("replica's cost %v, coordinator's %v", r.cost, x.s.cost)
	}
}
