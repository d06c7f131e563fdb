package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"massgen/examples"
	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
)

// Every file in examples/ is embedded, validates without a warning, names in its header the
// API keys its agents need, and runs offline once its agents are scripted (issue 10's "Done
// when").
func TestExamples_ValidateAndRunOffline(t *testing.T) {
	onDisk, err := filepath.Glob(repoFile(t, "examples/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	list := examples.List()
	if len(list) != len(onDisk) || len(list) < 11 {
		t.Fatalf("%d examples embedded, %d files in examples/", len(list), len(onDisk))
	}
	for _, ex := range list {
		t.Run(ex.Name, func(t *testing.T) {
			// From the repository root, where the README runs them (mcp_workspace.yaml shares
			// ./examples).
			t.Chdir(repoFile(t, "."))
			cfg, rep := config.Load(filepath.Join("examples", ex.File))
			if !rep.OK() || len(rep.Warnings) > 0 {
				t.Fatalf("examples/%s:\n%s", ex.File, rep.Text())
			}
			// --list-examples shows the first line and the Keys line: each must stand alone.
			if !strings.HasSuffix(ex.Summary, ".") || len(ex.Summary) > 100 || ex.Keys == "" || strings.Count(ex.Keys, "(") != strings.Count(ex.Keys, ")") {
				t.Errorf("header: summary %q, keys %q; want a one-line first sentence and a whole \"# Keys:\" line", ex.Summary, ex.Keys)
			}
			checkKeysLine(t, ex, cfg)

			scripted := scriptedCopy(cfg)
			dir := t.TempDir()
			res, err := app.Run(t.Context(), scripted, app.Options{Question: "What is the capital of France?", Logging: true,
				LogRoot: filepath.Join(dir, "logs"), WorkspaceRoot: filepath.Join(dir, "ws"), Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if res.ExitCode != 0 || res.FinalAnswer == "" {
				t.Fatalf("exit %d, final answer %q: %v", res.ExitCode, res.FinalAnswer, res.Err)
			}
			evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(started(t, evs).Agents); got != len(cfg.Agents) {
				t.Errorf("%d agents ran, the example has %d", got, len(cfg.Agents))
			}
		})
	}
}

// checkKeysLine: the header's Keys line names a variable of every agent that needs a key, and
// says none when none does.
func checkKeysLine(t *testing.T, ex examples.Example, cfg *config.Config) {
	t.Helper()
	none := true
	for _, a := range cfg.Agents {
		if _, _, err := app.APIKey(a.Backend, func(string) string { return "" }); err == nil {
			continue
		}
		none = false
		if !slices.ContainsFunc(config.BackendTypes[a.Backend.Type].APIKeyEnv, func(env string) bool { return strings.Contains(ex.Keys, env) }) {
			t.Errorf("agent %s needs %v; the Keys line says %q", a.ID, config.BackendTypes[a.Backend.Type].APIKeyEnv, ex.Keys)
		}
	}
	if none != strings.HasPrefix(ex.Keys, "none") {
		t.Errorf("Keys line %q, but needing a key is %v", ex.Keys, !none)
	}
}

// scriptedCopy is cfg with every agent's backend replaced by a scripted one of the same
// tools, so the example's team and settings run offline: MCP servers (which need their
// programs) are dropped, context paths made absolute.
func scriptedCopy(cfg *config.Config) *config.Config {
	c := *cfg
	c.Agents = make([]config.Agent, len(cfg.Agents))
	for i, a := range cfg.Agents {
		tools := a.Backend.Tools
		tools.MCPServers, tools.AllowedTools, tools.ExcludeTools = nil, nil, nil
		a.Backend = config.Backend{Type: "scripted", Model: "scripted-" + a.Backend.Type, Tools: tools,
			Script: &config.Script{Answers: []string{fmt.Sprintf("Paris (from %s).", a.ID)}, Vote: "first"}}
		c.Agents[i] = a
	}
	c.Orchestrator.ContextPaths = slices.Clone(cfg.Orchestrator.ContextPaths)
	for i, p := range c.Orchestrator.ContextPaths {
		if abs, err := filepath.Abs(p.Path); err == nil {
			c.Orchestrator.ContextPaths[i].Path = abs
		}
	}
	return &c
}

func TestExamples_NamesAndAliases(t *testing.T) {
	for name, want := range map[string]string{
		"demo":                             "demo",
		"@examples/demo":                   "demo",
		"demo.yaml":                        "demo",
		"basic/multi/three_agents_default": "three_agents_default",
		"basic_multi_three_agents_default": "three_agents_default",
		"massgen/configs/basic/multi/three_agents_default.yaml": "three_agents_default",
		"basic/multi/two_qwen_vllm":                             "local_vllm",
		"providers/claude/claude":                               "single_claude",
		"three_agents":                                          "three_agents_default", // MassGen's substring rule
	} {
		ex, err := examples.Lookup(name)
		if err != nil || ex.Name != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", name, ex.Name, err, want)
		}
	}
	for name, want := range map[string]string{"single": "ambiguous", "nosuch": "massgen --list-examples"} {
		if _, err := examples.Lookup(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(%q): %v, want an error saying %q", name, err, want)
		}
	}
}

// @examples/NAME runs from any folder; a MassGen path to an example that is not a file here
// runs the built-in one, saying so.
func TestExamples_FromTheCommandLine(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, stderr := execute(t, t.Context(), "--validate", "@examples/basic/multi/three_agents_default")
	if code != 0 || !strings.Contains(out, "Configuration is valid!") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	cfg, rep, note := loadFile("examples/demo.yaml") // not a file in this folder
	if !rep.OK() || cfg.Path != "@examples/demo.yaml" || !strings.Contains(note, "using the built-in example @examples/demo") {
		t.Errorf("examples/demo.yaml from elsewhere: %v, %q", rep.Err(), note)
	}
	if _, rep, note := loadFile("my/other.yaml"); rep.OK() || note != "" || !strings.Contains(rep.Text(), "config file not found") {
		t.Errorf("a missing file that names no example: %q\n%s", note, rep.Text())
	}
	code, _, stderr = execute(t, t.Context(), "--config", "@examples/nosuch", "q?")
	if code != ExitConfig || !strings.Contains(stderr, `no example is called "nosuch"`) || strings.Contains(stderr, "did you mean") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	// A typo of an example's name gets a did-you-mean, as flags and subcommands do.
	for _, args := range [][]string{{"--config", "@examples/dmeo", "q?"}, {"--example", "dmeo"}, {"--validate", "@examples/persnoas"}} {
		code, printed, stderr := execute(t, t.Context(), args...)
		want := "did you mean @examples/demo?"
		if args[1] == "@examples/persnoas" {
			want = "did you mean @examples/personas?"
		}
		if code != ExitConfig || !strings.Contains(stderr+printed, want) {
			t.Errorf("%v: exit %d, want %q: %s", args, code, want, stderr)
		}
	}
	if testing.Short() {
		t.Log("the demo run is skipped in -short mode (it paces itself for people: 6 s)")
	} else {
		code, out, stderr = execute(t, t.Context(), "--config", "@examples/demo", "--automation", "capital?")
		if code != 0 || automationLines(out)["WINNER"] == "" {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
	}

	code, out, _ = execute(t, t.Context(), "--list-examples")
	if code != 0 {
		t.Fatalf("--list-examples: exit %d", code)
	}
	for _, ex := range examples.List() {
		if !strings.Contains(out, "@examples/"+ex.Name) {
			t.Errorf("--list-examples lacks %s", ex.Name)
		}
	}
	if !strings.Contains(out, "keys: OPENAI_API_KEY") || !strings.Contains(out, "also basic/multi/three_agents_default") {
		t.Errorf("--list-examples lacks keys or MassGen names:\n%s", out)
	}
	code, out, _ = execute(t, t.Context(), "--example", "basic/multi/three_agents_default")
	want, _ := os.ReadFile(repoFile(t, "examples/three_agents_default.yaml"))
	if code != 0 || out != string(want) {
		t.Errorf("--example: exit %d, printed %d bytes, want the file (%d bytes)", code, len(out), len(want))
	}
}

// Every hint at the offline demo (the error without keys, --help) names it as
// @examples/demo, which runs from any folder, not examples/demo.yaml, a file of the clone.
func TestDemoHint_WorksAnywhere(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	for _, typ := range config.TeamTypes {
		for _, env := range config.BackendTypes[typ].APIKeyEnv {
			t.Setenv(env, "")
		}
	}
	hint := regexp.MustCompile(`massgen --config (\S+) "What is the capital of France\?"`)
	code, _, noKeys := execute(t, t.Context(), "What is the capital of France?")
	if code != ExitConfig {
		t.Fatalf("no keys: exit %d: %s", code, noKeys)
	}
	_, help, _ := execute(t, t.Context(), "--help")
	for where, text := range map[string]string{"the error without keys": noKeys, "--help": help} {
		m := hint.FindStringSubmatch(text)
		if m == nil || m[1] != "@examples/demo" {
			t.Errorf("%s does not hint at massgen --config @examples/demo:\n%s", where, text)
			continue
		}
		if _, rep, _ := loadFile(m[1]); !rep.OK() {
			t.Errorf("%s hints at %s, which does not load here: %s", where, m[1], rep.Text())
		}
	}
}
