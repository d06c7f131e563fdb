package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
	"massgen/internal/view"
)

// readEvents reads a turn's events.jsonl.
func readEvents(t *testing.T, dir string) []event.Event {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func payloads[T event.Payload](evs []event.Event) []T {
	var out []T
	for _, e := range evs {
		if p, ok := e.Payload.(T); ok {
			out = append(out, p)
		}
	}
	return out
}

// Scripted agents, end to end: agent1 asks with ask_others before answering; agents 2 and 3
// answer through their side calls; agent1 reads both answers as the tool's result; the log
// records the question, the answers and their cost, and the plain view shows them.
func TestE2E_BroadcastScripted(t *testing.T) {
	cfg, rep := config.Parse("team.yaml", []byte(`
agents:
  - id: asker
    backend:
      type: scripted
      answers: ["Paris, as both agreed."]
      tool_calls: [{name: ask_others, args: {question: "Paris or Lyon?"}}]
  - id: b
    backend: {type: scripted, answers: ["Paris."], broadcast_reply: "Paris, the capital."}
  - id: c
    backend: {type: scripted, answers: ["Paris!"], broadcast_reply: "Not Lyon."}
orchestrator:
  end_when_decided: false  # every call completes, so each reports its usage
  coordination: {broadcast: agents, response_depth: high, broadcast_timeout: 30}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Capital of France?", Logging: true, LogRoot: t.TempDir(),
		Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	evs := readEvents(t, res.Dir)
	var result string
	for _, r := range payloads[event.ToolResult](evs) {
		if r.Tool == "ask_others" {
			result = r.Content
		}
	}
	var got struct {
		Status    string `json:"status"`
		Responses []struct {
			Responder string `json:"responder_id"`
			Content   string `json:"content"`
		} `json:"responses"`
	}
	if err := json.Unmarshal([]byte(result), &got); err != nil {
		t.Fatalf("ask_others result %q: %v", result, err)
	}
	var answers []string
	for _, r := range got.Responses {
		answers = append(answers, r.Responder+": "+r.Content)
	}
	slices.Sort(answers)
	if got.Status != "complete" || !slices.Equal(answers, []string{"agent2: Paris, the capital.", "agent3: Not Lyon."}) {
		t.Fatalf("ask_others result %s", result)
	}
	if d := payloads[event.BroadcastDone](evs); len(d) != 1 || d[0].Status != event.BroadcastComplete || d[0].Answers != 2 {
		t.Fatalf("broadcast_done %+v", d)
	}
	// The side calls are billed to the agents that made them: b and c report one usage more
	// than their own model calls.
	calls, usages := map[string]int{}, map[string]int{}
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ModelCalled:
			calls[p.Agent]++
		case event.UsageReported:
			usages[p.Agent]++
		}
	}
	for _, id := range []string{"b", "c"} {
		if usages[id] != calls[id]+1 {
			t.Errorf("%s: %d usage reports for %d model calls, want one more (its side call)", id, usages[id], calls[id])
		}
	}
	for _, want := range []string{"agent1 asker: asks agent2, agent3 (bc_1): Paris or Lyon?", "  agent2 b answered bc_1: Paris, the capital."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plain view lacks %q:\n%s", want, out.String())
		}
	}
}

// askedBefore reports whether a Responses request already holds an ask_others call.
func askedBefore(body map[string]any) bool {
	for _, it := range list(body["input"]) {
		if obj(it)["type"] == "function_call" && obj(it)["name"] == "ask_others" {
			return true
		}
	}
	return false
}

// The same over the official SDKs against fake servers: an OpenAI agent asks; a Claude agent
// and a Groq agent answer through side calls (requests with no tools); the usage the servers
// billed, side calls included, is what status.json says was spent.
func TestE2E_BroadcastOverProviders(t *testing.T) {
	var asked atomic.Bool // once: a later turn starts from the shared prefix, without the call
	asker := func(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
		if slices.Contains(offered, "ask_others") && !askedBefore(body) && !asked.Swap(true) {
			return move{tool: "ask_others", args: `{"question":"Is it Paris?"}`}
		}
		return decide(answer, offered, enum, answered, body)
	}
	gpt := newFake(t, nil, openaiResponsesAs("Paris is the capital of France.", asker))
	var mu sync.Mutex // the servers' handlers write, the test reads
	var sideBodies []string
	claudeSide := func(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
		if len(offered) == 0 && !strings.Contains(fmt.Sprint(body), "Coordination is over.") {
			raw, _ := json.Marshal(body)
			mu.Lock()
			sideBodies = append(sideBodies, string(raw))
			mu.Unlock()
			return move{text: "Yes: Paris."}
		}
		return decide(answer, offered, enum, answered, body)
	}
	claude := newFake(t, nil, anthropicMessagesAs("The capital is Paris.", claudeSide))
	fast := newFake(t, nil, chatCompletions("It is Paris."))
	cfg, rep := config.Parse("team.yaml", []byte(fmt.Sprintf(`
agents:
  - id: gpt
    backend: {type: openai, model: gpt-5-mini, base_url: "%s/v1"}
  - id: claude
    backend: {type: claude, model: claude-sonnet-4-5, base_url: "%s"}
  - id: fast
    backend: {type: groq, model: llama-3.3-70b-versatile, base_url: "%s/openai/v1"}
orchestrator:
  end_when_decided: false
  coordination: {broadcast: agents}
timeout_settings: {agent_timeout_seconds: 20, orchestrator_timeout_seconds: 120}
`, gpt.URL, claude.URL, fast.URL)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "What is the capital of France?", Logging: true, LogRoot: t.TempDir(),
		Getenv: func(k string) string { return keys[k] }, Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	evs := readEvents(t, res.Dir)
	answered := payloads[event.BroadcastAnswered](evs)
	byWho := map[string]string{}
	for _, a := range answered {
		byWho[a.Responder] = a.Content
	}
	if byWho["claude"] != "Yes: Paris." || byWho["fast"] != "FINAL: It is Paris." || len(answered) != 2 {
		t.Fatalf("answers %+v", answered)
	}
	// Claude's side call read its own conversation as it last sent it, then the question.
	mu.Lock()
	defer mu.Unlock()
	if len(sideBodies) != 1 || !strings.Contains(sideBodies[0], "Question from agent1:") || !strings.Contains(sideBodies[0], "Is it Paris?") {
		t.Fatalf("claude side call bodies %q", sideBodies)
	}
	// Cost: what the servers billed, side calls included, priced by the table.
	var want provider.Usage
	var wantCost float64
	for _, s := range []struct {
		f             *fakeServer
		backend, name string
	}{{gpt, "openai", "gpt-5-mini"}, {claude, "claude", "claude-sonnet-4-5"}, {fast, "groq", "llama-3.3-70b-versatile"}} {
		u := provider.Usage{InputTokens: int64(s.f.billed.Load()) * usageIn, OutputTokens: int64(s.f.billed.Load()) * usageOut}
		want = want.Add(u)
		wantCost += usage.Cost(s.backend, s.name, u)
	}
	if res.Usage.InputTokens != want.InputTokens || res.Usage.OutputTokens != want.OutputTokens || !near(res.CostUSD, wantCost) {
		t.Fatalf("usage %+v cost %v, servers billed %+v costing %v", res.Usage, res.CostUSD, want, wantCost)
	}
}
