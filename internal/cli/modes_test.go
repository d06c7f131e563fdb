package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// --quick sets what MassGen's mode_flags.py sets, and the session records it. Its calls are
// what README says they are: with several agents an answer and a vote each, then one merge by
// the winner; alone, one call.
func TestQuick_SetsMassGensModeSettings(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want event.Settings
		// presentation is how many final presentation calls it makes, calls how many model
		// calls in all.
		presentation, calls int
	}{
		{"team", []string{"--quick"}, event.Settings{MaxNewAnswersPerAgent: 1, DisableInjection: true, DeferVotingUntilAllAnswered: true,
			FinalAnswerStrategy: config.StrategySynthesize}, 1, 5},
		{"single agent", []string{"--single-agent", "--quick"}, event.Settings{MaxNewAnswersPerAgent: 1, SkipVoting: true,
			FinalAnswerStrategy: config.StrategyWinnerReuse}, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			cfg := writeConfig(t, fastTeam)
			code, out, stderr := execute(t, t.Context(), append(append([]string{"--config", cfg}, tc.args...), "capital?")...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			got := started(t, turnEvents(t, out)).Settings
			pick := event.Settings{MaxNewAnswersPerAgent: got.MaxNewAnswersPerAgent, DisableInjection: got.DisableInjection,
				DeferVotingUntilAllAnswered: got.DeferVotingUntilAllAnswered, FinalAnswerStrategy: got.FinalAnswerStrategy,
				SkipVoting: got.SkipVoting}
			if diff := cmp.Diff(tc.want, pick); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			calls, presentation := 0, 0
			for _, e := range turnEvents(t, out) {
				if mc, ok := e.Payload.(event.ModelCalled); ok {
					calls++
					if mc.Stage == provider.StagePresentation {
						presentation++
					}
				}
			}
			if calls != tc.calls || presentation != tc.presentation {
				t.Errorf("%d model calls, %d of them presenting; want %d and %d", calls, presentation, tc.calls, tc.presentation)
			}
		})
	}
	readme, err := os.ReadFile(repoFile(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, says := range []string{"the winner then writes the final answer, merged from all the answers", "two model calls per agent plus that one merge call",
		"`--single-agent` the one answer is the final answer: one call, no vote, no presentation"} {
		if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), says) {
			t.Errorf("README's --quick does not say %q", says)
		}
	}
}

