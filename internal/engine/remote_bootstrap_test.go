package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider/scripted"
)

// runAndDrive runs a session of mk's options with Run and as a remote driver does (drive),
// and fails unless both end with the same winner and final answer.
func runAndDrive(t *testing.T, mk func() Options) (local, driven []event.Event) {
	t.Helper()
	lo := mk()
	lo.Bus = event.NewBus(nil)
	lo.Bus.Subscribe(event.SinkFunc(func(e event.Event) { local = append(local, e) }))
	want := Run(context.Background(), lo)
	got, driven := drive(t, mk(), nil)
	if got.ExitCode != 0 || got.Winner != want.Winner || got.FinalAnswer != want.FinalAnswer || got.Winner == "" {
		t.Fatalf("driven: exit %d winner %q answer %q (%v); Run: exit %d winner %q answer %q (%v)",
			got.ExitCode, got.Winner, got.FinalAnswer, got.Err, want.ExitCode, want.Winner, want.FinalAnswer, want.Err)
	}
	return local, driven
}

// lastVotes are each agent's last vote target.
func lastVotes(evs []event.Event) map[string]string {
	out := map[string]string{}
	for _, v := range ofType[event.VoteCast](evs) {
		out[v.Agent] = v.TargetLabel
	}
	return out
}

// A checklist_gated vote is held to the checklist its turn accepted: the checklists reach the
// coordinator, which otherwise refuses every vote for want of one and never ends.
func TestCoordinator_ChecklistGatedAsRun(t *testing.T) {
	mk := func() Options {
		return Options{Question: "How many months have 28 days?", Agents: gatedTeam("12"), Orchestrator: gated(config.Orchestrator{})}
	}
	local, driven := runAndDrive(t, mk)
	if got, want := lastVotes(driven), lastVotes(local); !mapsEqual(got, want) {
		t.Errorf("driven votes %v, Run's %v", got, want)
	}
	for _, rej := range ofType[event.ToolRejected](driven) {
		if rej.Tool == "vote" {
			t.Errorf("a vote was refused: %s", rej.Error)
		}
	}
}

// bootstrapOptions are bootstrap_e2e_test's team: two agents whose first checklists fail
// (voting_threshold 0), so that each answers again and scores the criteria that emerged.
func bootstrapOptions(mode string) Options {
	mk := func(id string, answers ...string) Agent {
		return Agent{ID: id, Backend: "scripted", Model: "m",
			Provider: scripted.New(config.Script{Answers: answers, ChecklistCorrect: "42", ImproveAfter: 3}, "m")}
	}
	zero, two := 0, 2
	o := config.Orchestrator{VotingSensitivity: "checklist_gated", VotingThreshold: &zero, MaxNewAnswersPerAgent: 2,
		FinalAnswerStrategy: config.StrategyWinnerReuse}
	o.Checklist = config.Checklist{CriteriaMode: mode, BootstrapMaxPerAgentPerRound: &two, MaxCallsPerRound: 1}
	return Options{Question: "What is 6 times 7?", Orchestrator: o, Agents: []Agent{
		mk("a", "The answer is 41.", "The answer is 42: 6 times 7."),
		mk("b", "It is 40.", "It is 42, checked: 6 times 7."),
	}}
}

func emergedTexts(evs []event.Event) []string {
	var out []string
	for _, ce := range ofType[event.CriteriaEmerged](evs) {
		for _, c := range ce.Added {
			out = append(out, c.ID+" "+c.Text)
		}
	}
	return out
}

func scoresCriterion(evs []event.Event, id string) bool {
	return slices.ContainsFunc(ofType[event.ChecklistSubmitted](evs), func(ck event.ChecklistSubmitted) bool {
		return len(ck.Scores) > 0 && slices.ContainsFunc(ck.Scores[0].Items, func(it event.ChecklistItem) bool { return it.ID == id })
	})
}

func toldCriteria(evs []event.Event, text string) bool {
	for _, mc := range ofType[event.ModelCalled](evs) {
		for _, m := range mc.Messages {
			if strings.Contains(m.Content, "New evaluation criteria joined the checklist") && strings.Contains(m.Content, text) {
				return true
			}
		}
	}
	return false
}

// bootstrap_inline: the criterion an agent proposes with its checklist on a replica joins
// the coordinator's checklist once (published by it, once), later turns score it, and the
// agents are told it at their next round, as in Run.
func TestCoordinator_BootstrapInlineAsRun(t *testing.T) {
	local, driven := runAndDrive(t, func() Options { return bootstrapOptions(config.CriteriaBootstrapInline) })
	want := []string{"E5 " + scripted.ProposedCriterion}
	if got := emergedTexts(driven); !slices.Equal(got, want) || !slices.Equal(emergedTexts(local), want) {
		t.Fatalf("emerged: driven %v, Run %v; want %v", got, emergedTexts(local), want)
	}
	if !scoresCriterion(driven, "E5") || !scoresCriterion(local, "E5") {
		t.Errorf("E5 scored: driven %v, Run %v", scoresCriterion(driven, "E5"), scoresCriterion(local, "E5"))
	}
	if !toldCriteria(driven, scripted.ProposedCriterion) {
		t.Error("no agent was told the new criterion")
	}
	// Told once each: the conversation carries the criteria it has read.
	for _, mc := range ofType[event.ModelCalled](driven) {
		n := 0
		for _, m := range mc.Messages {
			n += strings.Count(m.Content, "New evaluation criteria joined the checklist")
		}
		if n > 1 {
			t.Errorf("%s read the new criteria %d times", mc.Agent, n)
		}
	}
}
