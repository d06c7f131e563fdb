package durable

import (
	"strings"
	"testing"

	"massgen/internal/config"
)

// The agents' subagents run on the worker that holds the session: every subagent key travels
// to the workers as written, defaults (nil types) and an empty list of types apart.
func TestEncode_CarriesSubagents(t *testing.T) {
	const agents = "agents:\n  - {id: a, backend: {type: scripted, answers: [hi]}}\n"
	for _, coord := range []string{
		"{enable_subagents: true}",
		"{enable_subagents: true, subagent_default_timeout: 90, subagent_min_timeout: 30, subagent_max_timeout: 700, subagent_max_concurrent: 5, " +
			"background_subagents: {enabled: false}, subagent_types: [critic, explorer], subagent_runtime_mode: inherited}",
		"{enable_subagents: true, subagent_types: []}",
	} {
		cfg, rep := config.Parse("c.yaml", []byte(agents+"orchestrator: {coordination: "+coord+"}\n"))
		if !rep.OK() {
			t.Fatal(rep.Text())
		}
		doc, err := Encode(cfg)
		if err != nil {
			t.Fatalf("%s: %v", coord, err)
		}
		back, err := DecodeConfig(doc)
		if err != nil {
			t.Fatal(err)
		}
		if d := firstDifference(comparable(cfg), comparable(back)); d != "" || !back.Orchestrator.Subagents.Enabled {
			t.Errorf("%s: %s differs after the trip (%+v)", coord, d, back.Orchestrator.Subagents)
		}
	}
}

// The orchestrator's own subagents (the round evaluator, criteria_mode: bootstrap_subagent's
// critic, verifiers with subagent: true) live in the engine's session, which the workflow's
// activities do not carry: each stays refused by its own key, with the agents' subagents on.
func TestSupported_RefusesTheOrchestratorsSubagents(t *testing.T) {
	const gated = "orchestrator:\n  voting_sensitivity: checklist_gated\n  coordination:\n    enable_subagents: true\n"
	for _, tc := range []struct{ name, agents, orch, want string }{
		{"round evaluator", "  - {id: a, backend: {type: scripted, answers: [x]}}\n", gated +
			"    subagent_types: [round_evaluator]\n    round_evaluator_before_checklist: true\n    orchestrator_managed_round_evaluator: true\n",
			"orchestrator.coordination.round_evaluator_before_checklist"},
		{"criteria critic", "  - {id: a, backend: {type: scripted, answers: [x]}}\n  - {id: b, backend: {type: scripted, answers: [y]}}\n",
			gated + "    criteria_mode: bootstrap_subagent\n", "criteria_mode: bootstrap_subagent"},
		{"verifier subagent", "  - {id: a, backend: {type: scripted, answers: [x]}}\n",
			"orchestrator:\n  coordination: {enable_subagents: true}\n  verifiers: [{aspect: correctness, subagent: true}]\n", "orchestrator.verifiers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := config.Parse("c.yaml", []byte("agents:\n"+tc.agents+tc.orch))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			err := Supported(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "enable_subagents") {
				t.Errorf("Supported = %v, want a refusal naming %s and not enable_subagents", err, tc.want)
			}
		})
	}
}
