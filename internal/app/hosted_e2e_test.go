package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// geminiSearching plays a Gemini model with Google Search on: no function declarations reach
// it, so it reads the tools from the system instruction, searches, and calls them through a
// tool_call block at the end of its text, the fence split across chunks.
func geminiSearching(t *testing.T, answer string) func(http.ResponseWriter, map[string]any) bool {
	return func(w http.ResponseWriter, body map[string]any) bool {
		search := false
		for _, tl := range list(body["tools"]) {
			if obj(tl)["functionDeclarations"] != nil {
				t.Errorf("function declarations sent beside Google Search: %v", tl)
			}
			if obj(tl)["googleSearch"] != nil {
				search = true
			}
		}
		if !search {
			t.Errorf("no googleSearch tool in %v", body["tools"])
		}
		var system string
		for _, p := range list(obj(body["systemInstruction"])["parts"]) {
			system += fmt.Sprint(obj(p)["text"])
		}
		var offered []string
		var enum []any
		lines := strings.Split(system, "\n")
		for i, l := range lines {
			name, ok := strings.CutPrefix(l, "- ")
			if !ok || i+1 >= len(lines) {
				continue
			}
			name, _, _ = strings.Cut(name, ":")
			schema, ok := strings.CutPrefix(lines[i+1], "  arguments: ")
			if !ok {
				continue
			}
			offered = append(offered, name)
			if name == "vote" {
				var s any
				_ = json.Unmarshal([]byte(schema), &s)
				enum = voteEnum(s)
			}
		}
		answered := false
		for _, c := range list(body["contents"]) {
			for _, p := range list(obj(c)["parts"]) {
				if s := fmt.Sprint(obj(p)["text"]); obj(c)["role"] == "model" && strings.Contains(s, "```tool_call") && strings.Contains(s, "new_answer") {
					answered = true
				}
			}
		}
		m := decide(answer, offered, enum, answered, body)
		usage := map[string]any{"promptTokenCount": usageIn, "candidatesTokenCount": usageOut, "totalTokenCount": usageIn + usageOut}
		text := func(s string) map[string]any {
			return map[string]any{"candidates": []any{map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": s}}}}}}
		}
		sse(w, "", text("Checked the web. "))
		if m.tool == "" {
			sse(w, "", text(m.text))
		} else {
			block := fmt.Sprintf("{\"name\": %q, \"arguments\": %s}\n```\n", m.tool, m.args)
			sse(w, "", text(m.text+"\n``"))
			sse(w, "", text("`tool_"))
			sse(w, "", text("call\n"+block))
		}
		sse(w, "", map[string]any{"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"groundingMetadata": map[string]any{
				"webSearchQueries": []any{"capital of France"},
				"groundingChunks":  []any{map[string]any{"web": map[string]any{"uri": "https://en.wikipedia.org/wiki/Paris", "title": "Paris - Wikipedia"}}},
			}}}, "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"})
		return true
	}
}

// TestE2E_GeminiSearchesAndCoordinatesThroughText: MassGen's showcase setting, gemini with
// enable_web_search, runs a whole session: the searches show as tool calls, and the answer and
// the vote arrive through the text protocol.
func TestE2E_GeminiSearchesAndCoordinatesThroughText(t *testing.T) {
	srv := newFake(t, nil, geminiSearching(t, "Paris is the capital of France."))
	cfg, rep := config.Parse("search.yaml", []byte(fmt.Sprintf(`
agents:
  - id: gem
    backend: {type: gemini, model: gemini-2.5-flash, base_url: %q, enable_web_search: true}
  - id: helper
    backend: {type: scripted, answers: ["Paris."], vote: agent1}
timeout_settings: {agent_timeout_seconds: 10}
orchestrator: {end_when_decided: false} # gem votes too, through the text protocol
`, srv.URL)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	res, out := runTeam(t, team{cfg: cfg}, t.TempDir())
	if res.ExitCode != 0 || res.Winner != "gem" || res.FinalAnswer != "Checked the web. FINAL: Paris is the capital of France." {
		t.Fatalf("result %+v\n%s", res.Result, out)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var searches, answers, votes int
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ToolResult:
			if p.Agent == "gem" && p.Tool == "web_search" && strings.Contains(p.Content, "Paris - Wikipedia") {
				searches++
			}
		case event.AnswerSubmitted:
			if p.Agent == "gem" && p.Content == "Paris is the capital of France." {
				answers++
			}
		case event.VoteCast:
			if p.Agent == "gem" {
				votes++
			}
		case event.ToolRejected:
			t.Errorf("rejected: %+v", p)
		}
	}
	if searches < 2 || answers != 1 || votes != 1 {
		t.Errorf("gem searched %d times, answered %d, voted %d\n%s", searches, answers, votes, out)
	}
	// Each grounded response is billed with the tokens (gemini-2.5: per grounded prompt).
	n := int64(srv.requests.Load())
	want := usage.Cost("gemini", "gemini-2.5-flash", provider.Usage{InputTokens: n * usageIn, OutputTokens: n * usageOut, WebSearches: n})
	var status struct {
		Usage struct {
			Cost float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
	if !near(status.Usage.Cost, want) || want < float64(n)*0.035 {
		t.Errorf("cost %v, want %v for %d grounded responses", status.Usage.Cost, want, n)
	}
}
