package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// massgenFlags is every flag of MassGen's main parser, as latest.md section 2 lists them
// (massgen/cli/entrypoint.py main_parser, mode_flags.py, and --inbox-dir of v0.1.95), with
// the arguments that exercise it here. Each is built, or refused by name with what to do
// instead; none is cobra's bare "unknown flag".
var massgenFlags = []struct {
	flag string
	args []string // after --config <fast team>; "" entries are left out
	// refused: exit 1 naming the flag and "not supported yet", before anything runs.
	refused bool
	// otherwise the exit code and a pattern of stdout+stderr.
	code int
	want string
}{
	// Input, quick setup and display.
	{flag: "--config", args: []string{"q?"}, want: `session completed`},
	{flag: "--select", refused: true},
	// Quick setup builds its agent, which stops for its missing key before any call.
	{flag: "--backend", args: []string{"NOCONFIG", "--backend", "claude", "q?"}, code: 1, want: `agent agent1: no API key for backend claude`},
	{flag: "--model", args: []string{"NOCONFIG", "--model", "gpt-5-mini", "q?"}, code: 1, want: `agent agent1: no API key for backend openai`},
	{flag: "--system-message", args: []string{"NOCONFIG", "--backend", "openai", "--system-message", "Be brief.", "q?"}, code: 1, want: `no API key for backend openai`},
	{flag: "--base-url", args: []string{"NOCONFIG", "--backend", "scripted", "--base-url", "http://127.0.0.1:1/v1", "q?"}, code: -1},
	{flag: "--no-display", args: []string{"--no-display", "q?"}, want: `session completed`},
	{flag: "--display", args: []string{"--display", "rich", "q?"}, want: `session completed`},
	{flag: "--textual-serve", refused: true},
	{flag: "--textual-serve-port", args: []string{"8001"}, refused: true},
	{flag: "--no-logs", args: []string{"--no-logs", "q?"}, want: `session completed`},
	{flag: "--debug", args: []string{"--debug", "q?"}, want: `session completed`},
	{flag: "--save-streaming-buffers", refused: true},
	{flag: "--logfire", refused: true},
	// Web UI.
	{flag: "--web", args: []string{"--web", "--web-port", "0", "--no-browser", "--automation", "q?"}, want: `(?s)WINNER: .*dashboard at http://127\.0\.0\.1:\d+/`},
	{flag: "--web-quickstart", refused: true},
	{flag: "--web-port", args: []string{"--web-port", "0"}, code: 1, want: `--web-port goes with --web`},
	{flag: "--web-host", args: []string{"--web-host", "127.0.0.1"}, code: 1, want: `--web-host goes with --web`},
	{flag: "--no-browser", args: []string{"--no-browser"}, code: 1, want: `--no-browser goes with --web`},
	{flag: "--web-review", refused: true},
	// Automation and external orchestration.
	{flag: "--automation", args: []string{"--automation", "q?"}, want: `(?m)^LOG_DIR: /`},
	{flag: "--step", refused: true},
	{flag: "--session-dir", args: []string{"d"}, refused: true},
	{flag: "--stream-events", args: []string{"--stream-events", "q?"}, want: `"type":"session_ended"`},
	{flag: "--output-file", args: []string{"--output-file", "out/answer.md", "q?"}, want: `answer written to .*/out/answer\.md`},
	{flag: "--skip-agent-selector", args: []string{"--skip-agent-selector", "q?"}, want: `session completed`},
	{flag: "--no-session-registry", args: []string{"--no-session-registry", "q?"}, want: `session completed`},
	{flag: "--no-parse-at-references", args: []string{"--no-parse-at-references", "see @nothing?"}, want: `session completed`},
	// Planning and specs.
	// --plan and --execute-plan are built (plan_e2e_test.go runs them); this team answers no plan.
	{flag: "--plan", args: []string{"--plan", "q?"}, code: 2, want: `--plan: the run ended without a valid plan \(the answer holds no project plan`},
	{flag: "--cwd-context", args: []string{"--cwd-context", "ro", "q?"}, want: `session completed`},
	{flag: "--plan-depth", args: []string{"--plan-depth", "deep", "q?"}, code: 1, want: `--plan-depth and --plan-steps go with --plan`},
	{flag: "--plan-thoroughness", args: []string{"thorough"}, refused: true},
	{flag: "--plan-steps", args: []string{"--plan", "--plan-steps", "500", "q?"}, code: 1, want: `--plan-steps 500: use 1 to 200 tasks`},
	{flag: "--plan-chunks", args: []string{"2"}, refused: true},
	{flag: "--broadcast", args: []string{"--broadcast", "agents", "q?"}, want: `session completed`},
	{flag: "--plan-and-execute", refused: true},
	{flag: "--execute-plan", args: []string{"--execute-plan", "latest", "q?"}, code: 1, want: `--execute-plan latest: no plan under .*: make one with massgen --plan`},
	{flag: "--spec", refused: true},
	{flag: "--execute-spec", args: []string{"latest"}, refused: true},
	// Evaluation criteria.
	{flag: "--eval-criteria", args: []string{"c.json"}, refused: true},
	{flag: "--checklist-criteria-preset", args: []string{"evaluation"}, refused: true},
	// Setup and config generation.
	{flag: "--init", args: []string{"NOCONFIG", "--init", "--config-backend", "openai"}, want: `wrote \.massgen/config\.yaml: 1 agent`},
	{flag: "--quickstart", args: []string{"NOCONFIG", "--quickstart", "--headless", "--config-backend", "openai", "--config-agents", "2"}, want: `wrote \.massgen/config\.yaml: 2 agents`},
	{flag: "--headless", args: []string{"--headless"}, code: 1, want: `--headless goes with --init`},
	{flag: "--generate-config", args: []string{"NOCONFIG", "--generate-config", "g.yaml", "--config-backend", "openai"}, want: `wrote g\.yaml`},
	{flag: "--config-agents", args: []string{"NOCONFIG", "--generate-config", "g.yaml", "--config-backend", "openai", "--config-agents", "3"}, want: `wrote g\.yaml: 3 agents`},
	{flag: "--config-backend", args: []string{"NOCONFIG", "--generate-config", "g.yaml", "--config-backend", "openai"}, want: `openai_1 \(openai gpt-5.4\)`},
	{flag: "--config-model", args: []string{"NOCONFIG", "--generate-config", "g.yaml", "--config-backend", "openai", "--config-model", "gpt-5-mini"}, want: `\(openai gpt-5-mini\)`},
	{flag: "--config-agent-id", args: []string{"NOCONFIG", "--generate-config", "g.yaml", "--config-backend", "openai", "--config-agent-id", "solo"}, want: `solo \(openai`},
	{flag: "--config-docker", refused: true},
	{flag: "--config-context-path", args: []string{"NOCONFIG", "--generate-config", "g.yaml", "--config-backend", "openai", "--config-context-path", "."}, want: `wrote g\.yaml`},
	{flag: "--quickstart-agent", args: []string{"NOCONFIG", "--quickstart", "--quickstart-agent", "id=x,backend=ollama,model=llama3.2"}, want: `x \(ollama llama3\.2\)`},
	{flag: "--setup", refused: true},
	{flag: "--setup-skills", refused: true},
	{flag: "--setup-docker", refused: true},
	// Listing and validation.
	{flag: "--list-backends", args: []string{"NOCONFIG", "--list-backends"}, want: `(?m)^openai +supported +gpt-5.4 +OPENAI_API_KEY`},
	{flag: "--list-examples", args: []string{"NOCONFIG", "--list-examples"}, want: `@examples/three_agents_default`},
	{flag: "--example", args: []string{"NOCONFIG", "--example", "demo"}, want: `(?m)^agents:$`},
	{flag: "--show-schema", args: []string{"NOCONFIG", "--show-schema"}, want: `(?m)^orchestrator:$`},
	{flag: "--schema-backend", args: []string{"NOCONFIG", "--show-schema", "--schema-backend", "openai"}, want: `(?m)^agents\[\]\.backend:$`},
	{flag: "--with-examples", args: []string{"NOCONFIG", "--show-schema", "--with-examples"}, want: `@examples/demo`},
	{flag: "--validate", args: []string{"NOCONFIG", "--validate", "CONFIG"}, want: `Configuration is valid!`},
	{flag: "--strict", args: []string{"NOCONFIG", "--validate", "--strict", "CONFIG"}, want: `Configuration is valid!`},
	{flag: "--json", args: []string{"NOCONFIG", "--validate", "CONFIG", "--json"}, want: `"valid": true`},
	{flag: "--skip-validation", args: []string{"--skip-validation", "q?"}, want: `session completed`},
	{flag: "--strict-validation", args: []string{"--strict-validation", "q?"}, want: `session completed`},
	// Sessions (sessions.go builds them).
	{flag: "--session-id", args: []string{"--session-id", "log_nosuch", "q?"}, code: -1},
	{flag: "--continue", args: []string{"--continue", "q?"}, code: -1},
	{flag: "--list-sessions", args: []string{"NOCONFIG", "--list-sessions"}, code: -1},
	{flag: "--all", args: []string{"NOCONFIG", "--list-sessions", "--all"}, code: -1},
	// Timeouts and rate limits.
	{flag: "--orchestrator-timeout", args: []string{"--orchestrator-timeout", "60", "q?"}, want: `session completed`},
	{flag: "--rate-limit", refused: true},
	// Mode flags.
	{flag: "--single-agent", args: []string{"--single-agent", "b", "q?"}, want: `massgen: 1 agent on: q\?`},
	{flag: "--coordination-mode", args: []string{"--coordination-mode", "parallel", "q?"}, want: `session completed`},
	{flag: "--quick", args: []string{"--quick", "q?"}, want: `session completed`},
	{flag: "--personas", args: []string{"--personas", "perspective", "q?"}, code: -1},
	{flag: "--fast", refused: true},
	// After the stored entrypoint.
	{flag: "--inbox-dir", args: []string{"--automation", "--inbox-dir", "inbox", "q?"}, want: `(?m)^RUNTIME_INBOX: /.*/inbox$`},
}

