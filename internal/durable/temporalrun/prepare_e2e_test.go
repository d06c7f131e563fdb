package temporalrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// The steps before coordination (planning mode's check, orchestrator.dspy's paraphrases,
// persona_generator's personas) run on a worker; the workflow applies what they decided,
// and every turn's replica acts on it.

// plainSessions runs an in-process worker on queue against the dev server, and returns
// app.Options.Remote for sessions there.
func plainSessions(t *testing.T, queue string) func(context.Context, *config.Config, engine.Options) engine.Result {
	t.Helper()
	target := durable.Target{Address: devServer(t), Queue: queue}
	c := dialTarget(t, target)
	inProcessWorker(t, c, target)
	return remoteOn(c, target)
}

// prepareEvents are the steps' decisions in a log, and the usage of their calls.
func prepareEvents(t *testing.T, evs []event.Event) (plan []event.PlanningDecided, para []event.QuestionParaphrased, pers []event.PersonasGenerated, used provider.Usage) {
	t.Helper()
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.PlanningDecided:
			plan = append(plan, p)
		case event.QuestionParaphrased:
			para = append(para, p)
		case event.PersonasGenerated:
			pers = append(pers, p)
		case event.UsageReported:
			if p.Round == 0 && !p.Presentation {
				used = used.Add(p.Usage)
			}
		}
	}
	return plan, para, pers, used
}

// TestSession_StepsBeforeCoordinationAsLocally: a team with planning mode, paraphrases and
// personas decides on Temporal what it decides locally, logs each decision once, pays for
// the steps' calls once, and its agents read their personas and paraphrases.
func TestSession_StepsBeforeCoordinationAsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	onTemporal := plainSessions(t, "prepare-test")
	cfg := loadTeam(t, `
agents:
  - id: a
    backend: {type: scripted, model: s, answers: ["Paris."], vote: agent2}
  - id: b
    backend: {type: scripted, model: s, answers: ["Paris, on the Seine."], vote: agent2}
orchestrator:
  final_presentation: verbatim
  dspy: {enabled: true, num_variants: 2, cache_enabled: false}
  coordination:
    enable_planning_mode: true
    persona_generator: {enabled: true, diversity_mode: methodology}
`)
	local := runLogged(t, cfg, t.TempDir(), nil)
	remote := runLogged(t, cfg, t.TempDir(), onTemporal)
	if remote.Winner != local.Winner || remote.FinalAnswer != local.FinalAnswer {
		t.Errorf("Temporal: %s %q; local: %s %q", remote.Winner, remote.FinalAnswer, local.Winner, local.FinalAnswer)
	}
	lp, lq, lg, lu := prepareEvents(t, readLog(t, local.Dir))
	rlog := readLog(t, remote.Dir)
	rp, rq, rg, ru := prepareEvents(t, rlog)
	if len(rp) != 1 || len(rq) != 1 || len(rg) != 1 {
		t.Fatalf("the log holds %d planning decisions, %d paraphrases, %d personas; want one each", len(rp), len(rq), len(rg))
	}
	for what, d := range map[string]string{"planning": cmp.Diff(lp, rp), "paraphrases": cmp.Diff(lq, rq), "personas": cmp.Diff(lg, rg)} {
		if d != "" {
			t.Errorf("the %s differ from the local run's (-local +Temporal):\n%s", what, d)
		}
	}
	if ru.InputTokens == 0 || ru != lu {
		t.Errorf("the steps' calls used %+v on Temporal, %+v locally", ru, lu)
	}
	// Each agent's first coordination call carries its persona and its paraphrase.
	for i, id := range []string{"a", "b"} {
		for _, e := range rlog {
			m, ok := e.Payload.(event.ModelCalled)
			if !ok || m.Agent != id || m.Stage != provider.StageInitial {
				continue
			}
			if !strings.Contains(m.System, rg[0].Personas[i].Text) {
				t.Errorf("%s's system prompt lacks its persona", id)
			}
			if v := rq[0].Variants[i].Text; v == "" || !strings.Contains(m.Messages[0].Content, v) {
				t.Errorf("%s's question lacks its paraphrase %q", id, v)
			}
			break
		}
	}
}

