package config

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Decomposition mode's checks: the vote settings it has no use for are refused by name (a
// stop is not a vote), and subtasks are checked against the mode once every agent is read.

// decompositionAfter refuses, in decomposition mode, the orchestrator keys that are about votes.
func decompositionAfter(w *walker, t *target, present map[string]field) {
	o := &t.cfg.Orchestrator
	if !o.Decomposing() {
		return
	}
	refuse := func(key string, on bool, why string) {
		if g, ok := present[key]; ok && on {
			w.errf(g, fmt.Sprintf("remove `%s`, or use `coordination_mode: voting`", key),
				"`%s` does not apply in decomposition mode: %s", key, why)
		}
	}
	refuse("skip_voting", o.SkipVoting, "there is no vote; agents signal their part done with stop")
	refuse("defer_voting_until_all_answered", o.DeferVotingUntilAllAnswered, "there is no vote to defer; agents signal their part done with stop")
	refuse("lazy_start_agents", o.LazyStartAgents > 0, "every agent owns a part, so every agent must start")
	refuse("voting_sensitivity", o.VotingSensitivity == "checklist_gated",
		"a checklist-gated stop is not built; use checklist or checklist_scored, which put the criteria in the prompt")
	if g, ok := present["final_answer_strategy"]; ok && o.FinalAnswerStrategy == StrategyWinnerReuse {
		w.warnAt(g.loc, "`final_answer_strategy: winner_reuse` is not used in decomposition mode: the presenter always integrates the parts",
			"remove it", g.keyN)
	}
	if g, ok := present["skip_final_presentation"]; ok && o.FinalAnswerStrategy == StrategyWinnerReuse {
		w.warnAt(g.loc, "`skip_final_presentation` is not used in decomposition mode: the presenter always integrates the parts",
			"remove it", g.keyN)
	}
}

// checkDecomposition checks the agents' subtasks against the coordination mode.
func (w *walker) checkDecomposition(t *target, defs []agentDef) {
	if !t.cfg.Orchestrator.Decomposing() {
		for _, d := range defs {
			if f := d.subtaskF; f != nil {
				w.warnAt(f.loc, "`subtask` has no effect: orchestrator.coordination_mode is not decomposition",
					"set `orchestrator.coordination_mode: decomposition`, or remove the subtask", f.keyN)
			}
		}
		return
	}
	var without []string
	for _, d := range defs {
		if f := d.subtaskF; f != nil && strings.TrimSpace(d.agent.Subtask) == "" {
			w.errf(*f, "describe the agent's part of the task, or remove the key to let the task decomposer assign one",
				"`subtask` is empty")
		}
		if d.subtaskF == nil {
			without = append(without, d.agent.ID)
		}
	}
	if len(without) == 0 || len(defs) == 0 {
		return
	}
	loc, at := "orchestrator.coordination_mode", []ast.Node(nil)
	if t.modeF != nil {
		loc, at = t.modeF.loc, []ast.Node{t.modeF.raw, t.modeF.keyN}
	}
	how := "the task decomposer assigns them one, in one call to the first agent's model before coordination"
	if t.cfg.Orchestrator.TaskDecomposer.Disabled {
		how = "the task decomposer is disabled, so they split the work among themselves from the task alone"
	}
	w.warnAt(loc, fmt.Sprintf("decomposition mode: %s %s no subtask; %s", strings.Join(quoteAll(without), ", "), hasHave(len(without)), how),
		"give each agent a `subtask:` to control the split", at...)
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}
