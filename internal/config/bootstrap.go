package config

import (
	"fmt"
	"slices"
)

// checkBootstrap checks criteria_mode and the round evaluator against what they need, once
// the whole file is read: both work through submit_checklist, and the round evaluator is a
// subagent with MassGen's constraints (one parent agent, round_evaluator offered).
func (w *walker) checkBootstrap(t *target, agents int) {
	o := &t.cfg.Orchestrator
	gated := o.VotingSensitivity == "checklist_gated"
	if f := t.criteriaModeF; f != nil && o.Checklist.Bootstrapping() {
		if !gated {
			w.errf(*f, "set `orchestrator.voting_sensitivity: checklist_gated`, or remove criteria_mode",
				"`criteria_mode: %s` needs checklist-gated voting: emerging criteria join submit_checklist's list", o.Checklist.CriteriaMode)
		}
		if o.Decomposing() {
			w.errf(*f, "remove criteria_mode, or use `coordination_mode: voting`", "`criteria_mode` does not apply in decomposition mode")
		}
	}
	re := &o.RoundEvaluator
	f := t.evaluatorF
	if f == nil || !re.BeforeChecklist {
		return
	}
	var missing []string
	if !re.Managed {
		missing = append(missing, "`orchestrator_managed_round_evaluator: true` (this build runs the evaluator only from the orchestrator)")
	}
	if agents != 1 {
		missing = append(missing, fmt.Sprintf("exactly one agent (there are %d)", agents))
	}
	if !gated {
		missing = append(missing, "`orchestrator.voting_sensitivity: checklist_gated`")
	}
	if !o.Subagents.Enabled {
		missing = append(missing, "`enable_subagents: true`")
	} else if !slices.Contains(o.Subagents.Types, "round_evaluator") {
		missing = append(missing, "`round_evaluator` in subagent_types")
	}
	if len(missing) > 0 {
		w.errf(*f, "set "+joinAnd(missing), "`round_evaluator_before_checklist: true` needs what MassGen requires of it")
		return
	}
	re.Enabled = true
}

func joinAnd(items []string) string {
	switch len(items) {
	case 1:
		return items[0]
	case 2:
		return items[0] + " and " + items[1]
	}
	s := ""
	for k, it := range items {
		switch {
		case k == len(items)-1:
			s += ", and " + it
		case k > 0:
			s += ", " + it
		default:
			s = it
		}
	}
	return s
}
