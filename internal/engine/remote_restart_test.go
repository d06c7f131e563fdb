package engine

import (
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// A driven session runs orchestration restarts as Run does: the post-evaluation on a
// replica, each restart an op the next attempt's replicas rebuild (fresh labels, the
// feedback in every agent's first message), the decisions published once by the coordinator,
// and every attempt's spending in the cost.
func TestCoordinator_RestartsAsRun(t *testing.T) {
	price := func(_, _ string, u provider.Usage) float64 { return float64(u.InputTokens+u.OutputTokens) / 1e6 }
	tests := []struct {
		name         string
		restarts     int
		decisions    []string
		strategy     string
		skip         bool
		budget       float64 // max_cost_usd
		wantAttempts int
	}{
		{name: "restart then submit", restarts: 2, decisions: []string{"restart", "submit"}, strategy: config.StrategyWinnerReuse, wantAttempts: 2},
		{name: "the last attempt is not evaluated", restarts: 1, decisions: []string{"restart"}, strategy: config.StrategyWinnerReuse, wantAttempts: 2},
		{name: "a presenter that ignores the check", restarts: 2, decisions: []string{"ignore"}, strategy: config.StrategyWinnerReuse, wantAttempts: 1},
		{name: "a wrong restart fixed", restarts: 2, decisions: []string{"bad_restart", "restart", "submit"}, strategy: config.StrategyWinnerReuse, wantAttempts: 2},
		{name: "presented by the winner", restarts: 2, decisions: []string{"restart", "submit"}, strategy: config.StrategyWinnerPresent, wantAttempts: 2},
		{name: "no coordination rounds", restarts: 1, decisions: []string{"restart"}, strategy: config.StrategyWinnerPresent, skip: true, wantAttempts: 2},
		{name: "max_cost_usd spent by the first answer", restarts: 2, decisions: []string{"restart"}, strategy: config.StrategyWinnerReuse, budget: 1e-9, wantAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mk := func() Options {
				return Options{Question: "Who founded the Beatles?", Agents: restartTeam(tt.decisions...), Price: price,
					Orchestrator: config.Orchestrator{MaxOrchestrationRestarts: tt.restarts, FinalAnswerStrategy: tt.strategy,
						SkipCoordinationRounds: tt.skip, MaxCostUSD: tt.budget}}
			}
			lo := mk()
			var localLog []event.Event
			lo.Bus = event.NewBus(nil)
			lo.Bus.Subscribe(event.SinkFunc(func(e event.Event) { localLog = append(localLog, e) }))
			local := Run(t.Context(), lo)
			res, log := drive(t, mk(), nil)
			if res.ExitCode != 0 || res.Winner != local.Winner || res.FinalAnswer != local.FinalAnswer {
				t.Fatalf("driven: exit %d winner %q answer %q (%v); Run: exit %d winner %q answer %q",
					res.ExitCode, res.Winner, res.FinalAnswer, res.Err, local.ExitCode, local.Winner, local.FinalAnswer)
			}
			for _, typ := range []string{"post_evaluation_started", "final_submitted", "orchestration_restarted", "final_answer", "coordination_ended", "session_ended"} {
				if got, want := count(log, typ), count(localLog, typ); got != want {
					t.Errorf("%d %s events, Run has %d", got, typ, want)
				}
			}
			if n := count(log, "orchestration_restarted"); n != tt.wantAttempts-1 {
				t.Fatalf("%d restarts, want %d", n, tt.wantAttempts-1)
			}
			if subs := ofType[event.AnswerSubmittedFinal](log); tt.budget > 0 && (len(subs) != 1 || !strings.Contains(subs[0].Why, "max_cost_usd")) {
				t.Errorf("accepted %+v, want the answer accepted unchecked, naming max_cost_usd", subs)
			}
			if got, want := evaluations(log), evaluations(localLog); got != want {
				t.Errorf("%d post-evaluation calls, Run makes %d", got, want)
			}
			for k, r := range ofType[event.OrchestrationRestarted](log) {
				l := ofType[event.OrchestrationRestarted](localLog)[k]
				if r != l {
					t.Errorf("restart %d: %+v, Run's %+v", k, r, l)
				}
			}
			// The restarted attempt runs on replicas rebuilt from the ops: fresh labels, and the
			// feedback opening every agent's first message.
			after := false
			fresh, answered := map[string]bool{}, map[string]bool{}
			for _, e := range log {
				switch p := e.Payload.(type) {
				case event.OrchestrationRestarted:
					after = true
				case event.ModelCalled:
					if after && p.Fresh && p.Stage == provider.StageInitial && !fresh[p.Agent] {
						fresh[p.Agent] = true
						if m := p.Messages[0].Content; !strings.HasPrefix(m, "<PREVIOUS ATTEMPT FEEDBACK>") || !strings.Contains(m, "McCartney is missing") {
							t.Errorf("%s's first message in the restarted attempt:\n%s", p.Agent, m)
						}
					}
				case event.AnswerSubmitted:
					if after && !answered[p.Agent] && !strings.HasSuffix(p.Label, ".1") {
						t.Errorf("the restarted attempt's first answer of %s is %s, want a .1 label", p.Agent, p.Label)
					}
					answered[p.Agent] = after
				}
			}
			if tt.wantAttempts > 1 && !tt.skip && len(fresh) < 2 {
				t.Errorf("no agent began the restarted attempt afresh: %v", fresh)
			}
			// Every attempt's calls are paid for once.
			var sum float64
			for _, u := range ofType[event.UsageReported](log) {
				sum += u.CostUSD
			}
			if res.CostUSD == 0 || !near(res.CostUSD, sum) {
				t.Errorf("session cost %v, its calls reported %v", res.CostUSD, sum)
			}
		})
	}
}

func evaluations(log []event.Event) int {
	n := 0
	for _, m := range ofType[event.ModelCalled](log) {
		if m.Stage == provider.StagePostEvaluation {
			n++
		}
	}
	return n
}