func TestMassGenFlags_EveryOneBuiltOrRefusedByName(t *testing.T) {
	for _, tc := range massgenFlags {
		t.Run(tc.flag, func(t *testing.T) {
			t.Chdir(t.TempDir())
			cfg := writeConfig(t, fastTeam)
			var args []string
			switch {
			case tc.refused:
				args = append(append([]string{"--config", cfg, tc.flag}, tc.args...), "q?")
			case len(tc.args) > 0 && tc.args[0] == "NOCONFIG":
				args = tc.args[1:]
			default:
				args = append([]string{"--config", cfg}, tc.args...)
			}
			for i, a := range args {
				if a == "CONFIG" {
					args[i] = cfg
				}
			}
			code, out, stderr := execute(t, t.Context(), args...)
			all := out + stderr
			if strings.Contains(all, "unknown flag") {
				t.Fatalf("%s is an unknown flag:\n%s", tc.flag, all)
			}
			if tc.refused {
				if code != ExitConfig || !strings.Contains(stderr, tc.flag) || !strings.Contains(stderr, "not supported yet") {
					t.Fatalf("exit %d, want 1 with a refusal naming %s\nstdout: %s\nstderr: %s", code, tc.flag, out, stderr)
				}
				noLogs(t)
				return
			}
			if tc.code >= 0 && code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, stderr)
			}
			if tc.want != "" && !regexp.MustCompile(tc.want).MatchString(all) {
				t.Errorf("output does not match %s:\n%s", tc.want, all)
			}
		})
	}
}

