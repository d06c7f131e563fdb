package config

import (
	"strings"
	"testing"
)

// criteria_mode and the round evaluator load with MassGen's names and are checked against
// what they need; what this build cannot do is refused by name.
func TestParse_BootstrapAndRoundEvaluator(t *testing.T) {
	const one = "agents:\n  - {id: a, backend: {type: scripted, answers: [x]}}\n"
	const two = one + "  - {id: b, backend: {type: scripted, answers: [y]}}\n"
	const gated = "orchestrator:\n  voting_sensitivity: checklist_gated\n  coordination:\n"
	const evaluator = "    enable_subagents: true\n    subagent_types: [round_evaluator]\n" +
		"    round_evaluator_before_checklist: true\n    orchestrator_managed_round_evaluator: true\n"
	cases := []struct {
		name, yaml, err string
		check           func(t *testing.T, c *Config)
	}{
		{name: "inline with caps", yaml: two + gated + "    criteria_mode: bootstrap_inline\n    bootstrap_max_per_agent_per_round: 2\n    bootstrap_max_total: 5\n",
			check: func(t *testing.T, c *Config) {
				ck := c.Orchestrator.Checklist
				if ck.CriteriaMode != CriteriaBootstrapInline || *ck.BootstrapMaxPerAgentPerRound != 2 || *ck.BootstrapMaxTotal != 5 {
					t.Errorf("checklist = %+v", ck)
				}
			}},
		{name: "subagent", yaml: two + gated + "    criteria_mode: bootstrap_subagent\n",
			check: func(t *testing.T, c *Config) {
				if !c.Orchestrator.Checklist.Bootstrapping() {
					t.Error("not bootstrapping")
				}
			}},
		{name: "inline needs the gate", yaml: two + "orchestrator:\n  coordination:\n    criteria_mode: bootstrap_inline\n",
			err: "needs checklist-gated voting"},
		{name: "evaluator", yaml: one + gated + evaluator + "    round_evaluator_refine: true\n    round_evaluator_transformation_pressure: aggressive\n",
			check: func(t *testing.T, c *Config) {
				re := c.Orchestrator.RoundEvaluator
				if !re.Enabled || !re.Refine || re.Pressure != "aggressive" {
					t.Errorf("round evaluator = %+v", re)
				}
			}},
		{name: "evaluator with two agents", yaml: two + gated + evaluator, err: "exactly one agent (there are 2)"},
		{name: "evaluator not managed", yaml: one + gated + "    enable_subagents: true\n    subagent_types: [round_evaluator]\n    round_evaluator_before_checklist: true\n",
			err: "orchestrator_managed_round_evaluator: true"},
		{name: "evaluator not offered", yaml: one + gated + "    enable_subagents: true\n    round_evaluator_before_checklist: true\n    orchestrator_managed_round_evaluator: true\n",
			err: "`round_evaluator` in subagent_types"},
		{name: "evaluator without the gate", yaml: one + "orchestrator:\n  coordination:\n" + evaluator, err: "voting_sensitivity: checklist_gated"},
		{name: "skip synthesis", yaml: one + gated + evaluator + "    round_evaluator_skip_synthesis: true\n", err: "`round_evaluator_skip_synthesis: true` is not supported yet"},
		{name: "quality rethink", yaml: one + gated + evaluator + "    enable_quality_rethink_on_iteration: true\n", err: "quality_rethinking subagent type is not built"},
		{name: "agents may spawn it", yaml: one + "orchestrator:\n  coordination:\n    enable_subagents: true\n    subagent_types: [round_evaluator, critic]\n",
			check: func(t *testing.T, c *Config) {
				if c.Orchestrator.RoundEvaluator.Enabled {
					t.Error("the orchestrator's evaluator is on")
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := Parse("c.yaml", []byte(tc.yaml))
			if tc.err != "" {
				if rep.OK() || !strings.Contains(rep.Text(), tc.err) {
					t.Fatalf("got %s, want an error containing %q", rep.Text(), tc.err)
				}
				return
			}
			if !rep.OK() || len(rep.Warnings) != 0 {
				t.Fatal(rep.Text())
			}
			tc.check(t, cfg)
		})
	}
}
