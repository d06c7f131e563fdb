package app

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
	"massgen/internal/runlog"
	"massgen/internal/usage"
)

// Two scripted agents that do not improve on their own (improve_after: 3) and whose first
// checklists must fail (voting_threshold 0: every criterion must score 9, and short answers
// score 8): each writes its second answer after a checklist, and its next checklist, forced
// to vote (no answers left), scores the criteria that emerged meanwhile.
const bootstrapTeam = `
agents:
  - id: a
    backend: {type: scripted, answers: ["The answer is 41.", "The answer is 42: 6 times 7."], checklist_correct: "42", improve_after: 3%s}
  - id: b
    backend: {type: scripted, answers: ["It is 40.", "It is 42, checked: 6 times 7."], checklist_correct: "42", improve_after: 3%s}
orchestrator:
  voting_sensitivity: checklist_gated
  voting_threshold: 0
  max_new_answers_per_agent: 2
  coordination:
    criteria_mode: %s
    bootstrap_max_per_agent_per_round: 2
`

func runBootstrap(t *testing.T, yaml string) (Result, *collect) {
	t.Helper()
	sink := &collect{}
	res, err := Run(t.Context(), mustParse(t, yaml), Options{Question: "What is 6 times 7?", Logging: true, LogRoot: t.TempDir(),
		WorkspaceRoot: t.TempDir(), Sinks: []event.Sink{sink}})
	if err != nil || res.ExitCode != 0 || res.FinalAnswer == "" {
		t.Fatalf("run: %v, exit %d, %v, final %q", err, res.ExitCode, res.Err, res.FinalAnswer)
	}
	return res, sink
}

func (c *collect) payloads(kind string) []event.Payload {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []event.Payload
	for _, e := range c.evs {
		if e.Payload.Type() == kind {
			out = append(out, e.Payload)
		}
	}
	return out
}

// scoredIDs are the criteria a checklist scored for its first answer.
func scoredIDs(p event.Payload) []string {
	ck := p.(event.ChecklistSubmitted)
	var ids []string
	if len(ck.Scores) > 0 {
		for _, it := range ck.Scores[0].Items {
			ids = append(ids, it.ID)
		}
	}
	return ids
}

func accumulator(t *testing.T, dir string) []event.Criterion {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, runlog.CriteriaFile))
	if err != nil {
		t.Fatal(err)
	}
	var list []event.Criterion
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return list
}

// bootstrap_inline: the agents propose a criterion with their first checklists; it is added
// once (the second proposal is the same text), saved in the turn's folder, told to the agents
// at their next round and scored there.
func TestE2E_BootstrapInlineScripted(t *testing.T) {
	res, sink := runBootstrap(t, fmt.Sprintf(bootstrapTeam, "", "", "bootstrap_inline"))
	var added []event.Criterion
	for _, p := range sink.payloads("criteria_emerged") {
		ce := p.(event.CriteriaEmerged)
		if ce.Source != event.CriteriaInline || ce.Warning != "" {
			t.Errorf("criteria_emerged = %+v", ce)
		}
		added = append(added, ce.Added...)
	}
	if len(added) != 1 || added[0].ID != "E5" || added[0].Text != scripted.ProposedCriterion {
		t.Fatalf("added %+v, want E5 once", added)
	}
	if got := accumulator(t, res.Dir); len(got) != 1 || got[0].ID != "E5" {
		t.Errorf("%s = %+v", runlog.CriteriaFile, got)
	}
	cks := sink.payloads("checklist_submitted")
	// A checklist made after E5 joined scores it; which one comes last depends on the agents'
	// timing (one whose call was already made scores the defaults).
	if !slices.ContainsFunc(cks, func(p event.Payload) bool {
		return slices.Equal(scoredIDs(p), []string{"E1", "E2", "E3", "E4", "E5"})
	}) {
		t.Errorf("no checklist scored E1-E5: %v", scoredIDs(cks[len(cks)-1]))
	}
	// The checklist that proposed E5 scored only the defaults; another agent's first checklist
	// may already score E5, when its call was made after E5 joined.
	fewest := scoredIDs(cks[0])
	for _, ck := range cks[1:] {
		if ids := scoredIDs(ck); len(ids) < len(fewest) {
			fewest = ids
		}
	}
	if len(fewest) != 4 {
		t.Errorf("no checklist scored only the 4 defaults (the proposer's first): fewest %v", fewest)
	}
	told := false
	for _, p := range sink.payloads("model_called") {
		for _, m := range p.(event.ModelCalled).Messages {
			told = told || strings.Contains(m.Content, "New evaluation criteria joined the checklist") && strings.Contains(m.Content, scripted.ProposedCriterion)
		}
	}
	if !told {
		t.Error("no agent was told the new criterion")
	}
}

