package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
)

// restartTeam is two scripted agents: each answers attempt after attempt with its next
// answer; agent1 answers first (agent2 is slower), both vote for it, and it evaluates with
// decisions.
func restartTeam(decisions ...string) []Agent {
	return agents(
		scripted.New(config.Script{Answers: []string{"Lennon, 1940, rhythm guitar.", "Lennon (1940) and McCartney (1942), both songwriters and singers."},
			Vote: "self", ImproveAfter: 3, PostEvaluation: decisions, RestartReason: "McCartney is missing", RestartInstructions: "Describe both members"}, "m"),
		scripted.New(config.Script{Answers: []string{"Lennon.", "Lennon and McCartney."}, Vote: "agent1", ImproveAfter: 3,
			Latency: 20 * time.Millisecond}, "m"),
	)
}

func TestRestart_AttemptsAndDecisions(t *testing.T) {
	tests := []struct {
		name         string
		restarts     int
		decisions    []string
		wantAttempts int
		wantAuto     string // why the last answer was accepted without a decision, "" when decided
		wantEvals    int    // post-evaluation model calls
		wantFinal    string
	}{
		{name: "restart once then submit", restarts: 2, decisions: []string{"restart", "submit"}, wantAttempts: 2, wantEvals: 2,
			wantFinal: "Lennon (1940) and McCartney (1942), both songwriters and singers."},
		{name: "the cap: the last attempt is not evaluated", restarts: 1, decisions: []string{"restart"}, wantAttempts: 2, wantEvals: 1,
			wantFinal: "Lennon (1940) and McCartney (1942), both songwriters and singers."},
		{name: "a model that ignores the evaluation: the answer stands", restarts: 2, decisions: []string{"ignore"}, wantAttempts: 1, wantEvals: 1,
			wantAuto: "called neither submit nor restart_orchestration", wantFinal: "Lennon, 1940, rhythm guitar."},
		{name: "a wrong restart is refused once, then the answer stands", restarts: 2, decisions: []string{"bad_restart"}, wantAttempts: 1, wantEvals: 2,
			wantAuto: "wrongly twice", wantFinal: "Lennon, 1940, rhythm guitar."},
		{name: "a wrong restart fixed after its refusal", restarts: 2, decisions: []string{"bad_restart", "restart", "submit"}, wantAttempts: 2, wantEvals: 3,
			wantFinal: "Lennon (1940) and McCartney (1942), both songwriters and singers."},
		{name: "no restarts: no evaluation", restarts: 0, decisions: []string{"restart"}, wantAttempts: 1, wantEvals: 0,
			wantFinal: "Lennon, 1940, rhythm guitar."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, evs := run(t, t.Context(), Options{Agents: restartTeam(tt.decisions...),
				Orchestrator: config.Orchestrator{MaxOrchestrationRestarts: tt.restarts, FinalAnswerStrategy: config.StrategyWinnerReuse}})
			if res.ExitCode != 0 || res.FinalAnswer != tt.wantFinal {
				t.Fatalf("result %+v, want the final answer %q", res, tt.wantFinal)
			}
			restarts := ofType[event.OrchestrationRestarted](evs)
			if len(restarts) != tt.wantAttempts-1 {
				t.Fatalf("%d restarts, want %d", len(restarts), tt.wantAttempts-1)
			}
			for k, r := range restarts {
				if r.Attempt != k+2 || r.MaxAttempts != tt.restarts+1 || r.Reason != "McCartney is missing" || r.Instructions != "Describe both members" ||
					r.PreviousAnswer == "" || r.Agent != "a1" {
					t.Errorf("restart %d: %+v", k, r)
				}
			}
			evals := 0
			for _, e := range evs {
				if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Stage == provider.StagePostEvaluation {
					evals++
				}
			}
			if evals != tt.wantEvals {
				t.Errorf("%d post-evaluation calls, want %d", evals, tt.wantEvals)
			}
			subs := ofType[event.AnswerSubmittedFinal](evs)
			switch {
			case tt.wantEvals == 0 || tt.wantAttempts == tt.restarts+1 && tt.decisions[len(tt.decisions)-1] == "restart":
				if len(subs) != 0 {
					t.Errorf("the last attempt was evaluated: %+v", subs)
				}
			case len(subs) != 1 || subs[0].Auto != (tt.wantAuto != "") || !strings.Contains(subs[0].Why, tt.wantAuto) || subs[0].Attempt != tt.wantAttempts:
				t.Errorf("submitted: %+v, want auto %q in attempt %d", subs, tt.wantAuto, tt.wantAttempts)
			}
			// Every attempt coordinated and presented: one final answer each.
			if n := len(ofType[event.FinalAnswer](evs)); n != tt.wantAttempts {
				t.Errorf("%d final answers, want one per attempt (%d)", n, tt.wantAttempts)
			}
		})
	}
}

