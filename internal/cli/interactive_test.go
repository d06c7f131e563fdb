package cli

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
)

func TestInteractive_TwoTurnsCarryTheConversation(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, `
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris is the capital of France."]}
  - id: b
    backend: {type: scripted, answers: ["Paris."]}
`)
	in := strings.NewReader("What is the capital of France?\n/status\n/bogus\n/help\nAnd its population?\n/quit\n")
	var out, errb bytes.Buffer
	code := Execute(t.Context(), []string{"--config", cfg, "--no-display"}, in, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"turns: 1 (1 in the current conversation)", "Unknown command /bogus", "/reset, /clear", "session completed (exit 0)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	turns, _ := filepath.Glob(filepath.Join(".massgen", "massgen_logs", "log_*", "turn_*"))
	if len(turns) != 2 || filepath.Dir(turns[0]) != filepath.Dir(turns[1]) {
		t.Fatalf("turn folders: %v (want turn_1 and turn_2 of one session)", turns)
	}
	first, _ := event.ReadFile(filepath.Join(turns[0], "events.jsonl"))
	second, err := event.ReadFile(filepath.Join(turns[1], "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var answer string
	for _, e := range first {
		if f, ok := e.Payload.(event.FinalAnswer); ok {
			answer = f.Content
		}
	}
	start := second[0].Payload.(event.SessionStarted)
	if start.Turn != 2 || len(start.History) != 2 || start.History[1].Content != answer || start.Question != "And its population?" {
		t.Fatalf("turn 2 started with %+v (first answer %q)", start, answer)
	}
	// The agents of turn 2 read the first turn in their prompt.
	var prompt string
	for _, e := range second {
		if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Fresh {
			prompt = mc.Messages[0].Content
			break
		}
	}
	if !strings.Contains(prompt, "User: What is the capital of France?") || !strings.Contains(prompt, "Assistant: "+answer) {
		t.Errorf("turn 2 prompt does not carry the first turn:\n%s", prompt)
	}
}

func TestInteractive_ResetForgets(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [\"x\"]}\n")
	in := strings.NewReader("q1\n/reset\nq2\n")
	var out bytes.Buffer
	if code := Execute(t.Context(), []string{"--config", cfg, "--no-display"}, in, &out, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	turns, _ := filepath.Glob(filepath.Join(".massgen", "massgen_logs", "log_*", "turn_2", "events.jsonl"))
	evs, err := event.ReadFile(turns[0])
	if err != nil {
		t.Fatal(err)
	}
	if h := evs[0].Payload.(event.SessionStarted).History; len(h) != 0 {
		t.Errorf("history after /reset: %+v", h)
	}
}

// A later turn that cannot start (say, its previous workspace vanished) is reported and the
// conversation goes on; every turn gets the same Conversation.
func TestInteractive_ALaterTurnThatCannotStartKeepsTheConversation(t *testing.T) {
	cfg := &config.Config{Agents: []config.Agent{{ID: "a"}}}
	var seen []app.Options
	runTurn := func(o app.Options) (app.Result, error) {
		seen = append(seen, o)
		if o.Turn == 2 {
			return app.Result{}, &app.Error{Code: app.ExitExecution, Err: errors.New("the previous workspace is gone")}
		}
		var r app.Result
		r.FinalAnswer, r.Session = "answer "+o.Question, "log_x"
		return r, nil
	}
	var out bytes.Buffer
	err := interactive(t.Context(), cfg, strings.NewReader("q1\nq2\nq3\n"), &out, runTurn)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "This turn could not start: the previous workspace is gone") {
		t.Errorf("output:\n%s", out.String())
	}
	if len(seen) != 3 || seen[0].Conversation == nil || seen[2].Conversation != seen[0].Conversation {
		t.Fatalf("turns %+v", seen)
	}
	if h := seen[2].History; len(h) != 2 || h[1].Content != "answer q1" {
		t.Errorf("turn 3 history %+v", h)
	}
}