// bootstrap_subagent: a critic subagent (its own session and log folder) writes criteria
// after the first answers; they are scored from the agents' next rounds.
func TestE2E_BootstrapSubagentScripted(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	res, sink := runBootstrap(t, fmt.Sprintf(bootstrapTeam, "", "", "bootstrap_subagent"))
	evs := sink.payloads("criteria_emerged")
	if len(evs) == 0 {
		t.Fatal("no criteria_emerged")
	}
	first := evs[0].(event.CriteriaEmerged)
	if first.Source != event.CriteriaSubagent || first.Warning != "" || len(first.Added) != 2 ||
		first.Added[0].Text != scripted.DefaultCriteria[0] || first.SubagentID == "" {
		t.Fatalf("criteria_emerged = %+v", first)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "subagents", first.SubagentID, "turn_1", "events.jsonl")); err != nil {
		t.Errorf("the critic's log: %v", err)
	}
	if got := accumulator(t, res.Dir); len(got) < 2 {
		t.Errorf("%s = %+v", runlog.CriteriaFile, got)
	}
	cks := sink.payloads("checklist_submitted")
	if last := scoredIDs(cks[len(cks)-1]); !slices.Contains(last, "E6") {
		t.Errorf("the last checklist scored %v, want E5 and E6 among them", last)
	}
	// Each answer set is critiqued once however many agents begin a round on it.
	seen := map[int]bool{}
	for _, p := range evs {
		ce := p.(event.CriteriaEmerged)
		if seen[ce.Version] {
			t.Errorf("version %d critiqued twice", ce.Version)
		}
		seen[ce.Version] = true
	}
}

// A critic whose team answers prose instead of JSON adds nothing: the event says so and
// which criteria stay, and the session ends normally on them.
func TestE2E_BootstrapSubagentGarbage(t *testing.T) {
	garbage := `, criteria_reply: "These answers look fine to me."`
	_, sink := runBootstrap(t, fmt.Sprintf(bootstrapTeam, garbage, garbage, "bootstrap_subagent"))
	evs := sink.payloads("criteria_emerged")
	if len(evs) == 0 {
		t.Fatal("no criteria_emerged")
	}
	for _, p := range evs {
		ce := p.(event.CriteriaEmerged)
		if len(ce.Added) != 0 || !strings.Contains(ce.Warning, "could not be read") || !strings.Contains(ce.Warning, "keeps the default criteria") {
			t.Errorf("criteria_emerged = %+v", ce)
		}
	}
	for _, p := range sink.payloads("checklist_submitted") {
		if ids := scoredIDs(p); len(ids) > 4 {
			t.Errorf("a checklist scored %v", ids)
		}
	}
}

