package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
)

// longWrong is a long, confident, wrong answer: the kind a length-biased vote picks.
var longWrong = "The answer is 11. " + strings.Repeat("Counting carefully, month by month, and cross-checking against the calendar, ", 4)

// gatedTeam is three scripted agents: a1 writes the long wrong answer and believes it, a2 the
// short correct one, a3 only judges (it votes longest when nothing gates it).
func gatedTeam(correct string) []Agent {
	mk := func(id string, s config.Script) Agent {
		return Agent{ID: id, Backend: "scripted", Model: "m", Provider: scripted.New(s, "m")}
	}
	return []Agent{
		mk("a1", config.Script{Answers: []string{longWrong}, ChecklistCorrect: "11"}),
		mk("a2", config.Script{Answers: []string{"12"}, ChecklistCorrect: correct}),
		mk("a3", config.Script{Answers: []string{"About twelve, I think: 12."}, ChecklistCorrect: correct}),
	}
}

func gated(o config.Orchestrator) config.Orchestrator {
	o.VotingSensitivity = "checklist_gated"
	o.DeferVotingUntilAllAnswered = true
	o.Checklist = config.Checklist{RequireGapReport: true, GapReportMode: "changedoc", MaxCallsPerRound: 1}
	o.FinalAnswerStrategy = config.StrategyWinnerReuse
	return o
}

