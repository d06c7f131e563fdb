package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/testio"
)

// fakeTurn is a finished session played into the live view's sinks: one unpriced agent that
// answers, wins and presents.
func fakeTurn(ctx context.Context, sinks []event.Sink) (app.Result, error) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	ps := []event.Payload{
		event.SessionStarted{Question: "Q?", Turn: 1, Agents: []event.AgentInfo{{ID: "local", Label: "agent1", Backend: "chatcompletion", Model: "my-finetune", Unpriced: true}}},
		event.AnswerSubmitted{Agent: "local", Label: "agent1.1", Content: "Paris.", Version: 1},
		event.UsageReported{Agent: "local", Usage: provider.Usage{InputTokens: 100, OutputTokens: 10}},
		event.CoordinationEnded{Reason: event.EndAllAnswered, Winner: "local", WinnerLabel: "agent1", AnswerLabel: "agent1.1"},
		event.FinalAnswer{Agent: "local", Label: "agent1.final", Content: "Paris.", Mode: "verbatim"},
		event.SessionEnded{Status: event.StatusCompleted},
	}
	for i, p := range ps {
		for _, s := range sinks {
			s.Handle(event.Event{Seq: int64(i + 1), Time: t0.Add(time.Duration(i) * time.Millisecond), Payload: p})
		}
	}
	return app.Result{Result: engine.Result{Status: event.StatusCompleted, Winner: "local", FinalAnswer: "Paris.",
		Usage: provider.Usage{InputTokens: 100, OutputTokens: 10}}}, nil
}

// The config warnings printed before the live view opened show in it too, and stay in what a
// one-shot run leaves on the terminal.
func TestRunLive_ShowsConfigWarnings(t *testing.T) {
	r, w := io.Pipe() // no key ever: only the end of the session ends the view
	defer w.Close()
	var out testio.Buffer
	turn := liveTurn{oneShot: true, notices: []string{"warning: team.yaml:9:1: orchestratr: unknown top-level key (did you mean orchestrator?)"}}
	if _, err := runLive(t.Context(), fakeTurn, r, &out, turn); err != nil {
		t.Fatal(err)
	}
	got := ansi.Strip(out.String())
	// Off a terminal the view is 20 cells wide: the notice is cut there.
	if !strings.Contains(got, "! warning: team.yam") {
		t.Errorf("the live view does not show the config warning:\n%s", got)
	}
}

// An interactive turn prints the outcome once its view is gone: a model without a price says
// so instead of $0.0000.
func TestRunLive_InteractiveOutcomeSaysPriceUnknown(t *testing.T) {
	var out testio.Buffer
	turn := liveTurn{unpriced: []string{"my-finetune"}}
	if _, err := runLive(t.Context(), fakeTurn, strings.NewReader("q"), &out, turn); err != nil {
		t.Fatal(err)
	}
	got := ansi.Strip(out.String())
	tail := got[max(strings.LastIndex(got, "Final answer (by local):"), 0):]
	if !strings.Contains(tail, "tokens: 100 input, 10 output; cost unknown (price unknown for my-finetune)") {
		t.Errorf("the outcome lacks the unknown price:\n%s", tail)
	}
	if strings.Contains(tail, "$0.0000") {
		t.Errorf("the outcome passes an unpriced model for free:\n%s", tail)
	}
}

func TestPrintOutcome_PriceUnknown(t *testing.T) {
	res := app.Result{Result: engine.Result{Winner: "local", FinalAnswer: "Paris.", Usage: provider.Usage{InputTokens: 100, OutputTokens: 10}}}
	for _, tc := range []struct {
		unpriced []string
		want     string
	}{
		{nil, "cost $0.0000\n"},
		{[]string{"my-finetune"}, "cost unknown (price unknown for my-finetune)\n"},
	} {
		var b bytes.Buffer
		printOutcome(&b, res, tc.unpriced...)
		if !strings.HasSuffix(b.String(), tc.want) {
			t.Errorf("unpriced %v: %q lacks %q", tc.unpriced, b.String(), tc.want)
		}
	}
}

// What a live turn is told: an interactive turn's q goes back to the prompt, a one-shot run
// leaves; both show the config warnings and know the team's unpriced models.
func TestNewLiveTurn(t *testing.T) {
	cfg := &config.Config{Agents: []config.Agent{
		{ID: "local", Backend: config.Backend{Type: "chatcompletion", Model: "my-finetune"}},
		{ID: "gpt", Backend: config.Backend{Type: "openai", Model: "gpt-5"}},
	}}
	warnings := []string{"warning: x"}
	for _, oneShot := range []bool{true, false} {
		l := newLiveTurn(cfg, warnings, oneShot)
		if len(l.unpriced) != 1 || l.unpriced[0] != "my-finetune" {
			t.Errorf("unpriced = %v, want [my-finetune]", l.unpriced)
		}
		o := l.options(nil, nil, func() {})
		if o.Leave != oneShot || len(o.Notices) != 1 || o.Notices[0] != "warning: x" {
			t.Errorf("oneShot %v: options %+v", oneShot, o)
		}
		if want := map[bool]string{true: "", false: "back to the prompt"}[oneShot]; o.EndKeyHelp != want {
			t.Errorf("oneShot %v: EndKeyHelp = %q, want %q", oneShot, o.EndKeyHelp, want)
		}
	}
}

// loadConfig keeps printing the warnings to stderr and returns them for the live view.
func TestLoadConfig_ReturnsWarnings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "team.yaml")
	if err := os.WriteFile(path, []byte(fastTeam+"orchestratr: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, skip := range []bool{false, true} {
		var stderr bytes.Buffer
		_, warnings, err := loadConfig(runOptions{configPath: path, skipValidation: skip}, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if skip {
			if len(warnings) != 0 || stderr.Len() != 0 {
				t.Errorf("--skip-validation: warnings %v, stderr %q", warnings, stderr.String())
			}
			continue
		}
		if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "warning: ") || !strings.Contains(warnings[0], "orchestratr") {
			t.Fatalf("warnings = %q", warnings)
		}
		if stderr.String() != warnings[0]+"\n" {
			t.Errorf("stderr = %q, want the warning", stderr.String())
		}
	}
}