func TestSingleAgent(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		agents  []string
		wantErr *regexp.Regexp
	}{
		{"first by default", []string{"--single-agent", "--", "q?"}, 0, []string{"a"}, nil},
		{"by id", []string{"--single-agent", "b", "q?"}, 0, []string{"b"}, nil},
		{"by id with =", []string{"--single-agent=b", "q?"}, 0, []string{"b"}, nil},
		{"unknown id", []string{"--single-agent", "bb", "q?"}, 1, nil,
			regexp.MustCompile(`--single-agent "bb": no such agent; did you mean b\? the agents are a, b`)},
		{"question taken as the id, as in MassGen", []string{"--single-agent", "What is it?"}, 1, nil,
			regexp.MustCompile(`--single-agent "What is it\?": no such agent; \(--single-agent takes the next argument as the agent id, as in MassGen; .*massgen --single-agent -- "question"`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			cfg := writeConfig(t, fastTeam)
			code, out, stderr := execute(t, t.Context(), append([]string{"--config", cfg}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, stderr)
			}
			if tc.wantErr != nil {
				if !tc.wantErr.MatchString(stderr) {
					t.Errorf("stderr %q does not match %s", stderr, tc.wantErr)
				}
				noLogs(t)
				return
			}
			var ids []string
			for _, a := range started(t, turnEvents(t, out)).Agents {
				ids = append(ids, a.ID)
			}
			if diff := cmp.Diff(tc.agents, ids); diff != "" {
				t.Errorf("agents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestModeFlags_BadValues(t *testing.T) {
	tests := []struct {
		args []string
		want *regexp.Regexp
	}{
		{[]string{"--coordination-mode", "decomposition", "--quick"}, regexp.MustCompile(`--quick with --coordination-mode decomposition`)},
		{[]string{"--coordination-mode", "chaos"}, regexp.MustCompile(`--coordination-mode "chaos": use parallel .* or decomposition`)},
		{[]string{"--personas", "wild"}, regexp.MustCompile(`--personas "wild": use off, perspective, implementation or methodology`)},
		{[]string{"--cwd-context", "rx"}, regexp.MustCompile(`--cwd-context "rx": use ro or read .* rw or write`)},
		{[]string{"--display", "tui"}, regexp.MustCompile(`--display "tui": use rich or textual`)},
		{[]string{"--fast"}, regexp.MustCompile(`--fast is not supported yet: .*--quick`)},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			cfg := writeConfig(t, fastTeam)
			code, out, stderr := execute(t, t.Context(), append(append([]string{"--config", cfg}, tc.args...), "q?")...)
			if code != ExitConfig || !tc.want.MatchString(stderr) {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
			}
			noLogs(t)
		})
	}
}

func TestModeFlags_Accepted(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	for _, args := range [][]string{{"--coordination-mode", "parallel"}, {"--display", "rich"}, {"--display", "textual"}, {"--personas", "off"}} {
		if code, out, stderr := execute(t, t.Context(), append(append([]string{"--config", cfg}, args...), "q?")...); code != 0 {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--personas", "methodology", "q?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if got := started(t, turnEvents(t, out)).Settings.PersonaGenerator; got != "methodology" {
		t.Errorf("persona generator %q, want methodology", got)
	}
}

// --cwd-context shares the working directory: read-only with ro, writable for the final
// answer with rw (the tools say which).
func TestCwdContext(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("plan.md", []byte("step one: tangerine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, readingTeam(filepath.Join(dir, "plan.md")))
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--cwd-context", "ro", "Review the plan")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	res := toolResults(turnEvents(t, out), "read_file")
	if len(res) != 1 || !strings.Contains(res[0].Content, "tangerine") {
		t.Fatalf("read_file results %+v", res)
	}

	c, rep := config.Load(cfg)
	if !rep.OK() {
		t.Fatal(rep.Err())
	}
	c.Orchestrator.ContextPaths = []config.ContextPath{{Path: dir}, {Path: "other"}}
	if err := applyOverrides(c, &runOptions{cwdContext: "write"}); err != nil {
		t.Fatal(err)
	}
	// The directory's own entry becomes writable: --cwd-context decides, as in MassGen.
	want := []config.ContextPath{{Path: dir, Write: true}, {Path: "other"}}
	if diff := cmp.Diff(want, c.Orchestrator.ContextPaths); diff != "" {
		t.Errorf("context paths (-want +got):\n%s", diff)
	}
}

// MassGen's documented decomposition config validates strictly (no warning), and
// --coordination-mode decomposition turns the mode on over a voting config, refusing the vote
// settings that mode has no use for.
func TestDecomposition_ValidateAndFlag(t *testing.T) {
	mg := repoFile(t, "internal/config/testdata/massgen_decomposition.yaml")
	if code, out, _ := execute(t, t.Context(), "--validate", mg, "--strict"); code != 0 || !strings.Contains(out, "Configuration is valid!") {
		t.Fatalf("--validate --strict: exit %d: %s", code, out)
	}
	cfg := writeConfig(t, "agents:\n  - id: a\n    subtask: the page\n    backend: {type: scripted, answers: [Page.]}\n"+
		"  - id: b\n    subtask: the API\n    backend: {type: scripted, answers: [API.], final: \"Both: {{parts}}\"}\n")
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--no-display", "--no-logs", "--coordination-mode", "decomposition", "Build it.")
	if code != 0 || !strings.Contains(out+stderr, "coordination ended: all_stopped") || !strings.Contains(out+stderr, "Both: Page.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	skip := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\norchestrator: {skip_voting: true}\n")
	code, _, stderr = execute(t, t.Context(), "--config", skip, "--coordination-mode", "decomposition", "q?")
	if code != ExitConfig || !strings.Contains(stderr, "the config sets skip_voting, which do not apply without votes") {
		t.Fatalf("skip_voting with the flag: exit %d: %s", code, stderr)
	}
}
