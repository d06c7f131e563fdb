package config

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/suggest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// implement marks backend types as implemented for one test, as a later build will.
func implement(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		old := BackendTypes[n]
		bt := old
		bt.Implemented = true
		BackendTypes[n] = bt
		t.Cleanup(func() { BackendTypes[n] = old })
	}
}

func mustLoad(t *testing.T, path string) *Config {
	t.Helper()
	cfg, rep := Load(path)
	if !rep.OK() || cfg == nil {
		t.Fatalf("Load(%s) failed:\n%s", path, rep.Text())
	}
	return cfg
}

func TestLoad_ScriptedDemo(t *testing.T) {
	cfg := mustLoad(t, "testdata/scripted_demo.yaml")
	want := &Config{
		Path: "testdata/scripted_demo.yaml",
		Agents: []Agent{
			{ID: "optimist", SystemMessage: "You look on the bright side.", Backend: Backend{
				Type: "scripted", Model: "scripted", Script: &Script{
					Answers:      []string{"The answer is 42.", "The answer is 42, because six times seven is 42."},
					ImproveAfter: 2, Vote: "longest", Latency: 150 * time.Millisecond, ChunkDelay: 10 * time.Millisecond,
				}}},
			{ID: "skeptic", Backend: Backend{Type: "scripted", Model: "scripted-skeptic", Script: &Script{
				Answers: []string{"I doubt it is 41."}, Vote: "agent1", Reason: "agent1 shows its work",
				Thinking: "Let me check the arithmetic.", Faults: []Fault{{Kind: FaultFail, Call: 2}},
			}}},
			{ID: "judge", Backend: Backend{Type: "scripted", Model: "scripted", Script: &Script{
				Answers: []string{"Multi-line answer\nwith two lines.\n"}, Vote: "self", Final: "Final: 42.",
			}}},
		},
		Orchestrator: Orchestrator{VotingSensitivity: "balanced", AnswerNovelty: "strict", MaxNewAnswersPerAgent: 2,
			FinalAnswerStrategy: StrategyWinnerReuse, FailureBudget: 2, MaxCostUSD: 0.5, EndWhenDecided: true, LazyStartAgreement: 2,
			Fairness:         Fairness{Enabled: true, LeadCapAnswers: 2, MaxMidstreamInjectionsPerRound: 2},
			PersonaGenerator: PersonaGenerator{DiversityMode: "perspective"},
			Broadcast:        Broadcast{Sensitivity: "medium", ResponseDepth: "medium", Timeout: 300 * time.Second, WaitByDefault: true, MaxPerAgent: 10},
			Changedoc:        true,
			DSPy:             DefaultDSPy(),
			Checklist:        Checklist{RequireGapReport: true, GapReportMode: "changedoc", MaxCallsPerRound: 1}},
		UI: UI{DisplayType: "simple", LoggingEnabled: false},
		Timeouts: Timeouts{Orchestrator: 120 * time.Second, Agent: 30500 * time.Millisecond, Presentation: time.Minute,
			RoundGrace: 2 * time.Minute},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}
}

func TestLoad_JSON(t *testing.T) {
	cfg := mustLoad(t, "testdata/scripted_demo.json")
	if len(cfg.Agents) != 2 || cfg.Agents[1].Backend.Script.Faults[0] != (Fault{Kind: FaultFail, Call: 2}) {
		t.Errorf("agents = %+v", cfg.Agents)
	}
	if cfg.UI.DisplayType != "silent" || cfg.Orchestrator.MaxNewAnswersPerAgent != 0 || cfg.Timeouts.Orchestrator != 2*time.Minute {
		t.Errorf("settings = %+v %+v %+v", cfg.UI, cfg.Orchestrator, cfg.Timeouts)
	}
}