// TestSession_PlanningModeHoldsBackOnTheWorker: the check runs on the worker that holds the
// session, where the MCP tools are; the tool it names is held back in every coordination turn
// there, as locally.
func TestSession_PlanningModeHoldsBackOnTheWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	server := everythingServer(t)
	target, c, root := heldSessions(t, "prepare-held-test", &Activities{TrustSessions: true})
	tag := fmt.Sprintf("MASSGEN_TEST_TAG_%d_prepare", os.Getpid())
	cfg := loadTeam(t, fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      planning: "IRREVERSIBLE: YES\nBLOCKED_TOOLS: echo"
      mcp_servers:
        - {name: everything, command: %q, env: {%s: "1"}}
      tool_calls:
        - {name: mcp__everything__echo, args: {message: "post it"}}
      answers: ["I would post it with echo."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, latency: 300ms, answers: ["Short."], vote: agent1}
orchestrator:
  final_presentation: verbatim
  coordination: {enable_planning_mode: true}
`, server, tag))
	res := runLogged(t, cfg, filepath.Join(root, "logs"), remoteOn(c, target))
	if res.Winner != "builder" {
		t.Errorf("winner %q", res.Winner)
	}
	evs := readLog(t, res.Dir)
	plan, _, _, _ := prepareEvents(t, evs)
	if len(plan) != 1 || plan[0].Agent != "builder" || !cmp.Equal(plan[0].Held, []string{"mcp__everything__echo"}) {
		t.Fatalf("planning decisions %+v, want the builder's holding mcp__everything__echo back", plan)
	}
	var held, ran int
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok && r.Tool == "mcp__everything__echo" {
			if r.IsError && strings.Contains(r.Content, "held back until the final presentation") {
				held++
			} else {
				ran++
			}
		}
	}
	if held == 0 || ran != 0 {
		t.Errorf("echo held back %d times and ran %d times in coordination, want held and never run", held, ran)
	}
}

// TestSession_PersonasPersistAcrossTurns: persona_generator.persist_across_turns keeps the
// first turn's personas in the second, on Temporal as locally: no persona call is made.
func TestSession_PersonasPersistAcrossTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	onTemporal := plainSessions(t, "personas-test")
	cfg := loadTeam(t, `
agents:
  - id: a
    backend: {type: scripted, model: s, answers: ["Paris."], vote: agent1}
  - id: b
    backend: {type: scripted, model: s, answers: ["Paris, on the Seine."], vote: agent1}
orchestrator:
  final_presentation: verbatim
  coordination:
    persona_generator: {enabled: true, persist_across_turns: true}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logs := t.TempDir()
	first, err := app.Run(ctx, cfg, app.Options{Question: "One.", Logging: true, LogRoot: logs, Remote: onTemporal})
	if err != nil || first.ExitCode != 0 {
		t.Fatalf("turn 1: %+v, %v", first.Result, err)
	}
	second, err := app.Run(ctx, cfg, app.Options{Question: "Two.", Logging: true, LogRoot: logs, Session: first.Session, Turn: 2, Remote: onTemporal,
		History: []provider.Message{{Role: provider.RoleUser, Content: "One."}, {Role: provider.RoleAssistant, Content: first.FinalAnswer}}})
	if err != nil || second.ExitCode != 0 {
		t.Fatalf("turn 2: %+v, %v", second.Result, err)
	}
	_, _, one, _ := prepareEvents(t, readLog(t, first.Dir))
	log2 := readLog(t, second.Dir)
	_, _, two, _ := prepareEvents(t, log2)
	if len(one) != 1 || len(two) != 1 || two[0].FromTurn != 1 || !cmp.Equal(one[0].Personas, two[0].Personas) {
		t.Fatalf("turn 1 personas %+v; turn 2 %+v, want turn 1's kept (from_turn 1)", one, two)
	}
	for _, e := range log2 {
		if m, ok := e.Payload.(event.ModelCalled); ok && m.Stage == provider.StagePersona {
			t.Error("turn 2 made a persona call")
		}
	}
}

// TestSession_VerifiersAsLocally: each verifier's check is a call on a worker; the leader's
// failed check passes the win to the next answer, as locally, and every check is logged and
// paid once.
func TestSession_VerifiersAsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	onTemporal := plainSessions(t, "verify-test")
	cfg := loadTeam(t, `
agents:
  - id: a1
    backend: {type: scripted, model: s, answers: ["Paris, of course."], vote: agent1}
  - id: a2
    backend: {type: scripted, model: s, answers: ["The capital is Paris."], vote: agent1}
  - id: a3
    backend: {type: scripted, model: s, answers: ["Lyon."], vote: agent2, verdicts: [fail, pass]}
orchestrator:
  final_answer_strategy: winner_reuse
  verifiers: [{aspect: correctness, agent: a3}]
`)
	local := runLogged(t, cfg, t.TempDir(), nil)
	remote := runLogged(t, cfg, t.TempDir(), onTemporal)
	if remote.Winner != "a2" || remote.Winner != local.Winner || remote.FinalAnswer != local.FinalAnswer {
		t.Fatalf("Temporal: %s %q (%v); local: %s %q", remote.Winner, remote.FinalAnswer, remote.Err, local.Winner, local.FinalAnswer)
	}
	verdicts := func(evs []event.Event) (out []string, calls, paid int) {
		for _, e := range evs {
			switch p := e.Payload.(type) {
			case event.AnswerVerified:
				out = append(out, p.AnswerLabel+":"+p.Verdict)
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
		return out, calls, paid
	}
	lv, _, _ := verdicts(readLog(t, local.Dir))
	rv, calls, paid := verdicts(readLog(t, remote.Dir))
	if !cmp.Equal(rv, lv) || len(rv) != 2 {
		t.Errorf("verdicts on Temporal %v, locally %v", rv, lv)
	}
	if calls != 2 || paid != 2 {
		t.Errorf("%d checks and %d of their usage reports logged, want 2 each", calls, paid)
	}
}
