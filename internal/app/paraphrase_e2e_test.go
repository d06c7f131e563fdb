package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// paraphraseModel plays orchestrator.dspy's writer over the Chat Completions wire: rewordings
// for the writing call, verdicts for the check (refusing the paraphrase numbered refuse), and
// nothing at all when empty is set.
type paraphraseModel struct {
	refuse atomic.Int32
	empty  atomic.Bool
}

// rewrites are the writer's variants of q.
func rewrites(q string) []string {
	return []string{"Could you tell me: " + q, "Here is what I would like to know: " + q, "Please answer the following: " + q}
}

var quotedQuestion = regexp.MustCompile(`(?s)<<<\n(.*?)\n>>>`)

func (pm *paraphraseModel) play(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
	raw, _ := json.Marshal(body["messages"])
	switch {
	case pm.empty.Load():
		return move{text: ""}
	case bytes.Contains(raw, []byte("different rewrites")):
		var msgs []map[string]any
		_ = json.Unmarshal(raw, &msgs)
		m := quotedQuestion.FindStringSubmatch(fmt.Sprint(msgs[len(msgs)-1]["content"]))
		b, _ := json.Marshal(map[string]any{"paraphrases": rewrites(m[1])})
		return move{text: "```json\n" + string(b) + "\n```"}
	case bytes.Contains(raw, []byte("verdicts")):
		var v []string
		for k := range strings.Count(string(raw), "Paraphrase ") {
			v = append(v, fmt.Sprintf(`{"index": %d, "equivalent": %v, "confidence": 0.93}`, k+1, int32(k+1) != pm.refuse.Load()))
		}
		return move{text: `{"verdicts": [` + strings.Join(v, ", ") + `]}`}
	}
	return decide(answer, offered, enum, answered, body)
}

const dspyKey = "sk-test-5f3a9c0e7b2d41aa90"

func paraphraseTeam(t *testing.T, dspy string) *config.Config {
	t.Helper()
	doc := `agents:
  - {id: a, backend: {type: scripted, answers: ["Paris."]}}
  - {id: b, backend: {type: scripted, answers: ["It is Paris."]}}
  - {id: c, backend: {type: scripted, answers: ["The capital of France is Paris."]}}
orchestrator:
  dspy:
` + dspy
	cfg, rep := config.Parse("team.yaml", []byte(doc))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return cfg
}

