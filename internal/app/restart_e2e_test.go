package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/usage"
	"massgen/internal/view"
)

// MassGen's restart example configs validate as they are.
func TestRestartConfigs_Validate(t *testing.T) {
	for _, name := range []string{"restart_test_controlled.yaml", "restart_test_controlled_filesystem.yaml"} {
		cfg, rep := config.Load(filepath.Join("testdata", name))
		if !rep.OK() || len(rep.Warnings) > 0 {
			t.Fatalf("%s: %s", name, rep.Text())
		}
		if cfg.Orchestrator.MaxOrchestrationRestarts != 2 || cfg.Orchestrator.DebugFinalAnswer == "" {
			t.Errorf("%s: restarts %d, debug answer %q", name, cfg.Orchestrator.MaxOrchestrationRestarts, cfg.Orchestrator.DebugFinalAnswer)
		}
	}
}

// restartingModel plays a team member of MassGen's restart test on the real wire: it answers
// with the first member only until its prompt carries a restart's feedback, and, evaluating,
// restarts on an answer without McCartney and submits otherwise.
func restartingModel(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
	raw, _ := json.Marshal(body)
	text := string(raw)
	if slices.Contains(offered, "restart_orchestration") {
		_, evaluated, _ := strings.Cut(text, "FINAL ANSWER TO EVALUATE")
		evaluated, _, _ = strings.Cut(evaluated, "END OF FINAL ANSWER TO EVALUATE")
		if strings.Contains(evaluated, "McCartney") {
			return move{tool: "submit", args: `{"confirmed":true}`}
		}
		return move{tool: "restart_orchestration", args: `{"reason":"Paul McCartney is missing","instructions":"Describe both members: birth year, role, contributions"}`}
	}
	if strings.Contains(text, "PREVIOUS ATTEMPT FEEDBACK") {
		answer = "John Lennon (1940), rhythm guitar; Paul McCartney (1942), bass; they wrote most songs together."
	}
	return decide(answer, offered, enum, answered, body)
}

// MassGen's restart_test_controlled.yaml on the OpenAI Responses API (the real SDK against a
// local fake): attempt 1's evaluation reads debug_final_answer and restarts, attempt 2's agents
// read the feedback and its evaluation submits. The log keeps each attempt in attempt_<k>/ and
// the final answer in the turn's final/; status.json, the views and the cost cover both.
func TestE2E_RestartControlled(t *testing.T) {
	srv := newFake(t, nil, openaiResponsesAs("John Lennon (1940), rhythm guitar.", restartingModel))
	cfg, rep := config.Load(filepath.Join("testdata", "restart_test_controlled.yaml"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	env := map[string]string{"OPENAI_API_KEY": keys["OPENAI_API_KEY"], "OPENAI_BASE_URL": srv.URL + "/v1"}
	var plain, auto bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Describe John Lennon and Paul McCartney.", Logging: true, LogRoot: t.TempDir(),
		Getenv: func(k string) string { return env[k] }, Sinks: []event.Sink{view.NewPlain(&plain), view.NewAutomation(&auto)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.FinalAnswer, "McCartney") {
		t.Fatalf("result %+v\n%s", res.Result, plain.String())
	}
	for _, want := range []string{"post-evaluation by agent", "debug_final_answer in place of the final answer",
		"ORCHESTRATION RESTART (attempt 2/3)", "reason: Paul McCartney is missing", "submit: the final answer of attempt 2 stands", "attempt 2/3"} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("plain output lacks %q:\n%s", want, plain.String())
		}
	}
	if !strings.Contains(auto.String(), "RESTART: Attempt 2/3\n") {
		t.Errorf("automation output lacks the restart line:\n%s", auto.String())
	}

	// The layout: attempt_1 and attempt_2 with their snapshots and final answers, the turn's
	// final/ holding attempt 2's; no attempt 3.
	w := res.Winner
	for _, rel := range []string{"attempt_2/final/" + w + "/answer.txt", "final/" + w + "/answer.txt", "events.jsonl", "status.json"} {
		if _, err := os.Stat(filepath.Join(res.Dir, rel)); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	for _, attempt := range []string{"attempt_1", "attempt_2"} {
		if m, _ := filepath.Glob(filepath.Join(res.Dir, attempt, "*", "*", "answer.txt")); len(m) == 0 {
			t.Errorf("%s has no answer snapshot", attempt)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "attempt_3")); err == nil {
		t.Error("attempt_3 exists")
	}
	if b, _ := os.ReadFile(filepath.Join(res.Dir, "final", w, "answer.txt")); string(b) != res.FinalAnswer {
		t.Errorf("final/%s/answer.txt is %q, want the final answer", w, b)
	}
	first, _ := filepath.Glob(filepath.Join(res.Dir, "attempt_1", "final", "*", "answer.txt"))
	if len(first) != 1 {
		t.Fatalf("attempt_1/final holds %v", first)
	}
	if b, _ := os.ReadFile(first[0]); strings.Contains(string(b), "McCartney") || len(b) == 0 {
		t.Errorf("attempt_1's final answer is %q", b)
	}
	if turn, _ := filepath.Glob(filepath.Join(res.Dir, "final", "*")); len(turn) != 1 {
		t.Errorf("the turn's final/ holds %v, want the last attempt's presenter only", turn)
	}

	var status struct {
		Coordination struct {
			Attempt        int `json:"attempt"`
			MaxAttempts    int `json:"max_attempts"`
			Restarts       []struct{ Attempt int }
			PostEvaluation struct {
				Attempt  int    `json:"attempt"`
				Decision string `json:"decision"`
			} `json:"post_evaluation"`
		} `json:"coordination"`
		Usage struct {
			Input int64 `json:"input_tokens"`
		} `json:"usage"`
	}
	readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
	c := status.Coordination
	if c.Attempt != 2 || c.MaxAttempts != 3 || len(c.Restarts) != 1 || c.PostEvaluation.Decision != "submit" || c.PostEvaluation.Attempt != 2 {
		t.Errorf("status.json coordination %+v", c)
	}
	// Every request of both attempts counts: those billed, and those coordination cut off
	// (estimated), priced by the table.
	billed := int64(srv.billed.Load())
	if res.Usage.InputTokens < billed*usageIn || status.Usage.Input != res.Usage.InputTokens ||
		!near(res.CostUSD, usage.Cost("openai", "gpt-5-nano", res.Usage)) || res.CostUSD == 0 {
		t.Errorf("usage %+v (status %d), cost %v; the server billed %d requests", res.Usage, status.Usage.Input, res.CostUSD, billed)
	}
}

// A scripted team whose evaluator never decides: the answer stands after the check, one
// attempt, no attempt_2 folder, and the log says why.
func TestE2E_RestartIgnored(t *testing.T) {
	yaml := "agents:\n  - id: solo\n    backend: {type: scripted, answers: [Paris.], post_evaluation: [ignore]}\n" +
		"orchestrator:\n  coordination: {max_orchestration_restarts: 3}\n"
	cfg, rep := config.Parse("c.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var plain bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Capital of France?", Logging: true, LogRoot: t.TempDir(), Sinks: []event.Sink{view.NewPlain(&plain)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.FinalAnswer != "Paris." {
		t.Fatalf("result %+v\n%s", res.Result, plain.String())
	}
	if !strings.Contains(plain.String(), "post-evaluation: no decision (the evaluation called neither submit nor restart_orchestration)") {
		t.Errorf("plain output:\n%s", plain.String())
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "attempt_1", "final", "solo", "answer.txt")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "attempt_2")); err == nil {
		t.Error("attempt_2 exists")
	}
}
