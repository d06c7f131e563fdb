package durable

import (
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

// The orchestrator's own subagents (the round evaluator, criteria_mode's emerging criteria and
// their critic, verifiers with subagent: true) run on Temporal: every key of theirs travels to
// the workers as written.
func TestEncode_CarriesTheOrchestratorsSubagents(t *testing.T) {
	const gated = "orchestrator:\n  voting_sensitivity: checklist_gated\n  coordination:\n    enable_subagents: true\n"
	for _, tc := range []struct{ name, agents, orch string }{
		{"round evaluator", "  - {id: a, backend: {type: scripted, answers: [x]}}\n", gated +
			"    subagent_types: [round_evaluator]\n    round_evaluator_before_checklist: true\n    orchestrator_managed_round_evaluator: true\n" +
			"    round_evaluator_refine: true\n    round_evaluator_transformation_pressure: gentle\n"},
		{"criteria critic", "  - {id: a, backend: {type: scripted, answers: [x]}}\n  - {id: b, backend: {type: scripted, answers: [y]}}\n",
			gated + "    criteria_mode: bootstrap_subagent\n    bootstrap_max_total: 0\n"},
		{"inline criteria", "  - {id: a, backend: {type: scripted, answers: [x]}}\n",
			"orchestrator:\n  voting_sensitivity: checklist_gated\n  coordination: {criteria_mode: bootstrap_inline, bootstrap_max_per_agent_per_round: 2, bootstrap_max_total: 7}\n"},
		{"verifier subagent", "  - {id: a, backend: {type: scripted, answers: [x]}}\n",
			"orchestrator:\n  verifiers: [{aspect: correctness, subagent: true}]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := config.Parse("c.yaml", []byte("agents:\n"+tc.agents+tc.orch))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			if err := Supported(cfg); err != nil {
				t.Fatalf("Supported = %v", err)
			}
			sentBack(t, cfg)
		})
	}
}