// runParaphrased runs one turn and returns its events.
func runParaphrased(t *testing.T, cfg *config.Config, question, root string) (Result, []event.Event) {
	t.Helper()
	var rec recorder
	res, err := Run(t.Context(), cfg, Options{Question: question, Logging: true, LogRoot: filepath.Join(root, "logs"),
		ParaphraseCache: filepath.Join(root, "cache"), Getenv: func(string) string { return "" }, Sinks: []event.Sink{&rec}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %v", res.ExitCode, res.Err)
	}
	return res, rec.all()
}

func paraphrased(t *testing.T, evs []event.Event) event.QuestionParaphrased {
	t.Helper()
	for _, e := range evs {
		if p, ok := e.Payload.(event.QuestionParaphrased); ok {
			return p
		}
	}
	t.Fatal("no question_paraphrased event")
	return event.QuestionParaphrased{}
}

// firstPrompts is each agent's first coordination message.
func firstPrompts(evs []event.Event) map[string]string {
	out := map[string]string{}
	for _, e := range evs {
		if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Stage == provider.StageInitial && out[mc.Agent] == "" && len(mc.Messages) > 0 {
			out[mc.Agent] = mc.Messages[0].Content
		}
	}
	return out
}

func stageCalls(evs []event.Event, stages ...provider.Stage) int {
	n := 0
	for _, e := range evs {
		if mc, ok := e.Payload.(event.ModelCalled); ok {
			for _, s := range stages {
				if mc.Stage == s {
					n++
				}
			}
		}
	}
	return n
}

// The writer is a real API model behind the OpenAI SDK: each agent reads its own checked
// variant after the original, the calls are counted in the session's usage, a second run of
// the same question takes the variants from the cache without a call, a variant the check
// refuses leaves its agent with the original, and a writer that returns nothing leaves every
// agent with the original. The answer and the votes are still about the original question.
func TestParaphrase_E2E_ChatCompletionsWriter(t *testing.T) {
	pm := &paraphraseModel{}
	srv := newFake(t, nil, chatCompletionsAs("", pm.play))
	cfg := paraphraseTeam(t, fmt.Sprintf("    enabled: true\n    num_variants: 3\n    backend: {type: chatcompletion, model: dspy-writer, base_url: %s/v1, api_key: %s}\n", srv.URL, dspyKey))
	root := t.TempDir()
	const question = "What is the capital of France?"

	res, evs := runParaphrased(t, cfg, question, root)
	p := paraphrased(t, evs)
	if p.Cached || p.Warning != "" || p.Model != "chatcompletion/dspy-writer" || srv.requests.Load() != 2 {
		t.Fatalf("first run: %+v after %d requests, want 2 calls and no warning", p, srv.requests.Load())
	}
	prompts := firstPrompts(evs)
	for i, id := range []string{"a", "b", "c"} {
		want := "<PARAPHRASED MESSAGE>\n" + rewrites(question)[i] + "\n<END OF PARAPHRASED MESSAGE>"
		if !strings.Contains(prompts[id], want) || !strings.Contains(prompts[id], "<ORIGINAL MESSAGE>\n"+question) {
			t.Errorf("agent %s's first prompt lacks the original or its variant %q:\n%s", id, rewrites(question)[i], prompts[id])
		}
	}
	var writerIn int64
	for _, e := range evs {
		if u, ok := e.Payload.(event.UsageReported); ok && u.Agent == "a" && u.Usage.InputTokens == usageIn {
			writerIn += u.Usage.InputTokens
		}
	}
	if writerIn != 2*usageIn || res.Usage.InputTokens < 2*usageIn {
		t.Errorf("the writer's usage counted %d input tokens (session %d), want %d", writerIn, res.Usage.InputTokens, 2*usageIn)
	}
	if !strings.Contains(res.FinalAnswer, "Paris") {
		t.Errorf("final answer %q", res.FinalAnswer)
	}

	// Same question, same settings and model: no call at all.
	_, evs = runParaphrased(t, cfg, question, root)
	if p := paraphrased(t, evs); !p.Cached || p.Variants[1].Text != rewrites(question)[1] || srv.requests.Load() != 2 {
		t.Errorf("second run: %+v after %d requests, want a cache hit and no request", p, srv.requests.Load())
	}
	if n := stageCalls(evs, provider.StageParaphrase, provider.StageParaphraseCheck); n != 0 {
		t.Errorf("second run made %d paraphrase calls", n)
	}

	// The check refuses the second variant: agent b reads the original alone.
	pm.refuse.Store(2)
	_, evs = runParaphrased(t, cfg, "Which river flows through Paris?", root)
	p = paraphrased(t, evs)
	if !p.Variants[1].Fallback || p.Variants[1].Why == "" || p.Variants[0].Fallback || !strings.Contains(p.Warning, "2 of 3") {
		t.Errorf("refused check: %+v", p)
	}
	if pr := firstPrompts(evs)["b"]; strings.Contains(pr, "PARAPHRASED") {
		t.Errorf("agent b got a paraphrase the check refused:\n%s", pr)
	}

	// A writer that returns nothing: everyone reads the original; the run goes on.
	pm.empty.Store(true)
	res, evs = runParaphrased(t, cfg, "How many people live in Paris?", root)
	p = paraphrased(t, evs)
	for _, v := range p.Variants {
		if !v.Fallback {
			t.Errorf("empty writer: %s got %q", v.Agent, v.Text)
		}
	}
	if !strings.Contains(p.Warning, "empty reply") {
		t.Errorf("empty writer: warning %q, want it to say the reply was empty", p.Warning)
	}
	for id, pr := range firstPrompts(evs) {
		if strings.Contains(pr, "PARAPHRASED") {
			t.Errorf("agent %s got a paraphrase from an empty writer", id)
		}
	}
	eachFile(t, root, func(path string, b []byte) {
		if bytes.Contains(b, []byte(dspyKey)) {
			t.Errorf("%s holds the writer's api_key", path)
		}
	})
}

// Offline, the first agent's scripted model writes the variants: the agents read different
// ones, and a second run takes them from the cache.
func TestParaphrase_E2E_Scripted(t *testing.T) {
	cfg := paraphraseTeam(t, "    enabled: true\n    num_variants: 2\n")
	root := t.TempDir()
	_, evs := runParaphrased(t, cfg, "What is the capital of France?", root)
	p := paraphrased(t, evs)
	prompts := firstPrompts(evs)
	if p.Variants[0].Text == "" || p.Variants[1].Text == "" || p.Variants[0].Text == p.Variants[1].Text || p.Variants[2].Text != p.Variants[0].Text {
		t.Fatalf("variants %+v: want two different ones, agent3 reading agent1's (slot 3 mod 2)", p.Variants)
	}
	for i, id := range []string{"a", "b", "c"} {
		if !strings.Contains(prompts[id], p.Variants[i].Text) {
			t.Errorf("agent %s's prompt lacks %q", id, p.Variants[i].Text)
		}
	}
	if n := stageCalls(evs, provider.StageParaphrase, provider.StageParaphraseCheck); n != 2 {
		t.Errorf("%d paraphrase calls, want 2 (write, check)", n)
	}
	_, evs = runParaphrased(t, cfg, "What is the capital of France?", root)
	if n := stageCalls(evs, provider.StageParaphrase, provider.StageParaphraseCheck); n != 0 || !paraphrased(t, evs).Cached {
		t.Errorf("second run made %d paraphrase calls, want a cache hit", n)
	}
}
