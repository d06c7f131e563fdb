package durable

import "massgen/internal/config"

// bootstrapDoc writes the keys of emerging criteria (criteria_mode) and of the round
// evaluator into coord: the workflow's coordinator keeps the criteria, and the worker
// holding the session runs the critic and the evaluator.
func bootstrapDoc(coord obj, o config.Orchestrator) {
	c := o.Checklist
	putStr(coord, "criteria_mode", c.CriteriaMode)
	if c.BootstrapMaxPerAgentPerRound != nil {
		coord["bootstrap_max_per_agent_per_round"] = *c.BootstrapMaxPerAgentPerRound
	}
	if c.BootstrapMaxTotal != nil {
		coord["bootstrap_max_total"] = *c.BootstrapMaxTotal
	}
	re := o.RoundEvaluator
	if re.BeforeChecklist {
		coord["round_evaluator_before_checklist"] = true
	}
	if re.Managed {
		coord["orchestrator_managed_round_evaluator"] = true
	}
	if re.Refine {
		coord["round_evaluator_refine"] = true
	}
	putStr(coord, "round_evaluator_transformation_pressure", re.Pressure)
}
