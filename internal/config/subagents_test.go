package config

import (
	"strings"
	"testing"
	"time"
)

// MassGen's documented subagent settings (docs/source/user_guide/subagents.rst) load into
// Subagents; what this build does not run is refused by name.
func TestParse_Subagents(t *testing.T) {
	const agents = "agents:\n  - {id: a, backend: {type: openai, model: gpt-5-mini}}\n"
	cfg, rep := Parse("c.yaml", []byte(agents+`orchestrator:
  coordination:
    enable_subagents: true
    subagent_default_timeout: 300
    subagent_min_timeout: 60
    subagent_max_timeout: 600
    subagent_max_concurrent: 3
    subagent_runtime_mode: isolated
    subagent_types: [evaluator, explorer, researcher, novelty]
    background_subagents: {enabled: false}
`))
	if !rep.OK() || len(rep.Warnings) != 0 {
		t.Fatal(rep.Text())
	}
	want := Subagents{Enabled: true, DefaultTimeout: 300 * time.Second, MinTimeout: 60 * time.Second, MaxTimeout: 600 * time.Second,
		MaxConcurrent: 3, RuntimeMode: "isolated", NoBackground: true, Types: []string{"evaluator", "explorer", "researcher", "novelty"}}
	got := cfg.Orchestrator.Subagents
	if got.Enabled != want.Enabled || got.DefaultTimeout != want.DefaultTimeout || got.MaxTimeout != want.MaxTimeout ||
		got.MaxConcurrent != 3 || !got.NoBackground || strings.Join(got.Types, ",") != strings.Join(want.Types, ",") {
		t.Errorf("Subagents = %+v, want %+v", got, want)
	}
	cfg, _ = Parse("c.yaml", []byte(agents+"orchestrator: {coordination: {enable_subagents: true}}\n"))
	if s := cfg.Orchestrator.Subagents; s.NoBackground || s.Types != nil {
		t.Errorf("defaults: %+v, want background on and the default types", s)
	}
	for yaml, want := range map[string]string{
		"subagent_runtime_mode: delegated":                             "`subagent_runtime_mode: delegated` is not supported yet",
		"subagent_orchestrator: {enabled: true, agents: []}":           "`subagent_orchestrator` is not supported yet",
		"subagent_types: [execution_trace_analyzer]":                   "subagent type `execution_trace_analyzer` is not supported yet",
		"subagent_max_concurrent: 20":                                  "between 1 and 8",
		"subagent_round_timeouts: {initial_round_timeout_seconds: 60}": "subagent_round_timeouts",
		"criteria_mode: bootstrap_subagent":                            "`criteria_mode: bootstrap_subagent` needs checklist-gated voting",
		"async_subagents: true":                                        "MassGen removed it",
	} {
		_, rep := Parse("c.yaml", []byte(agents+"orchestrator:\n  coordination:\n    enable_subagents: true\n    "+yaml+"\n"))
		if rep.OK() || !strings.Contains(rep.Text(), want) {
			t.Errorf("%s: got %s, want an error containing %q", yaml, rep.Text(), want)
		}
	}
}
