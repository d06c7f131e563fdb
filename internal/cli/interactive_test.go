package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/lineedit"
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
	err := interactive(t.Context(), cfg, interactiveSetup{}, strings.NewReader("q1\nq2\nq3\n"), &out, runTurn)
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

// typed is a terminal on which the user types chunks, then nothing (lineedit.Input).
type typed struct{ chunks [][]byte }

func (k *typed) Raw() (func() error, error) { return func() error { return nil }, nil }
func (k *typed) Wait(_ context.Context, short bool) (bool, error) {
	return len(k.chunks) > 0 || !short, nil
}
func (k *typed) Read(p []byte) (int, error) {
	if len(k.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, k.chunks[0])
	k.chunks = k.chunks[1:]
	return n, nil
}
func (k *typed) Width() int { return 80 }

// editorOn returns the line editor's prompter on keys typed, with its history in path.
func editorOn(t *testing.T, out io.Writer, path string, keys ...string) *editorPrompter {
	t.Helper()
	in := &typed{}
	for _, k := range keys {
		in.chunks = append(in.chunks, []byte(k))
	}
	hist, err := lineedit.OpenHistory(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &editorPrompter{r: lineedit.NewReader(in, out), hist: hist, out: out}
}

// Ctrl-C at the prompt clears the line or, twice on an empty line, leaves with exit 0; it is
// never applied to a question typed after it (review 4.1: it used to interrupt the next one).
func TestInteractive_CtrlCAtThePrompt(t *testing.T) {
	tests := []struct {
		name   string
		keys   []string
		asked  []string
		output []string
	}{
		{"twice on an empty line leaves", []string{"\x03", "\x03"}, nil, []string{lineedit.Hint, "Goodbye"}},
		{"it clears the line, and the next question runs", []string{"a draft\x03", "q1\r", "\x03\x03"}, []string{"q1"}, []string{"a draft\x1b[K^C", "Goodbye"}},
		{"once, then a question: the question runs", []string{"\x03", "q1\r", "\x04"}, []string{"q1"}, []string{lineedit.Hint}},
		{"a key between two presses does not leave", []string{"\x03", "x\x7f", "\x03", "q1\r", "\x04"}, []string{"q1"}, nil},
		{"up recalls the question before", []string{"q1\r", "\x1b[A\r", "\x04"}, []string{"q1", "q1"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			var asked []string
			runTurn := func(o app.Options) (app.Result, error) {
				asked = append(asked, o.Question)
				var r app.Result
				r.FinalAnswer, r.Session = "answer", "log_x"
				return r, nil
			}
			p := editorOn(t, &out, "", tc.keys...)
			cfg := &config.Config{Agents: []config.Agent{{ID: "a"}}}
			if err := converse(t.Context(), cfg, interactiveSetup{}, p, &out, runTurn); err != nil {
				t.Fatalf("exit with %v\n%s", err, out.String())
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("questions run %q, want %q", asked, tc.asked)
			}
			for _, w := range tc.output {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%q", w, out.String())
				}
			}
		})
	}
}

// A Ctrl-C (SIGINT) that arrives while the plain prompt waits ends the loop with exit 0: the
// line read after it is not run.
func TestInteractive_InterruptWhileWaitingIsNotAppliedToTheQuestion(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	runTurn := func(app.Options) (app.Result, error) { ran = true; return app.Result{}, nil }
	var out bytes.Buffer
	err := interactive(ctx, &config.Config{Agents: []config.Agent{{ID: "a"}}}, interactiveSetup{}, strings.NewReader("q1\n"), &out, runTurn)
	if err != nil || ran || !strings.Contains(out.String(), "Goodbye") || strings.Contains(out.String(), "q1") {
		t.Errorf("err %v, ran %v\n%s", err, ran, out.String())
	}
}

func TestInteractive_HistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "prompt_history")
	runTurn := func(app.Options) (app.Result, error) { return app.Result{}, nil }
	cfg := &config.Config{Agents: []config.Agent{{ID: "a"}}}
	var out bytes.Buffer
	if err := converse(t.Context(), cfg, interactiveSetup{}, editorOn(t, &out, path, "first question\r", "/status\r", "\x04"), &out, runTurn); err != nil {
		t.Fatal(err)
	}
	// A later run recalls them, newest first.
	var asked []string
	runTurn = func(o app.Options) (app.Result, error) { asked = append(asked, o.Question); return app.Result{}, nil }
	if err := converse(t.Context(), cfg, interactiveSetup{}, editorOn(t, &out, path, "\x1b[A\x1b[A\r", "\x04"), &out, runTurn); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{"first question"}) {
		t.Errorf("recalled %q", asked)
	}
}

func TestInteractive_PipedTranscriptAndBanner(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [\"Paris.\"]}\n  - id: a_much_longer_agent_name\n    backend: {type: scripted, answers: [\"Paris!\"]}\n")
	var out bytes.Buffer
	code := Execute(t.Context(), []string{"--config", cfg, "--no-display"}, strings.NewReader("What is the capital of France?\n/status\n"), &out, &out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	s := out.String()
	if !strings.Contains(s, "User: What is the capital of France?\n") {
		t.Errorf("the question is not echoed after User:\n%s", s)
	}
	logs := regexp.MustCompile(`(?m)^logs: (\S+)$`).FindAllStringSubmatch(s, -1)
	if len(logs) == 0 || !filepath.IsAbs(logs[len(logs)-1][1]) || !strings.Contains(logs[len(logs)-1][1], "log_") {
		t.Errorf("/status does not print the log folder's full path:\n%s", s)
	} else if _, err := os.Stat(logs[len(logs)-1][1]); err != nil {
		t.Errorf("/status path: %v", err)
	}
	banner := s[:strings.Index(s, "\nUser:")]
	for _, l := range strings.Split(banner, "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("banner line of %d columns: %q", len([]rune(l)), l)
		}
	}
	if !strings.Contains(banner, "massgen interactive: 2 agents\n") || !strings.Contains(banner, "  a_much_longer_agent_name  scripted") {
		t.Errorf("banner:\n%s", banner)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/.massgen/massgen_logs/log_1": "/home/me/.massgen/massgen_logs/log_1",
		"/my logs/log_1":                       "'/my logs/log_1'",
		"/it's/here":                           `'/it'\''s/here'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// Ctrl-C during a turn still interrupts that turn, and the loop ends with exit 4.
func TestInteractive_CtrlCDuringATurnInterruptsIt(t *testing.T) {
	runTurn := func(app.Options) (app.Result, error) {
		var r app.Result
		r.ExitCode = app.ExitInterrupted
		return r, nil
	}
	var out bytes.Buffer
	p := editorOn(t, &out, "", "q1\r", "q2\r")
	err := converse(t.Context(), &config.Config{Agents: []config.Agent{{ID: "a"}}}, interactiveSetup{}, p, &out, runTurn)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != ExitInterrupted {
		t.Errorf("err %v, want exit 4", err)
	}
}