// A restarted attempt starts every agent anew with the restart's feedback first, and its
// coordination is its own: labels and versions start over.
func TestRestart_AgentsReadTheFeedback(t *testing.T) {
	team := restartTeam("restart", "submit")
	res, evs := run(t, t.Context(), Options{Agents: team,
		Orchestrator: config.Orchestrator{MaxOrchestrationRestarts: 1}})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	var after bool
	firsts := map[string]string{}
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.OrchestrationRestarted:
			after = true
		case event.ModelCalled:
			if _, seen := firsts[p.Agent]; after && !seen && p.Fresh {
				firsts[p.Agent] = p.Messages[0].Content
			}
		case event.AnswerSubmitted:
			if after && p.Version == 1 && !strings.HasSuffix(p.Label, ".1") {
				t.Errorf("the restarted attempt's first answer is %s, want a .1 label", p.Label)
			}
		}
	}
	if len(firsts) != 2 {
		t.Fatalf("%d fresh conversations after the restart, want one per agent", len(firsts))
	}
	for _, m := range firsts {
		if !strings.HasPrefix(m, "<PREVIOUS ATTEMPT FEEDBACK>") || !strings.Contains(m, "McCartney is missing") ||
			!strings.Contains(m, "Describe both members") || !strings.Contains(m, "This is attempt 2 of 2") {
			t.Errorf("first message of the restarted attempt:\n%s", m)
		}
	}
}