// The orchestrator-managed round evaluator: before each round after the agent's first
// answer, a round_evaluator subagent reviews the answers; its report opens that round.
func TestE2E_RoundEvaluatorScripted(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	res, sink := runBootstrap(t, `
agents:
  - id: solo
    backend: {type: scripted, answers: ["The answer is 41.", "The answer is 42: 6 times 7."], checklist_correct: "42"}
orchestrator:
  voting_sensitivity: checklist_gated
  max_new_answers_per_agent: 2
  coordination:
    enable_subagents: true
    subagent_types: [round_evaluator]
    round_evaluator_before_checklist: true
    orchestrator_managed_round_evaluator: true
    round_evaluator_transformation_pressure: gentle
`)
	evs := sink.payloads("round_evaluated")
	if len(evs) != 2 {
		t.Fatalf("%d round_evaluated events, want one per answer set (2)", len(evs))
	}
	for k, p := range evs {
		re := p.(event.RoundEvaluated)
		if re.Version != k+1 || re.Warning != "" || !strings.Contains(re.Report, "criterion_findings") {
			t.Errorf("round_evaluated %d = %+v", k, re)
		}
		if _, err := os.Stat(filepath.Join(res.Dir, "subagents", re.SubagentID, "turn_1", "events.jsonl")); err != nil {
			t.Errorf("the evaluator's log: %v", err)
		}
	}
	read := 0
	for _, p := range sink.payloads("model_called") {
		for _, m := range p.(event.ModelCalled).Messages {
			if strings.Contains(m.Content, "<round_evaluator_report>") {
				read++
			}
		}
	}
	if read != 2 {
		t.Errorf("the agent read %d reports, want 2", read)
	}
	// The evaluator's team was asked with the gentle pressure, and the agent was not offered
	// round_evaluator itself: the orchestrator reserves it.
	for _, p := range sink.payloads("subagent_started") {
		if s := p.(event.SubagentStarted); !strings.Contains(s.Task, "Transformation pressure: gentle") {
			t.Errorf("task = %.300s", s.Task)
		}
	}
	for _, p := range sink.payloads("model_called") {
		if mc := p.(event.ModelCalled); mc.Agent == "solo" && strings.Contains(mc.System, `"round_evaluator"`) {
			t.Error("round_evaluator offered to the agent")
		}
	}
}

// kill -9 after the critic wrote its criteria: the resumed session keeps them and does not
// ask the critic again about the same answers.
func TestE2E_BootstrapSubagentResume(t *testing.T) {
	res, _ := runBootstrap(t, fmt.Sprintf(bootstrapTeam, "", "", "bootstrap_subagent"))
	path := filepath.Join(res.Dir, "events.jsonl")
	cut := linesUntil(t, path, `"type":"criteria_emerged"`)
	if err := os.WriteFile(path, []byte(cut), 0o600); err != nil {
		t.Fatal(err)
	}
	it, err := runlog.ReadInterrupted(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var before event.CriteriaEmerged
	for _, e := range it.Events {
		if ce, ok := e.Payload.(event.CriteriaEmerged); ok {
			before = ce
		}
	}
	replayed := len(it.Events)
	sink := &collect{}
	cfg := mustParse(t, fmt.Sprintf(bootstrapTeam, "", "", "bootstrap_subagent"))
	res2, err := Run(t.Context(), cfg, Options{Question: "What is 6 times 7?", Logging: true, LogRoot: filepath.Dir(filepath.Dir(res.Dir)),
		WorkspaceRoot: t.TempDir(), Sinks: []event.Sink{sink}, Resume: it})
	if err != nil || res2.ExitCode != 0 {
		t.Fatalf("resume: %v, exit %d, %v", err, res2.ExitCode, res2.Err)
	}
	// The sink is shown the log's events again first (the views replay them); what the
	// resumed session did comes after.
	sink.mu.Lock()
	after := slices.Clone(sink.evs[replayed:])
	sink.mu.Unlock()
	for _, e := range after {
		switch p := e.Payload.(type) {
		case event.CriteriaEmerged:
			if p.Version == before.Version {
				t.Errorf("version %d critiqued again after resume", p.Version)
			}
		case event.SubagentStarted:
			if strings.HasPrefix(p.ID, fmt.Sprintf("criteria_critic_v%d", before.Version)) {
				t.Errorf("critic %s started again", p.ID)
			}
		}
	}
	cks := sink.payloads("checklist_submitted")
	if len(cks) == 0 || !slices.Contains(scoredIDs(cks[len(cks)-1]), before.Added[0].ID) {
		t.Errorf("after resume the checklists do not score %s", before.Added[0].ID)
	}
}

// linesUntil returns the lines of path up to and including the first that contains marker.
func linesUntil(t *testing.T, path, marker string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), marker) {
			return b.String()
		}
	}
	t.Fatalf("%s has no %s", path, marker)
	return ""
}

