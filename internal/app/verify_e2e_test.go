package app

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/usage"
	"massgen/internal/view"
)

// verifyStatus is the part of status.json that holds the verifiers' verdicts.
type verifyStatus struct {
	Results struct {
		Decision struct {
			Winner      string `json:"winner"`
			WinnerLabel string `json:"winner_label"`
			Verified    string `json:"verified"`
			Agrees      bool   `json:"agrees"`
			Verifiers   []struct {
				Aspect      string `json:"aspect"`
				Agent       string `json:"agent"`
				AnswerLabel string `json:"answer_label"`
				Verdict     string `json:"verdict"`
				Reason      string `json:"reason"`
			} `json:"verifiers"`
		} `json:"decision"`
	} `json:"results"`
}

// A scripted team with two verifiers: correctness (by carol) fails the vote's leader, the
// next answer passes both, and wins; the plain output's why block, status.json and the log
// hold the verdicts.
func TestE2E_VerifiersScripted(t *testing.T) {
	yaml := "agents:\n" +
		"  - id: alice\n    backend: {type: scripted, answers: [Paris is in Italy.], vote: agent1}\n" +
		"  - id: bob\n    backend: {type: scripted, answers: [Paris.], vote: agent1}\n" +
		"  - id: carol\n    backend: {type: scripted, answers: [Lyon.], vote: agent2, verdicts: [fail, pass]}\n" +
		"orchestrator:\n  final_answer_strategy: winner_reuse\n  verifiers:\n" +
		"    - {aspect: format, agent: bob, instructions: one sentence}\n    - {aspect: correctness, agent: carol}\n"
	cfg, rep := config.Parse("c.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var plain bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Where is Paris?", Logging: true, LogRoot: t.TempDir(), Sinks: []event.Sink{view.NewPlain(&plain)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "bob" || res.FinalAnswer != "Paris." {
		t.Fatalf("result %+v\n%s", res.Result, plain.String())
	}
	for _, want := range []string{"carol: verifier 1 (correctness) on agent1.1: fail", "verifier 1 (correctness, by carol) on agent1.1: fail",
		"verifier 2 (format, by bob) on agent2.1: pass", "the answer ahead of it failed a verifier"} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("plain output lacks %q:\n%s", want, plain.String())
		}
	}
	var st verifyStatus
	readJSON(t, filepath.Join(res.Dir, "status.json"), &st)
	d := st.Results.Decision
	if d.Winner != "bob" || d.Verified != "passed" || !d.Agrees || len(d.Verifiers) != 3 || d.Verifiers[0].Verdict != "fail" || d.Verifiers[0].Agent != "carol" {
		t.Errorf("status.json decision %+v", d)
	}
}

// verifyingModel plays an OpenAI agent that, asked to verify, fails the first answer it reads
// and passes the rest; otherwise it plays decide, with answer on the first request and a
// different one after, so that the two agents' answers differ.
func verifyingModel(checks *atomic.Int32) player {
	var calls atomic.Int32
	return func(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
		raw, _ := json.Marshal(body)
		if strings.Contains(string(raw), "ANSWER TO VERIFY") {
			if checks.Add(1) == 1 {
				return move{text: `{"verdict": "fail", "reason": "the arithmetic is wrong"}`}
			}
			return move{text: "```json\n{\"verdict\": \"pass\", \"reason\": \"checked\"}\n```"}
		}
		if calls.Add(1) > 1 {
			answer = "Four: 2 + 2 = 4."
		}
		return decide(answer, offered, enum, answered, body)
	}
}

// Verifiers on the OpenAI Responses API (the real SDK against a local fake): the vote's
// leader fails correctness, the other answer passes and wins; each check is a billed request
// counted in the cost.
func TestE2E_VerifiersOpenAI(t *testing.T) {
	var checks atomic.Int32
	srv := newFake(t, nil, openaiResponsesAs("2 + 2 = 4.", verifyingModel(&checks)))
	yaml := "agents:\n  - id: agent_a\n    backend: {type: openai, model: gpt-5-nano}\n  - id: agent_b\n    backend: {type: openai, model: gpt-5-nano}\n" +
		"orchestrator:\n  final_answer_strategy: winner_reuse\n  verifiers: [{aspect: correctness, agent: agent_b}]\n"
	cfg, rep := config.Parse("c.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	env := map[string]string{"OPENAI_API_KEY": keys["OPENAI_API_KEY"], "OPENAI_BASE_URL": srv.URL + "/v1"}
	var plain bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "What is 2 + 2?", Logging: true, LogRoot: t.TempDir(),
		Getenv: func(k string) string { return env[k] }, Sinks: []event.Sink{view.NewPlain(&plain)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || checks.Load() != 2 {
		t.Fatalf("result %+v after %d checks\n%s", res.Result, checks.Load(), plain.String())
	}
	var st verifyStatus
	readJSON(t, filepath.Join(res.Dir, "status.json"), &st)
	d := st.Results.Decision
	// The leader failed; the other answer passed and won.
	if len(d.Verifiers) != 2 || d.Verifiers[0].Reason != "the arithmetic is wrong" || d.Verifiers[1].Verdict != "pass" || d.Verified != "passed" ||
		d.Verifiers[0].AnswerLabel == d.Verifiers[1].AnswerLabel || !strings.HasPrefix(d.Verifiers[1].AnswerLabel, d.WinnerLabel+".") || !d.Agrees {
		t.Errorf("status.json decision %+v\n%s", d, plain.String())
	}
	billed := int64(srv.billed.Load())
	if res.Usage.InputTokens < billed*usageIn || !near(res.CostUSD, usage.Cost("openai", "gpt-5-nano", res.Usage)) || res.CostUSD == 0 {
		t.Errorf("usage %+v, cost %v; the server billed %d requests", res.Usage, res.CostUSD, billed)
	}
}

// A verifier subagent is a nested session of the team, whose answer is its verdict: scripted
// agents answer with their first verdict there, and what it spent is counted.
func TestE2E_VerifierSubagent(t *testing.T) {
	yaml := "agents:\n" +
		"  - id: alice\n    backend: {type: scripted, answers: [Paris.], vote: agent1, verdicts: [fail]}\n" +
		"  - id: bob\n    backend: {type: scripted, answers: [\"Paris, France.\"], vote: agent1, verdicts: [fail]}\n" +
		"orchestrator:\n  final_answer_strategy: winner_reuse\n  verifiers: [{aspect: custom, subagent: true, instructions: names the country}]\n"
	cfg, rep := config.Parse("c.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var plain bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Where is Paris?", Logging: true, LogRoot: t.TempDir(), Sinks: []event.Sink{view.NewPlain(&plain)}})
	if err != nil {
		t.Fatal(err)
	}
	// Both answers fail: the plain tally's winner (alice, two votes) stands.
	if res.ExitCode != 0 || res.Winner != "alice" {
		t.Fatalf("result %+v\n%s", res.Result, plain.String())
	}
	var st verifyStatus
	readJSON(t, filepath.Join(res.Dir, "status.json"), &st)
	d := st.Results.Decision
	if len(d.Verifiers) != 2 || d.Verified != "none_passed" || d.Verifiers[0].Verdict != "fail" || d.Verifiers[0].Agent != "alice" {
		t.Errorf("status.json decision %+v\n%s", d, plain.String())
	}
	if !strings.Contains(plain.String(), "verifier 1 (custom, by subagent verifier_1_agent1_1) on agent1.1: fail") {
		t.Errorf("plain output lacks the subagent's verdict:\n%s", plain.String())
	}
}
