package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"massgen/internal/durable/temporalrun"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"massgen/internal/event"
)

// keyVars are the variables a default team is built from; the tests run without them and with
// an empty home folder, whatever the machine has.
var keyVars = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "XAI_API_KEY"}

func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "massgen-home")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	// The tests run the command line of massgen-temporal, which has a Temporal client.
	dialTemporal = temporalDialer(temporalrun.Connect)
	for _, k := range keyVars {
		os.Unsetenv(k)
	}
	code := m.Run()
	// genai starts an opencensus worker for the life of the process.
	if err := goleak.Find(goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.RemoveAll(home)
	os.Exit(code)
}

// execute runs the command line in a fresh working directory and returns exit code and output.
func execute(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cfg.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// automationLines parses KEY: value lines.
func automationLines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && regexp.MustCompile(`^[A-Z_]+$`).MatchString(k) {
			m[k] = v
		}
	}
	return m
}

func TestDemo_AutomationFilesAgree(t *testing.T) {
	t.Chdir(t.TempDir())
	demo := repoFile(t, "examples/demo.yaml")
	code, out, stderr := execute(t, t.Context(), "--config", demo, "--automation", "What is the capital of France?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	lines := automationLines(out)
	for _, k := range []string{"LOG_DIR", "STATUS", "QUESTION", "WINNER", "ANSWER_FILE", "DURATION", "ANSWER_PREVIEW", "COMPLETED"} {
		if lines[k] == "" {
			t.Errorf("no %s line in:\n%s", k, out)
		}
	}
	// LOG_DIR is MassGen's: the session folder, absolute; STATUS and ANSWER_FILE are in its
	// turn folder.
	session := lines["LOG_DIR"]
	if !filepath.IsAbs(session) || !regexp.MustCompile(`/\.massgen/massgen_logs/log_\d{8}_\d{6}_\d{6}$`).MatchString(session) {
		t.Errorf("LOG_DIR = %q", session)
	}
	dir := filepath.Join(session, "turn_1")
	if lines["STATUS"] != filepath.Join(dir, "status.json") {
		t.Errorf("STATUS = %q, want it in %s", lines["STATUS"], dir)
	}
	answer, err := os.ReadFile(lines["ANSWER_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	if lines["ANSWER_FILE"] != filepath.Join(dir, "final", lines["WINNER"], "answer.txt") {
		t.Errorf("ANSWER_FILE %q does not match WINNER %q", lines["ANSWER_FILE"], lines["WINNER"])
	}
	if lines["COMPLETED"] != "3 agents, "+lines["DURATION"]+" total" {
		t.Errorf("COMPLETED = %q", lines["COMPLETED"])
	}
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var final event.FinalAnswer
	var answers, votes int
	for _, e := range evs {
		switch v := e.Payload.(type) {
		case event.FinalAnswer:
			final = v
		case event.AnswerSubmitted:
			answers++
		case event.VoteCast:
			votes++
		}
	}
	if final.Agent != lines["WINNER"] || final.Content != string(answer) {
		t.Errorf("events.jsonl final answer by %q differs from the answer file of %q", final.Agent, lines["WINNER"])
	}
	if answers < 4 || votes < 3 {
		t.Errorf("demo shows %d answers and %d votes; want an improvement (4 answers) and votes", answers, votes)
	}
	var status struct {
		Meta struct {
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
		} `json:"meta"`
		Results struct {
			Winner  string         `json:"winner"`
			Votes   map[string]int `json:"votes"`
			Preview string         `json:"final_answer_preview"`
		} `json:"results"`
	}
	b, err := os.ReadFile(lines["STATUS"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &status); err != nil {
		t.Fatal(err)
	}
	if status.Results.Winner != lines["WINNER"] || status.Meta.Status != "completed" {
		t.Errorf("status.json winner %q status %q, WINNER %q", status.Results.Winner, status.Meta.Status, lines["WINNER"])
	}
	if !strings.HasPrefix(string(answer), strings.TrimSuffix(status.Results.Preview, "...")) {
		t.Errorf("status.json preview %q is not the start of the answer file", status.Results.Preview)
	}
	if filepath.Base(session) != status.Meta.SessionID {
		t.Errorf("session_id %q, log folder %q", status.Meta.SessionID, session)
	}
	for _, f := range []string{"coordination_table.txt", "metadata.json", "massgen.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}

	// replay prints the same coordination from events.jsonl alone.
	code, replay, stderr := execute(t, t.Context(), "replay", session)
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	for _, want := range []string{"new answer agent1.2", "winner: agent1 (agent1.2)", "session completed (exit 0)", strings.TrimSpace(string(answer))} {
		if !strings.Contains(replay, want) {
			t.Errorf("replay lacks %q:\n%s", want, replay)
		}
	}
}

func TestPlainOutputMatchesReplay(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, `
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris."]}
  - id: b
    backend: {type: scripted, answers: ["Paris, France.", "Paris, the capital of France, on the Seine."], improve_after: 2}
ui: {display_type: simple}
`)
	code, live, stderr := execute(t, t.Context(), "--config", cfg, "capital?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	logs := regexp.MustCompile(`logs: (\S+)`).FindStringSubmatch(live)
	if logs == nil {
		t.Fatalf("no logs line:\n%s", live)
	}
	code, replay, _ := execute(t, t.Context(), "replay", logs[1])
	if code != 0 {
		t.Fatal(replay)
	}
	if want := strings.TrimSuffix(live, logs[0]+"\n"); replay != want {
		t.Errorf("replay differs from the live output\nlive:\n%s\nreplay:\n%s", want, replay)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name     string
		config   string // written to a file; "" means none
		args     []string
		wantCode int
		wantErr  *regexp.Regexp
	}{
		{name: "malformed yaml", config: "agents:\n  - id: a\n    backend: [type\n", wantCode: 1,
			wantErr: regexp.MustCompile(`cfg\.yaml:\d+:\d+: `)},
		{name: "misspelt key", config: "agents:\n  - id: a\n    backend:\n      type: scripted\n      answers: [x]\n    system_mesage: hi\n", wantCode: 1,
			wantErr: regexp.MustCompile(`cfg\.yaml:6:5: .*system_mesage.*system_message`)},
		{name: "missing backend type", config: "agents:\n  - id: a\n    backend:\n      model: m\n", wantCode: 1,
			wantErr: regexp.MustCompile(`cfg\.yaml:3:\d+: .*type`)},
		{name: "wrong type", config: "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\norchestrator:\n  max_new_answers_per_agent: lots\n", wantCode: 1,
			wantErr: regexp.MustCompile(`cfg\.yaml:5:\d+: `)},
		{name: "unsupported backend", config: "agents:\n  - id: a\n    backend: {type: ag2}\n", wantCode: 1,
			wantErr: regexp.MustCompile(`not supported yet`)},
		{name: "MCP server variable not set", config: "agents:\n  - id: a\n    backend:\n      type: scripted\n      answers: [x]\n" +
			"      mcp_servers: [{name: s, command: x, env: {TOKEN: \"${MASSGEN_TEST_UNSET}\"}}]\n", wantCode: 1,
			wantErr: regexp.MustCompile(`MASSGEN_TEST_UNSET`)},
		{name: "missing file", args: []string{"--config", "nope.yaml", "q"}, wantCode: 1, wantErr: regexp.MustCompile(`config file not found: nope\.yaml`)},
		{name: "empty question", config: "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\n", args: []string{"   "}, wantCode: 1,
			wantErr: regexp.MustCompile(`question is empty`)},
		{name: "automation without a question", config: "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\n", args: []string{"--automation"}, wantCode: 1,
			wantErr: regexp.MustCompile(`--automation needs a question`)},
		{name: "escapes in an error never reach the terminal", args: []string{"--config", "\x1b]0;pwned\x07\x1b[2J.yaml", "q"}, wantCode: 1,
			wantErr: regexp.MustCompile(`^error: \.yaml: config file not found: \.yaml \(check the path`)},
		{name: "--model with --config", config: "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\n", args: []string{"--model", "gpt-5", "q"}, wantCode: 1,
			wantErr: regexp.MustCompile(`--model cannot be combined with --config: .*edit its backend keys`)},
		{name: "--backend with --config", config: "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\n", args: []string{"--backend", "openai", "q"}, wantCode: 1,
			wantErr: regexp.MustCompile(`--backend cannot be combined with --config`)},
		{name: "unknown flag", args: []string{"--bogus", "q"}, wantCode: 1, wantErr: regexp.MustCompile(`unknown flag: --bogus \(massgen --help lists the flags\)`)},
		{name: "misspelt flag", args: []string{"--ouput-file", "a.md", "q"}, wantCode: 1, wantErr: regexp.MustCompile(`unknown flag: --ouput-file: did you mean --output-file\?`)},
		{name: "no config at all", args: []string{"q"}, wantCode: 1, wantErr: regexp.MustCompile(`try the offline demo: massgen --config @examples/demo "`)},
		{name: "negative timeout", config: "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\n", args: []string{"--orchestrator-timeout", "-5", "q"}, wantCode: 1,
			wantErr: regexp.MustCompile(`orchestrator-timeout`)},
		{name: "zero timeout", config: "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\n", args: []string{"--orchestrator-timeout", "0", "q"}, wantCode: 1,
			wantErr: regexp.MustCompile(`--orchestrator-timeout must be a whole number of seconds above 0`)},
		{name: "timeout not a number", config: "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\n", args: []string{"--orchestrator-timeout", "abc", "q"}, wantCode: 1,
			wantErr: regexp.MustCompile(`^massgen: --orchestrator-timeout "abc": must be a whole number of seconds\n$`)},
		{name: "unknown backend flag", args: []string{"--backend", "nosuch", "--model", "x", "q"}, wantCode: 1,
			wantErr: regexp.MustCompile(`^massgen: --backend nosuch: unknown backend type`)},
		{name: "root flag after a subcommand", args: []string{"--config", "x", "replay"}, wantCode: 1,
			wantErr: regexp.MustCompile(`--config is a flag of a massgen run, not of .massgen replay.`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			args := tc.args
			if tc.config != "" {
				if err := os.WriteFile("cfg.yaml", []byte(tc.config), 0o644); err != nil {
					t.Fatal(err)
				}
				if args == nil {
					args = []string{"q"}
				}
				args = append([]string{"--config", "cfg.yaml", "--no-display"}, args...)
			}
			code, out, stderr := execute(t, t.Context(), args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, out, stderr)
			}
			if !tc.wantErr.MatchString(stderr) {
				t.Errorf("stderr %q does not match %s", stderr, tc.wantErr)
			}
			// That summary is --validate's; a run says what is wrong and stops.
			if strings.Contains(stderr, "Configuration is invalid") {
				t.Errorf("a run printed --validate's summary:\n%s", stderr)
			}
			if _, err := os.Stat(".massgen"); err == nil {
				t.Error("a log directory was created for a run that never started")
			}
		})
	}
}

func TestMisbehavingAgents(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		wantCode int
		want     []string // substrings of stdout
	}{
		{name: "never calls a workflow tool", wantCode: 0, config: `
agents:
  - id: good
    backend: {type: scripted, answers: ["Paris."]}
  - id: mute
    backend: {type: scripted, answers: ["Lyon."], faults: [{kind: no_tool}]}
orchestrator: {failure_budget: 2}
`, want: []string{"agent2 mute: no workflow tool call", "agent2 mute: dead", "winner: agent1"}},
		{name: "votes for a label that does not exist", wantCode: 0, config: `
agents:
  - id: good
    backend: {type: scripted, answers: ["Paris."]}
  - id: confused
    backend: {type: scripted, answers: ["Paris, France."], latency: 50ms, faults: [{kind: bad_vote, call: 2}]}
`, want: []string{`vote rejected: invalid agent_id "agent99"; valid agents: agent1, agent2`, "session completed (exit 0)"}},
		{name: "every agent fails", wantCode: 2, config: `
agents:
  - id: a
    backend: {type: scripted, answers: ["x"], faults: [{kind: fail}]}
  - id: b
    backend: {type: scripted, answers: ["y"], faults: [{kind: fatal}]}
orchestrator: {failure_budget: 1}
`, want: []string{"agent1 a: dead", "agent2 b: dead", "session failed (exit 2)"}},
		{name: "session timeout", wantCode: 3, config: `
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris."], faults: [{kind: hang, call: 2}]}
timeout_settings: {orchestrator_timeout_seconds: 1, agent_timeout_seconds: 30}
orchestrator: {final_presentation: verbatim}
`, want: []string{"coordination ended: timeout", "Paris.", "session timeout (exit 3)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			cfg := writeConfig(t, tc.config)
			code, out, stderr := execute(t, t.Context(), "--config", cfg, "--no-display", "capital?")
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.wantCode, out, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if _, err := os.Stat(filepath.Join(regexp.MustCompile(`logs: (\S+)`).FindStringSubmatch(out)[1], "status.json")); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestUnwritableLogDirectory(t *testing.T) {
	// A file where the log folder should be fails for every user, root included.
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(".massgen", []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\n")
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--automation", "q")
	if code != ExitExecution || !strings.Contains(stderr, "cannot create the log directory") || !strings.Contains(stderr, "--no-logs") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
}

func TestValidate(t *testing.T) {
	good := repoFile(t, "examples/demo.yaml")
	code, out, _ := execute(t, t.Context(), "--validate", good)
	if code != 0 || !strings.Contains(out, "Configuration is valid!") {
		t.Fatalf("exit %d: %s", code, out)
	}
	warn := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\ndisplay: {}\n")
	if code, out, _ := execute(t, t.Context(), "--validate", warn); code != 0 || !strings.Contains(out, "warning:") {
		t.Fatalf("warning-only config: exit %d: %s", code, out)
	}
	if code, _, _ := execute(t, t.Context(), "--validate", warn, "--strict"); code != 1 {
		t.Fatalf("--strict with a warning: exit %d", code)
	}
	code, out, _ = execute(t, t.Context(), "--validate", warn, "--json")
	var rep struct {
		Valid        bool `json:"valid"`
		WarningCount int  `json:"warning_count"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Valid || rep.WarningCount != 1 {
		t.Fatalf("--json: exit %d, %v, %s", code, err, out)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := execute(t, t.Context(), "--version")
	if code != 0 || out != "massgen "+Version+"\n" {
		t.Fatalf("exit %d: %q", code, out)
	}
}