// gatedPlayer plays a checklist_gated agent on the wire: it answers, scores every answer 9 on
// every criterion its submit_checklist schema lists, and votes for the answer the verdict
// ranks best. Asked as a round evaluator (its profile in the instructions), it answers report.
func gatedPlayer(report string, readReport *atomic.Bool) player {
	return func(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
		raw, _ := json.Marshal(body)
		text := string(raw)
		if strings.Contains(text, "You are a round evaluator subagent") {
			return decide(report, offered, enum, answered, body)
		}
		if strings.Contains(text, "round_evaluator_report") {
			readReport.Store(true)
		}
		if !slices.Contains(offered, "submit_checklist") || !(answered || strings.Contains(text, "Your own current answer is the one labelled")) {
			return decide(answer, offered, enum, answered, body)
		}
		items := list(body["input"])
		if last := obj(items[len(items)-1]); last["type"] == "function_call_output" {
			var cv struct {
				Status string `json:"status"`
				Best   string `json:"best_agent"`
			}
			if json.Unmarshal([]byte(fmt.Sprint(last["output"])), &cv) == nil && cv.Status == "accepted" {
				return move{tool: "vote", args: fmt.Sprintf(`{"agent_id":%q,"reason":"it checks out"}`, cv.Best)}
			}
		}
		scores := map[string]map[string]any{}
		for _, t := range list(body["tools"]) {
			if obj(t)["name"] != "submit_checklist" {
				continue
			}
			for label, ans := range obj(obj(obj(obj(t)["parameters"])["properties"])["scores"])["properties"].(map[string]any) {
				scores[label] = map[string]any{}
				for id := range obj(obj(ans)["properties"]) {
					scores[label][id] = map[string]any{"score": 9, "reasoning": "verified"}
				}
			}
		}
		b, _ := json.Marshal(map[string]any{"scores": scores, "report": strings.Repeat("Each answer was checked by redoing the computation. ", 3)})
		return move{tool: "submit_checklist", args: string(b)}
	}
}

// Through the official OpenAI SDK against the local fake of the Responses API: the round
// evaluator's team runs on the same model, its report reaches the agent's next round, and
// every call the server billed (the agent's and the evaluator's) is in the session's cost.
func TestE2E_RoundEvaluatorOpenAIWire(t *testing.T) {
	var read atomic.Bool
	fake := newFake(t, nil, openaiResponsesAs("42, because 6 times 7 is 42.", gatedPlayer("criterion_findings: show the multiplication.", &read)))
	cfg := mustParse(t, fmt.Sprintf(`
agents:
  - {id: solo, backend: {type: openai, model: gpt-5-mini, base_url: %q}}
orchestrator:
  voting_sensitivity: checklist_gated
  coordination:
    enable_subagents: true
    subagent_types: [round_evaluator]
    subagent_default_timeout: 60
    round_evaluator_before_checklist: true
    orchestrator_managed_round_evaluator: true
timeout_settings: {agent_timeout_seconds: 30}
`, fake.URL+"/v1"))
	sink := &collect{}
	res, err := Run(t.Context(), cfg, Options{Question: "What is 6 times 7?", Logging: true, LogRoot: t.TempDir(), WorkspaceRoot: t.TempDir(),
		Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-local"}), Sinks: []event.Sink{sink}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v, exit %d, %v", err, res.ExitCode, res.Err)
	}
	evs := sink.payloads("round_evaluated")
	if len(evs) != 1 || evs[0].(event.RoundEvaluated).Report != "criterion_findings: show the multiplication." {
		t.Fatalf("round_evaluated = %+v", evs)
	}
	if !read.Load() {
		t.Error("the agent's next round did not carry the report")
	}
	if len(sink.payloads("checklist_submitted")) == 0 || len(sink.payloads("vote_cast")) != 1 {
		t.Error("no checklist-gated vote")
	}
	perCall := usage.Cost("openai", "gpt-5-mini", provider.Usage{InputTokens: usageIn, OutputTokens: usageOut})
	billed := float64(fake.billed.Load())
	if want := billed * perCall; math.Abs(res.CostUSD-want) > 1e-9 || billed < 5 {
		t.Fatalf("cost %v, want %v (%v calls billed, agent and evaluator)", res.CostUSD, want, billed)
	}
}
