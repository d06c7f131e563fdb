package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
	"massgen/internal/tool"
)

// The steps before coordination taken on a replica (RunPrepare) decide what Run's decide,
// and the turns' replicas, rebuilt from the coordinator's ops, act on it.

func TestCoordinator_PlanningModeAsRun(t *testing.T) {
	rec := &recordingTool{}
	model := planner("IRREVERSIBLE: YES\nBLOCKED_TOOLS: post", nil)
	a := agents(model)
	a[0].Tools = tool.Set{rec.tool("mcp__chat__post"), rec.tool("mcp__chat__read")}
	o := Options{Question: "Announce the release.", Agents: a, Orchestrator: config.Orchestrator{PlanningMode: true}}
	res, log := drive(t, o, nil)
	if res.ExitCode != 0 || res.FinalAnswer != "Posted the announcement." {
		t.Fatalf("result %+v", res)
	}
	d := ofType[event.PlanningDecided](log)
	if len(d) != 1 || !d[0].HoldBack || !cmp.Equal(d[0].Held, []string{"mcp__chat__post"}) {
		t.Fatalf("decisions %+v, want one holding mcp__chat__post back", d)
	}
	// The turn's replica held the post back; the presentation's ran it.
	if want := []string{"mcp__chat__read", "mcp__chat__post"}; !cmp.Equal(rec.runs, want) {
		t.Errorf("runs %v, want %v", rec.runs, want)
	}
	var refused int
	for _, r := range ofType[event.ToolResult](log) {
		if r.IsError && strings.Contains(r.Content, "held back until the final presentation") {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refusals of the held tool in coordination, want 1", refused)
	}
	var checked, paid bool
	for _, m := range ofType[event.ModelCalled](log) {
		checked = checked || m.Stage == provider.StagePlanning
	}
	for _, u := range ofType[event.UsageReported](log) {
		paid = paid || u.Round == 0 && !u.Presentation
	}
	if !checked || !paid {
		t.Errorf("the planning check's call in the log: %v, its usage: %v", checked, paid)
	}
}

func TestCoordinator_PersonasAndParaphrasesAsRun(t *testing.T) {
	mk := func() Options {
		sa := func(answer string) provider.Provider {
			return scripted.New(config.Script{Answers: []string{answer}}, "m")
		}
		return Options{Question: "What is the capital of France?", Agents: agents(sa("Paris."), sa("Paris, France."), sa("It is Paris.")),
			Orchestrator: config.Orchestrator{PersonaGenerator: config.PersonaGenerator{Enabled: true, DiversityMode: "methodology"},
				DSPy: config.DefaultDSPy()}}
	}
	lo := mk()
	lo.Orchestrator.DSPy.Enabled = true
	_, local := run(t, t.Context(), lo)
	o := mk()
	o.Orchestrator.DSPy.Enabled = true
	res, log := drive(t, o, nil)
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, typ := range []string{"personas_generated", "question_paraphrased"} {
		if n := count(log, typ); n != 1 {
			t.Fatalf("%d %s events, want 1", n, typ)
		}
	}
	if got, want := ofType[event.PersonasGenerated](log), ofType[event.PersonasGenerated](local); !cmp.Equal(got, want) {
		t.Errorf("personas differ from Run's:\n%s", cmp.Diff(want, got))
	}
	if got, want := ofType[event.QuestionParaphrased](log), ofType[event.QuestionParaphrased](local); !cmp.Equal(got, want) {
		t.Errorf("paraphrases differ from Run's:\n%s", cmp.Diff(want, got))
	}
	// Each agent's coordination calls carry its persona and its variant.
	pg, qp := ofType[event.PersonasGenerated](log)[0], ofType[event.QuestionParaphrased](log)[0]
	for i, a := range o.Agents {
		var first *event.ModelCalled
		for _, m := range ofType[event.ModelCalled](log) {
			if m.Agent == a.ID && m.Stage != provider.StagePersona && m.Stage != provider.StageParaphrase && m.Stage != provider.StageParaphraseCheck {
				first = &m
				break
			}
		}
		if first == nil {
			t.Fatalf("%s made no coordination call", a.ID)
		}
		if !strings.Contains(first.System, pg.Personas[i].Text) {
			t.Errorf("%s's system prompt lacks its persona %q", a.ID, pg.Personas[i].Text)
		}
		if v := qp.Variants[i].Text; v == "" || !strings.Contains(first.Messages[0].Content, v) {
			t.Errorf("%s's question lacks its variant %q", a.ID, v)
		}
	}
}

func TestCoordinator_PrepareFailedFallsBackAsAFailedCall(t *testing.T) {
	sa := func() provider.Provider { return scripted.New(config.Script{Answers: []string{"Paris."}}, "m") }
	orch := config.Orchestrator{PlanningMode: true, PersonaGenerator: config.PersonaGenerator{Enabled: true}, DSPy: config.DefaultDSPy()}
	orch.DSPy.Enabled = true
	x := NewCoordinator(Options{Question: "q", Agents: agents(sa(), sa()), Orchestrator: orch})
	x.Start()
	if !x.NeedsPrepare() {
		t.Fatal("a session with planning, personas and paraphrases needs no preparation")
	}
	p := x.PrepareFailed("no worker took the step")
	x.Prepare(p)
	if x.NeedsPrepare() {
		t.Error("prepared twice")
	}
	if p.Planning == nil || !p.Planning.HoldBack || p.Planning.Held != nil {
		t.Errorf("planning %+v, want every MCP tool held back", p.Planning)
	}
	if p.Personas == nil || len(p.Personas.Personas) != 2 || !p.Personas.Personas[0].Fallback || !strings.Contains(p.Personas.Warning, "no worker") {
		t.Errorf("personas %+v, want built-in ones with the reason", p.Personas)
	}
	if p.Paraphrase == nil || len(p.Paraphrase.Variants) != 2 || !p.Paraphrase.Variants[1].Fallback || !strings.Contains(p.Paraphrase.Warning, "no worker") {
		t.Errorf("paraphrases %+v, want the original question with the reason", p.Paraphrase)
	}
	// A replica rebuilt from the ops holds what was decided.
	s := replica(x.s.o, x.Ops())
	if !s.heldBack("mcp__x__y") || len(s.personas) != 2 || s.personas[0] == "" {
		t.Errorf("the replica holds plan %+v, personas %q", s.plan, s.personas)
	}
}

// Decomposition mode driven as on Temporal: the subtasks are assigned on a replica (the
// decomposer's call for agents without one), stops are applied by the coordinator, and the
// presenter integrates every part.
func TestCoordinator_DecompositionAsRun(t *testing.T) {
	for _, decomposer := range []bool{false, true} {
		t.Run(fmt.Sprintf("decomposer %v", decomposer), func(t *testing.T) {
			mk := func() Options {
				a := partsTeam(-1)
				if decomposer {
					for i := range a {
						a[i].Subtask = ""
					}
				}
				return Options{Question: "Build the site.", Agents: a, Orchestrator: decompose}
			}
			local, llog := run(t, t.Context(), mk())
			res, log := drive(t, mk(), nil)
			if res.ExitCode != 0 || res.Winner != local.Winner || res.EndReason != event.EndAllStopped {
				t.Fatalf("driven %+v; Run %+v", res, local)
			}
			for _, part := range []string{"Frontend: the page layout.", "Backend: the API, with tests.", "Docs: how to run it."} {
				if !strings.Contains(res.FinalAnswer, part) {
					t.Errorf("the final answer lacks %q:\n%s", part, res.FinalAnswer)
				}
			}
			if got, want := ofType[event.SubtasksAssigned](log), ofType[event.SubtasksAssigned](llog); len(got) != 1 || !cmp.Equal(got, want) {
				t.Errorf("subtasks differ from Run's:\n%s", cmp.Diff(want, got))
			}
			stops := map[string]int{}
			for _, st := range ofType[event.AgentStopped](log) {
				stops[st.Agent+"/"+fmt.Sprint(st.Version)]++
			}
			for k, n := range stops {
				if n != 1 {
					t.Errorf("stop %s published %d times", k, n)
				}
			}
			if len(stops) < 3 {
				t.Errorf("stops %v, want each agent's", stops)
			}
			parts := ofType[event.PartsIntegrated](log)
			if len(parts) != 1 || len(parts[0].Unfinished()) != 0 {
				t.Errorf("parts %+v", parts)
			}
		})
	}
}

// Verifiers driven as on Temporal: each check is a call on a replica; the coordinator keeps
// the verdicts and moves the win as Run does.
func TestCoordinator_VerifiersAsRun(t *testing.T) {
	mk := func() Options {
		return Options{Question: "What is the capital of France?", Agents: verifyTeam([]string{"fail", "pass"}, nil),
			Orchestrator: config.Orchestrator{Verifiers: []config.Verifier{{Aspect: config.AspectCorrectness, Agent: "a3"}},
				FinalAnswerStrategy: config.StrategyWinnerReuse}}
	}
	local, llog := run(t, t.Context(), mk())
	res, log := drive(t, mk(), nil)
	if res.ExitCode != 0 || res.Winner != "a2" || res.Winner != local.Winner {
		t.Fatalf("driven %+v; Run %+v", res, local)
	}
	if got, want := verdictsOf(log), verdictsOf(llog); !cmp.Equal(got, want) {
		t.Errorf("verdicts %v, Run's %v", got, want)
	}
	calls, paid := 0, 0
	for _, e := range log {
		switch p := e.Payload.(type) {
		case event.ModelCalled:
			if p.Stage == provider.StageVerify {
				calls++
			}
		case event.UsageReported:
			if p.Agent == "a3" && p.Round == 0 && !p.Presentation {
				paid++
			}
		}
	}
	if calls != 2 || paid != 2 {
		t.Errorf("%d verify calls and %d of their usage reports in the log, want 2 each", calls, paid)
	}
}

// Broadcast to the agents driven as on Temporal: the asker's replica makes the side calls
// with the others' models on their conversations as the driver holds them; each side call
// is billed to the agent that made it, and what it answered reaches that agent's next turn.
func TestCoordinator_BroadcastAsRun(t *testing.T) {
	mk := func() Options {
		ask := []config.ScriptedToolCall{{Name: "ask_others", Args: map[string]any{"question": "Paris or Lyon?"}}}
		return Options{Question: "Capital of France?", Agents: agents(
			scripted.New(config.Script{Answers: []string{"Paris, as both agreed."}, ToolCalls: ask, BroadcastReply: "Paris."}, "m"),
			scripted.New(config.Script{Answers: []string{"Paris."}, BroadcastReply: "Paris, the capital."}, "m"),
			scripted.New(config.Script{Answers: []string{"Paris!"}, BroadcastReply: "Not Lyon.", ToolCalls: ask}, "m")),
			Orchestrator: broadcastOn(config.BroadcastAgents)}
	}
	local, llog := run(t, t.Context(), mk())
	res, log := drive(t, mk(), nil)
	if res.ExitCode != 0 || local.ExitCode != 0 {
		t.Fatalf("driven %+v; Run %+v", res, local)
	}
	answered := func(log []event.Event) []string {
		var out []string
		for _, a := range ofType[event.BroadcastAnswered](log) {
			out = append(out, a.Responder+": "+a.Content)
		}
		slices.Sort(out)
		return out
	}
	if got, want := answered(log), answered(llog); len(got) != 4 || !cmp.Equal(got, want) {
		t.Errorf("answers %v, Run's %v", got, want)
	}
	if d := ofType[event.BroadcastDone](log); len(d) != 2 || d[0].Status != event.BroadcastComplete {
		t.Errorf("broadcast_done %+v", d)
	}
	// Each replica numbers its own questions: the ids stay apart in the session.
	ids := map[string]bool{}
	for _, a := range ofType[event.BroadcastAsked](log) {
		ids[a.ID] = true
	}
	if len(ids) != 2 {
		t.Errorf("question ids %v, want two distinct", ids)
	}
	// Each side call's usage is its agent's: one report more than its own model calls.
	calls, usages := map[string]int{}, map[string]int{}
	for _, e := range log {
		switch p := e.Payload.(type) {
		case event.ModelCalled:
			calls[p.Agent]++
		case event.UsageReported:
			usages[p.Agent]++
		}
	}
	for id, side := range map[string]int{"a1": 1, "a2": 2, "a3": 1} {
		if usages[id] != calls[id]+side {
			t.Errorf("%s: %d usage reports for %d model calls, want %d more (its side calls)", id, usages[id], calls[id], side)
		}
	}
	// The session's totals count every call once, the side calls included.
	var logged provider.Usage
	for _, u := range ofType[event.UsageReported](log) {
		logged = logged.Add(u.Usage)
	}
	if logged.InputTokens != res.Usage.InputTokens || logged.OutputTokens != res.Usage.OutputTokens {
		t.Errorf("the session counted %+v, its calls reported %+v", res.Usage, logged)
	}
	// What a2's side call answered reached a2's next turn.
	var told bool
	for _, m := range ofType[event.ModelCalled](log) {
		for _, msg := range m.Messages {
			told = told || m.Agent == "a2" && m.Stage != provider.StageBroadcast && strings.Contains(msg.Content, "Paris, the capital.")
		}
	}
	if !told {
		t.Error("a2 was never told what its side call answered")
	}
}