// Every attempt's calls count in the session's cost, and max_cost_usd covers them all: once
// spent, the answer is not evaluated (no restart can be paid for).
func TestRestart_CostCoversEveryAttempt(t *testing.T) {
	price := func(_, _ string, u provider.Usage) float64 { return float64(u.InputTokens+u.OutputTokens) / 1e6 }
	res, evs := run(t, t.Context(), Options{Agents: restartTeam("restart", "submit"), Price: price,
		Orchestrator: config.Orchestrator{MaxOrchestrationRestarts: 2}})
	var sum float64
	for _, u := range ofType[event.UsageReported](evs) {
		sum += u.CostUSD
	}
	if res.CostUSD == 0 || !near(res.CostUSD, sum) {
		t.Fatalf("session cost %v, reported %v", res.CostUSD, sum)
	}
	first := 0.0
	for _, e := range evs {
		if _, ok := e.Payload.(event.OrchestrationRestarted); ok {
			break
		}
		if u, ok := e.Payload.(event.UsageReported); ok {
			first += u.CostUSD
		}
	}
	// A budget the first attempt spends: no evaluation, no second attempt.
	res, evs = run(t, t.Context(), Options{Agents: restartTeam("restart", "submit"), Price: price,
		Orchestrator: config.Orchestrator{MaxOrchestrationRestarts: 2, MaxCostUSD: first / 2}})
	if n := len(ofType[event.OrchestrationRestarted](evs)); n != 0 || res.FinalAnswer == "" {
		t.Fatalf("%d restarts over budget, result %+v", n, res)
	}
	subs := ofType[event.AnswerSubmittedFinal](evs)
	if len(subs) != 1 || !subs[0].Auto || !strings.Contains(subs[0].Why, "max_cost_usd") {
		t.Fatalf("submitted %+v, want an automatic accept naming max_cost_usd", subs)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// debug_final_answer replaces what the first evaluation reads, and only the first.
func TestRestart_DebugFinalAnswer(t *testing.T) {
	rec := &fake{next: func(n int, req provider.Request) step {
		if req.Stage == provider.StagePostEvaluation {
			return step{calls: []provider.ToolCall{{ID: "s", Name: coord.ToolSubmit, Arguments: `{"confirmed":true}`}}}
		}
		return answerThenVote("Paris.", "agent1").next(n, req)
	}}
	res, evs := run(t, t.Context(), Options{Agents: agents(rec),
		Orchestrator: config.Orchestrator{MaxOrchestrationRestarts: 1, DebugFinalAnswer: "London."}})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	started := ofType[event.PostEvaluationStarted](evs)
	if len(started) != 1 || !started[0].Debug {
		t.Fatalf("post-evaluation started: %+v", started)
	}
	i := slices.IndexFunc(rec.requests(), func(r provider.Request) bool { return r.Stage == provider.StagePostEvaluation })
	if i < 0 || !strings.Contains(rec.requests()[i].Messages[0].Content, "London.") || strings.Contains(rec.requests()[i].Messages[0].Content, "FINAL: Paris.") {
		t.Fatalf("the evaluation did not read the debug answer: %+v", rec.requests())
	}
}

// A session killed at any point of a restarted turn resumes in the attempt its log was in:
// an attempt already restarted is not evaluated again from the first, the restarted
// attempt's agents read the feedback, the cost spent before the kill counts, and the turn ends
// in attempt 2 with one restart in all. The resumed team is a new process's: its scripted
// evaluator restarts only if the log has no restart yet (and its agents, which remember
// nothing, may answer attempt 2 with their first answers).
func TestResume_AcrossAttempts(t *testing.T) {
	price := func(_, _ string, u provider.Usage) float64 { return float64(u.InputTokens+u.OutputTokens) / 1e6 }
	orch := config.Orchestrator{MaxOrchestrationRestarts: 2, FinalAnswerStrategy: config.StrategyWinnerReuse}
	whole, evs := run(t, t.Context(), Options{Agents: restartTeam("restart", "submit"), Orchestrator: orch, Price: price})
	if whole.ExitCode != 0 || len(ofType[event.OrchestrationRestarted](evs)) != 1 {
		t.Fatalf("whole run: %+v", whole)
	}
	for cut := 1; cut < len(evs); cut++ {
		if testing.Short() && cut%5 != 0 {
			continue
		}
		before := evs[:cut]
		restarted := len(ofType[event.OrchestrationRestarted](before)) > 0
		decisions := []string{"restart", "submit"}
		if restarted {
			decisions = decisions[1:]
		}
		var spent float64
		for _, u := range ofType[event.UsageReported](before) {
			spent += u.CostUSD
		}
		rec := &recorder{}
		bus := event.NewBus(nil)
		bus.ResumeAt(int64(cut))
		bus.Subscribe(rec)
		res := Run(t.Context(), Options{Agents: restartTeam(decisions...), Orchestrator: orch, Bus: bus, Price: price,
			Question: "What is the capital of France?", RetryDelay: func(int) time.Duration { return 0 },
			Restore: &Restore{Events: before, Previous: "killed"}})
		at := fmt.Sprintf("cut after event %d (%s)", cut, before[cut-1].Payload.Type())
		got := rec.all()
		all := append(slices.Clone(before), got...)
		finals := ofType[event.FinalAnswer](all)
		if res.ExitCode != 0 || res.FinalAnswer == "" || finals[len(finals)-1].Content != res.FinalAnswer {
			t.Fatalf("%s: %+v, want the last final answer", at, res)
		}
		if n := len(ofType[event.OrchestrationRestarted](all)); n != 1 {
			t.Fatalf("%s: %d restarts in all, want 1", at, n)
		}
		subs := ofType[event.AnswerSubmittedFinal](all)
		if len(subs) != 1 || subs[0].Attempt != 2 || subs[0].Auto {
			t.Fatalf("%s: submitted %+v, want attempt 2's submit", at, subs)
		}
		if res.CostUSD < spent {
			t.Fatalf("%s: cost %v, less than the %v spent before the kill", at, res.CostUSD, spent)
		}
		if restarted {
			for _, e := range got {
				if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Fresh && mc.Stage == provider.StageInitial &&
					!strings.HasPrefix(mc.Messages[0].Content, "<PREVIOUS ATTEMPT FEEDBACK>") {
					t.Fatalf("%s: %s's conversation in attempt 2 does not open with the feedback:\n%s", at, mc.Agent, mc.Messages[0].Content)
				}
			}
		}
	}
}