func TestChecklistGated_CorrectAnswerWins(t *testing.T) {
	for _, tc := range []struct {
		name   string
		orch   config.Orchestrator
		winner string
	}{
		// Without the gate every agent votes for the longest answer: the wrong one.
		{"lenient votes longest", config.Orchestrator{DeferVotingUntilAllAnswered: true, FinalAnswerStrategy: config.StrategyWinnerReuse}, "a1"},
		// With it, a2 and a3 check the result (12) and rank a2's answer best; a1 votes for its own.
		{"checklist_gated", gated(config.Orchestrator{}), "a2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, evs := run(t, t.Context(), Options{Agents: gatedTeam("12"), Orchestrator: tc.orch})
			if res.ExitCode != 0 || res.Winner != tc.winner {
				t.Fatalf("exit %d winner %s (%v), want %s", res.ExitCode, res.Winner, res.Err, tc.winner)
			}
			if tc.orch.VotingSensitivity == "" {
				if n := len(ofType[event.ChecklistSubmitted](evs)); n != 0 {
					t.Errorf("%d checklists without the gate", n)
				}
				return
			}
			// Votes wait for every answer (defer_voting_until_all_answered), so an agent that
			// scored a partial answer set scores again: its last checklist is the one that counts.
			last := map[string]event.ChecklistSubmitted{}
			for _, ck := range ofType[event.ChecklistSubmitted](evs) {
				last[ck.Agent] = ck
			}
			for id, want := range map[string]string{"a1": "agent1", "a2": "agent2", "a3": "agent2"} {
				ck := last[id]
				if ck.Verdict != "vote" || ck.Best != want || len(ck.Scores) != 3 {
					t.Errorf("%s's last checklist: verdict %q best %q scores %d; want vote %s 3", id, ck.Verdict, ck.Best, len(ck.Scores), want)
				}
			}
			votes := ofType[event.VoteCast](evs)
			got := map[string]string{}
			for _, v := range votes {
				got[v.Agent] = v.TargetLabel
			}
			if want := map[string]string{"a1": "agent1", "a2": "agent2", "a3": "agent2"}; !mapsEqual(got, want) {
				t.Errorf("votes %v, want %v", got, want)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestChecklistGated_VoteWithoutChecklistIsRejected drives a model that votes straight away:
// the vote is refused with the same events and retries as any invalid call, and a checklist
// then lets it through.
func TestChecklistGated_VoteWithoutChecklistIsRejected(t *testing.T) {
	vote := provider.ToolCall{ID: "v", Name: "vote", Arguments: `{"agent_id": "agent1", "reason": "mine"}`}
	solo := &fake{next: func(n int, req provider.Request) step {
		switch {
		case req.Stage == provider.StagePresentation:
			return step{text: "FINAL"}
		case n == 1:
			return step{calls: []provider.ToolCall{{ID: "a", Name: "new_answer", Arguments: `{"content": "Paris"}`}}, stop: "tool_calls"}
		case n == 2:
			return step{calls: []provider.ToolCall{vote}, stop: "tool_calls"}
		case n == 3:
			if !slices.ContainsFunc(req.Tools, func(t provider.ToolSpec) bool { return t.Name == "submit_checklist" }) {
				t.Errorf("submit_checklist not offered")
			}
			args, _ := json.Marshal(map[string]any{"scores": map[string]any{"E1": 9, "E2": 9, "E3": 9, "E4": 9}})
			return step{calls: []provider.ToolCall{{ID: "c", Name: "submit_checklist", Arguments: string(args)}}, stop: "tool_calls"}
		}
		return step{calls: []provider.ToolCall{vote}, stop: "tool_calls"}
	}}
	o := gated(config.Orchestrator{})
	o.Checklist.RequireGapReport = false
	res, evs := run(t, t.Context(), Options{Agents: []Agent{{ID: "a1", Provider: solo}}, Orchestrator: o})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("result %+v", res)
	}
	rej := ofType[event.ToolRejected](evs)
	if len(rej) != 1 || rej[0].Tool != "vote" || !strings.Contains(rej[0].Error, "submit_checklist") {
		t.Fatalf("rejections %+v, want the first vote refused for want of a checklist", rej)
	}
	if cks := ofType[event.ChecklistSubmitted](evs); len(cks) != 1 || cks[0].Verdict != "vote" {
		t.Fatalf("checklists %+v", cks)
	}
}

// A resumed checklist_gated session keeps each agent's latest checklist: cut after any event
// and resumed, it ends with the whole run's winner, and no vote its checklist allowed before
// the cut is refused for want of one.
func TestChecklistGated_ResumeKeepsTheChecklists(t *testing.T) {
	orch := gated(config.Orchestrator{})
	whole, evs := run(t, t.Context(), Options{Agents: gatedTeam("12"), Orchestrator: orch})
	if whole.ExitCode != 0 || whole.Winner != "a2" {
		t.Fatalf("whole run: exit %d, winner %s", whole.ExitCode, whole.Winner)
	}
	restoredOnce := false
	for cut := 1; cut < len(evs); cut++ {
		held := map[string]bool{} // agents holding a checklist on the current answers at the cut
		version := 0
		for _, e := range evs[:cut] {
			switch p := e.Payload.(type) {
			case event.AnswerSubmitted:
				version, held = p.Version, map[string]bool{}
			case event.ChecklistSubmitted:
				held[p.Agent] = p.Version == version && p.Verdict == "vote"
			}
		}
		rec := &recorder{}
		bus := event.NewBus(nil)
		bus.ResumeAt(int64(cut))
		bus.Subscribe(rec)
		res := Run(t.Context(), Options{Agents: gatedTeam("12"), Orchestrator: orch, Bus: bus, Question: "q",
			Restore: &Restore{Events: evs[:cut], Previous: "killed"}})
		at := fmt.Sprintf("cut after event %d (%s)", cut, evs[cut-1].Payload.Type())
		if res.ExitCode != 0 || res.Winner != whole.Winner {
			t.Fatalf("%s: exit %d, winner %s (%v), want %s", at, res.ExitCode, res.Winner, res.Err, whole.Winner)
		}
		for _, r := range ofType[event.ToolRejected](rec.all()) {
			if held[r.Agent] && strings.Contains(r.Error, "needs a checklist first") {
				t.Fatalf("%s: %s's vote was refused for want of the checklist it had: %s", at, r.Agent, r.Error)
			}
		}
		for _, v := range held {
			restoredOnce = restoredOnce || v
		}
	}
	if !restoredOnce {
		t.Fatal("no cut fell where an agent held a checklist: the test checks nothing")
	}
}