// Help lists the flags by group, leaves the refused ones out, and states the one-word rule.
func TestHelp(t *testing.T) {
	code, out, _ := execute(t, t.Context(), "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var at []int
	for _, g := range []string{groupRun + ":", groupDisplay + ":", groupAuto + ":", groupModes + ":", groupWeb + ":", groupSetup + ":", groupList + ":"} {
		i := strings.Index(out, "\n"+g+"\n")
		if i < 0 {
			t.Fatalf("help lacks the group %q:\n%s", g, out)
		}
		at = append(at, i)
	}
	for i := 1; i < len(at); i++ {
		if at[i] < at[i-1] {
			t.Errorf("help groups out of order:\n%s", out)
		}
	}
	for _, want := range []string{"One-word rule", "--validate FILE", "--single-agent ID", "--output-file FILE", "@path in the question", "serve "} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	_, flags, _ := strings.Cut(out, "\nUsage:")
	for _, hidden := range []string{"--plan-chunks", "--eval-criteria", "--fast", "--no-session-registry", "[=", "\x00"} {
		if strings.Contains(flags, hidden) {
			t.Errorf("help shows %q", hidden)
		}
	}
	// Subcommands keep cobra's usage.
	if code, out, _ := execute(t, t.Context(), "replay", "--help"); code != 0 || !strings.Contains(out, "--speed") {
		t.Errorf("replay --help: exit %d\n%s", code, out)
	}
}

// --validate takes its file as its value or as the positional argument, wherever the other
// flags are (MassGen users write `massgen --validate --strict FILE`).
func TestValidate_FileAnywhere(t *testing.T) {
	warn := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [x]}\ndisplay: {}\n")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--validate", warn}, 0, "warning:"},
		{[]string{"--validate", "--strict", warn}, 1, "error:"},
		{[]string{"--strict", "--validate", warn}, 1, "error:"},
		{[]string{"--validate=" + warn, "--strict"}, 1, "error:"},
		{[]string{"--validate", "--json", warn}, 0, `"warning_count": 1`},
		{[]string{"--validate"}, 1, "--validate needs a config file"},
		{[]string{"--validate", warn, warn}, 1, "--validate checks one file"},
		{[]string{"--validate", "@examples/three_agents_default"}, 0, "Configuration is valid!"},
	}
	for _, tc := range tests {
		code, out, stderr := execute(t, t.Context(), tc.args...)
		if code != tc.code || !strings.Contains(out+stderr, tc.want) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", tc.args, code, tc.code, out, stderr)
		}
	}
}

func TestVersionSubcommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := execute(t, t.Context(), args...)
		if code != 0 || out != "massgen "+Version+"\n" {
			t.Errorf("%v: exit %d: %q", args, code, out)
		}
	}
}

// A mistyped subcommand never becomes a paid question: `massgen serv --config demo.yaml`
// exits 1 with a did-you-mean and starts no session.
func TestOneWordRule(t *testing.T) {
	demo := repoFile(t, "examples/demo.yaml")
	tests := []struct {
		args []string
		want string // "" means the run goes ahead
	}{
		{[]string{"serv", "--config", demo}, "unknown command `serv`; did you mean `massgen serve`?"},
		{[]string{"--config", demo, "replya", ".massgen"}, "did you mean `massgen replay`?"},
		{[]string{"--config", demo, "Version"}, "did you mean `massgen version`?"},
		{[]string{"--config", demo, "sevre"}, "did you mean `massgen serve`?"},
		{[]string{"--config", demo, "hlep"}, "did you mean `massgen help`?"},
		{[]string{"--config", demo, "export"}, "massgen export"},
		{[]string{"--config", demo, "shares", "list"}, "massgen shares"},
		{[]string{"--config", fastConfigFile(t), "see", "the", "capital"}, ""},
		{[]string{"--config", fastConfigFile(t), "serve?"}, ""},
		{[]string{"--config", fastConfigFile(t), "serve me a poem"}, ""},
		{[]string{"--config", fastConfigFile(t), "--", "serve"}, ""},
		{[]string{"--config", fastConfigFile(t), "Photosynthesis"}, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, out, stderr := execute(t, t.Context(), tc.args...)
			if tc.want == "" {
				if code != 0 {
					t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
				}
				return
			}
			if code != ExitConfig || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
			}
			if strings.Contains(stderr, "unknown command") && !strings.Contains(stderr, "trailing '?'") {
				t.Errorf("the refusal does not say how to ask it anyway: %s", stderr)
			}
			noLogs(t)
		})
	}
}

// fastConfigFile writes fastTeam to a file of its own test-wide temporary folder.
func fastConfigFile(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "fast*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(fastTeam); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