func TestParse_Defaults(t *testing.T) {
	cfg, rep := Parse("min.yml", []byte(okAgents))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	want := defaults()
	want.Path = "min.yml"
	want.Agents = []Agent{{ID: "a", Backend: Backend{Type: "scripted", Model: "scripted",
		Script: &Script{Answers: []string{"hi"}, Vote: "longest"}}}}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoad_MassGenShowcase_Implemented(t *testing.T) {
	implement(t, "gemini", "openai", "claude")
	cfg := mustLoad(t, "testdata/massgen_three_agents.yaml")
	var ids []string
	for _, a := range cfg.Agents {
		ids = append(ids, a.ID)
	}
	if diff := cmp.Diff([]string{"gemini_flash", "gpt5_nano", "claude_haiku"}, ids); diff != "" {
		t.Error(diff)
	}
	gpt := cfg.Agents[1].Backend
	wantParams := map[string]any{
		"reasoning": map[string]any{"effort": "low", "summary": "auto"},
		"text":      map[string]any{"verbosity": "medium"},
	}
	if diff := cmp.Diff(wantParams, gpt.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if gpt.Model != "gpt-5-nano" || gpt.BaseURL != "https://api.openai.com/v1" || gpt.Script != nil {
		t.Errorf("backend = %+v", gpt)
	}
	// MassGen's enable_* keys switch on each provider's own tools; OpenAI's code interpreter is
	// its code execution.
	var hosted []HostedTools
	for _, a := range cfg.Agents {
		hosted = append(hosted, a.Backend.Hosted)
	}
	if diff := cmp.Diff([]HostedTools{{WebSearch: true}, {WebSearch: true, CodeExecution: true}, {WebSearch: true, CodeExecution: true}}, hosted); diff != "" {
		t.Errorf("hosted tools (-want +got):\n%s", diff)
	}
	if o := cfg.Orchestrator; o.VotingSensitivity != "balanced" || o.AnswerNovelty != "balanced" || o.MaxNewAnswersPerAgent != 2 {
		t.Errorf("orchestrator = %+v", o)
	}
}

func TestLoad_MassGenShowcase_Scripted(t *testing.T) {
	cfg := mustLoad(t, "testdata/massgen_three_agents_scripted.yaml")
	if len(cfg.Agents) != 3 || cfg.Agents[1].Backend.Script.ImproveAfter != 3 ||
		cfg.Agents[2].Backend.Script.Vote != "agent2" || cfg.Agents[0].Backend.Model != "gemini-2.5-flash" {
		t.Errorf("agents = %+v", cfg.Agents)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %v", cfg.Warnings)
	}
}

func TestLoad_SingleAgent(t *testing.T) {
	implement(t, "gemini")
	cfg := mustLoad(t, "testdata/single_agent.yaml")
	a := cfg.Agents[0]
	if a.ID != "solo" || a.SystemMessage == "" || a.Backend.Params != nil || !a.Backend.Hosted.WebSearch || cfg.Timeouts.Orchestrator != 10*time.Minute {
		t.Errorf("config = %+v", cfg)
	}
}

func TestParse_ByteOrderMarkAndCRLF(t *testing.T) {
	for _, data := range []string{
		"\xef\xbb\xbf" + okAgents,
		"\xef\xbb\xbf{\"agents\": [{\"id\": \"a\", \"backend\": {\"type\": \"scripted\", \"answers\": [\"x\"]}}]}",
	} {
		if _, rep := Parse("bom.json", []byte(data)); !rep.OK() || len(rep.Warnings) != 0 {
			t.Errorf("Parse(%q):\n%s", data, rep.Text())
		}
	}
	_, rep := Parse("crlf.yaml", []byte(strings.ReplaceAll(okAgents+"ui:\n  display_type: simplee\n", "\n", "\r\n")))
	checkIssues(t, rep, []string{"E 5:17 ui.display_type | invalid display_type `simplee`"})
}

func TestParse_ParamsDecoded(t *testing.T) {
	implement(t, "openai", "chatcompletion")
	cfg, rep := Parse("p.yaml", []byte(`anchors: &common {temperature: 0.5}
agents:
  - id: a
    backend:
      type: openai
      <<: *common
      max_tokens: 100
      top_k: -3
      big: 18446744073709551615
      stop: ["a", 1, true, null, ~]
      extra_body: {nested: {list: [{k: v}]}}
      literal: |
        two
        lines
      tagged: !!str 12
  - id: b
    backend: {type: chatcompletion, model: llama, base_url: "http://localhost:11434/v1"}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	want := map[string]any{
		"temperature": 0.5,
		"max_tokens":  uint64(100),
		"top_k":       int64(-3),
		"big":         uint64(18446744073709551615),
		"stop":        []any{"a", uint64(1), true, nil, nil},
		"extra_body":  map[string]any{"nested": map[string]any{"list": []any{map[string]any{"k": "v"}}}},
		"literal":     "two\nlines\n",
		"tagged":      "12",
	}
	if diff := cmp.Diff(want, cfg.Agents[0].Backend.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if b := cfg.Agents[1].Backend; b.Model != "llama" || b.BaseURL != "http://localhost:11434/v1" || b.Params != nil {
		t.Errorf("backend b = %+v", b)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0].Location != "anchors" {
		t.Errorf("warnings = %v", rep.Warnings)
	}
}

func TestParse_BackendKeyTypoWarns(t *testing.T) {
	implement(t, "openai")
	cfg, rep := Parse("t.yaml", []byte(net("      modle: gpt-5\n      api_kye: sk-secret\n")))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	checkIssues(t, rep, []string{
		"W 5:7 agents[0].backend.modle | `modle` is passed to the provider as a request parameter | did you mean `model`?",
		"W 6:7 agents[0].backend.api_kye | passed to the provider | did you mean `api_key`?",
	})
	if cfg.Agents[0].Backend.Model != "gpt-5.4" {
		t.Errorf("default model not applied: %q", cfg.Agents[0].Backend.Model)
	}
}

func TestParse_APIKeyNeverInIssues(t *testing.T) {
	data, err := os.ReadFile("testdata/secret.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, rep := Parse("secret.yaml", data)
	if rep.OK() {
		t.Fatal("secret.yaml should not validate")
	}
	out := rep.Text() + string(rep.JSON()) + rep.Err().Error()
	if strings.Contains(out, "sk-secret") {
		t.Errorf("a secret leaked into the report:\n%s", out)
	}
	if !strings.Contains(out, "api_key must be a string") {
		t.Errorf("missing api_key type error:\n%s", out)
	}
}

func TestParse_APIKeyKept(t *testing.T) {
	implement(t, "openai")
	cfg, rep := Parse("k.yaml", []byte(net("      api_key: sk-live\n")))
	if !rep.OK() || cfg.Agents[0].Backend.APIKey != "sk-live" || cfg.Agents[0].Backend.Params != nil {
		t.Fatalf("%s %+v", rep.Text(), cfg)
	}
}

func TestLoad_Files(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"c.yaml", "c.yml", "c.json", "C.YAML"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(okAgents), 0o600); err != nil {
			t.Fatal(err)
		}
		mustLoad(t, p)
	}
	p := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(p, []byte(okAgents), 0o600); err != nil {
		t.Fatal(err)
	}
	_, rep := Load(p)
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "unsupported config file type `.toml`") {
		t.Errorf("toml: %s", rep.Text())
	}
	missing := filepath.Join(dir, "nope.yaml")
	_, rep = Load(missing)
	if len(rep.Errors) != 1 || rep.Errors[0].Message != "config file not found: "+missing {
		t.Errorf("missing file: %s", rep.Text())
	}
	for _, data := range []string{"", "  \n", "# only a comment\n", "---\n"} {
		_, rep = Parse("e.yaml", []byte(data))
		if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "config file is empty") {
			t.Errorf("Parse(%q): %s", data, rep.Text())
		}
	}
}

func TestParse_ExpansionBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("agents:\n  - id: a\n    backend: {type: openai, bomb: *l9}\n")
	implement(t, "openai")
	start := time.Now()
	_, rep := Parse("bomb.yaml", []byte(b.String()))
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if !strings.Contains(rep.Text(), "expands to too many values") {
		t.Errorf("no expansion error:\n%s", rep.Text())
	}
}

func TestParse_DeepNesting(t *testing.T) {
	implement(t, "openai")
	flow := "agents: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n"
	_, rep := Parse("deep.yaml", []byte(flow))
	checkIssues(t, rep, []string{"E 1:1009  | brackets are nested more than 1000 levels deep"})

	var b strings.Builder
	b.WriteString("agents:\n  - id: a\n    backend:\n      type: openai\n      x:\n")
	for i := range 300 {
		b.WriteString(strings.Repeat(" ", 8+i) + "-\n")
	}
	_, rep = Parse("deep.yaml", []byte(b.String()))
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "nested more than 200 levels deep") {
		t.Errorf("block nesting:\n%s", rep.Text())
	}
}

func TestQuickAgent(t *testing.T) {
	if _, rep := QuickAgent("openai", "gpt-5", "", ""); !rep.OK() {
		t.Fatal(rep.Text())
	}
	_, rep := QuickAgent("ag2", "", "", "")
	checkIssues(t, rep, []string{"E 0:0 agents[0].backend.type | backend type `ag2` is not supported yet"})

	_, rep = QuickAgent("openi", "", "", "")
	checkIssues(t, rep, []string{"E 0:0 agents[0].backend.type | unknown backend type `openi` | did you mean `openai`?"})

	_, rep = QuickAgent("", "", "", "")
	checkIssues(t, rep, []string{"E 0:0 agents[0].backend | missing required key `type`"})

	_, rep = QuickAgent("vllm", "", "", "")
	checkIssues(t, rep, []string{"E 0:0 agents[0].backend | missing required key `model`"})

	implement(t, "openai", "chatcompletion")
	cfg, rep := QuickAgent("openai", "", "", "Be \"brief\".\n\tOK: yes # not a comment")
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	want := []Agent{{ID: "agent1", SystemMessage: "Be \"brief\".\n\tOK: yes # not a comment",
		Backend: Backend{Type: "openai", Model: "gpt-5.4", BaseURL: "https://api.openai.com/v1"}}}
	if diff := cmp.Diff(want, cfg.Agents); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	cfg, rep = QuickAgent("chatcompletion", "m: x", "http://h/v1", "")
	if !rep.OK() || cfg.Agents[0].Backend.Model != "m: x" || cfg.Agents[0].Backend.BaseURL != "http://h/v1" {
		t.Fatalf("%s %+v", rep.Text(), cfg)
	}
}

func TestReport_JSON(t *testing.T) {
	_, rep := Parse("r.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], vote: x}\nextra: 1\n"))
	var got map[string]any
	if err := json.Unmarshal(rep.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"valid": false, "error_count": 1.0, "warning_count": 1.0,
		"errors": []any{map[string]any{
			"message": "invalid vote `x`", "location": "agents[0].backend.vote",
			"suggestion": "use longest, first, last, self or an agent label such as agent2",
			"file":       "r.yaml", "line": 3.0, "column": 52.0,
		}},
		"warnings": []any{map[string]any{
			"message": "unknown top-level key `extra` is ignored", "location": "extra",
			"suggestion": "keys this build runs: agents, agent, orchestrator, ui, timeout_settings, session_id, memory, filesystem_memory, permissions",
			"file":       "r.yaml", "line": 4.0, "column": 1.0,
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	_, rep = Parse("ok.yaml", []byte(okAgents))
	if err := json.Unmarshal(rep.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"valid": true, "error_count": 0.0, "warning_count": 0.0, "errors": []any{}, "warnings": []any{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("valid report (-want +got):\n%s", diff)
	}
	_, rep = Load(filepath.Join(t.TempDir(), "gone.yaml"))
	if err := json.Unmarshal(rep.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	if e := got["errors"].([]any)[0].(map[string]any); e["line"] != 0.0 || e["location"] != "" {
		t.Errorf("missing-file issue = %v", e)
	}
}

func TestReport_TextAndErr(t *testing.T) {
	_, rep := Parse("r.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], vote: x, improve_after: -1}\nextra: 1\n"))
	wantText := "error: r.yaml:3:52: agents[0].backend.vote: invalid vote `x` (use longest, first, last, self or an agent label such as agent2)\n" +
		"error: r.yaml:3:70: agents[0].backend.improve_after: improve_after must not be negative (use 0 to improve as soon as there is a next answer)\n" +
		"warning: r.yaml:4:1: extra: unknown top-level key `extra` is ignored (keys this build runs: agents, agent, orchestrator, ui, timeout_settings, session_id, memory, filesystem_memory, permissions)\n" +
		"Configuration is invalid: 2 errors, 1 warning.\n"
	if diff := cmp.Diff(wantText, rep.Text()); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
	err := rep.Err()
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || lines[0] != "r.yaml:3:52: agents[0].backend.vote: invalid vote `x` (use longest, first, last, self or an agent label such as agent2)" {
		t.Errorf("Err() = %q", err)
	}
	var is Issue
	if !errors.As(err, &is) || is.Location != "agents[0].backend.vote" {
		t.Errorf("errors.As: %+v", is)
	}

	_, rep = Parse("ok.yaml", []byte(okAgents+"extra: 1\n"))
	if rep.Err() != nil || !rep.OK() || !strings.HasSuffix(rep.Text(), "\nConfiguration is valid!\n") {
		t.Errorf("valid: %v %q", rep.Err(), rep.Text())
	}
	if got := (Issue{Message: "m"}).String(); got != "m" {
		t.Errorf("bare issue = %q", got)
	}
}

func TestLoad_InvalidGolden(t *testing.T) {
	checkGolden(t, "testdata/invalid_mixed.yaml", "testdata/invalid_mixed.golden")
}

// A typical MassGen v0.1.9x config: every feature this build lacks is named, the rest runs.
func TestLoad_TypicalV09xGolden(t *testing.T) {
	checkGolden(t, "testdata/massgen_v09x_typical.yaml", "testdata/massgen_v09x_typical.golden")
}

func checkGolden(t *testing.T, config, golden string) {
	t.Helper()
	_, rep := Load(config)
	got := rep.Text()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

func TestBackendTypes_Table(t *testing.T) {
	for name, bt := range BackendTypes {
		if bt.Name != name {
			t.Errorf("%s: Name %q", name, bt.Name)
		}
		switch bt.Protocol {
		case ProtocolResponses, ProtocolChat, ProtocolMessages, ProtocolGemini, ProtocolScripted, ProtocolCLI, ProtocolOther:
		default:
			t.Errorf("%s: protocol %q", name, bt.Protocol)
		}
		if bt.Implemented == bt.Refused {
			t.Errorf("%s: Implemented = %v", name, bt.Implemented)
		}
		if bt.Refused && bt.Implemented {
			t.Errorf("%s: both refused and implemented", name)
		}
		if bt.Protocol == ProtocolChat && bt.DefaultBaseURL == "" && bt.BaseURLEnv == "" && !bt.Refused {
			t.Errorf("%s: chat type without a base URL, nor a variable naming one", name)
		}
	}
	for _, name := range []string{"chatcompletion", "lmstudio", "vllm", "sglang", "openrouter", "poe", "inference"} {
		if BackendTypes[name].DefaultModel != CustomModel {
			t.Errorf("%s: model should be required", name)
		}
	}
	if d := BackendTypes["deepseek"]; d.DefaultBaseURL != "https://api.deepseek.com/v1" || d.APIKeyEnv[0] != "DEEPSEEK_API_KEY" {
		t.Errorf("deepseek = %+v", d)
	}
	if o := BackendTypes["ollama"]; o.DefaultBaseURL != "http://localhost:11434/v1" || o.APIKeyEnv != nil {
		t.Errorf("ollama = %+v", o)
	}
	if names := allBackendTypeNames(); names[0] != "scripted" || len(names) != len(BackendTypes) {
		t.Errorf("names = %v", names)
	}
	// Messages offer only the types this build runs.
	for _, n := range BackendTypeNames() {
		if !BackendTypes[n].Implemented {
			t.Errorf("BackendTypeNames lists %s, which is not implemented", n)
		}
	}
	for name, bt := range BackendTypes {
		if bt.Refused && bt.Instead == "" {
			t.Errorf("%s is refused without saying what to use instead", name)
		}
	}
}

func TestClosest(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"agens", "agents"}, {"agnets", "agents"}, {"Agents", "agents"}, {"orchestator", "orchestrator"},
		{"timeout", "timeout_settings"}, {"x", ""}, {"display", ""}, {"uii", "ui"},
	} {
		if got := suggest.Closest(tc.in, sections()[secRoot].names); got != tc.want {
			t.Errorf("suggest.Closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParse_PlanningMode(t *testing.T) {
	cfg, rep := Parse("p.yaml", []byte(okAgents+"orchestrator:\n  coordination:\n    enable_planning_mode: true\n    planning_mode_instruction: Plan only.\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	if o := cfg.Orchestrator; !o.PlanningMode || o.PlanningInstruction != "Plan only." {
		t.Errorf("orchestrator = %+v", o)
	}
}

// The JSON report is read by people and scripts: a message quoting what the file wrote keeps
// its < and > (and &) as written, not \u003c escapes.
func TestReport_JSONIsNotHTMLEscaped(t *testing.T) {
	_, rep := Parse("r.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n\"<b>&\": 1\n"))
	out := string(rep.JSON())
	if !strings.Contains(out, "<b>&") || strings.Contains(out, `\u003c`) || strings.Contains(out, `\u0026`) {
		t.Errorf("report:\n%s", out)
	}
	if s := string(SchemaJSON()); strings.Contains(s, `\u003c`) || strings.Contains(s, `\u003e`) || strings.Contains(s, `\u0026`) {
		t.Error("the schema JSON has HTML escapes")
	}
}
