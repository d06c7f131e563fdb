package config

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/goccy/go-yaml/ast"
)

var (
	orchestratorKeys = []string{"voting_sensitivity", "answer_novelty_requirement", "max_new_answers_per_agent",
		"final_presentation", "failure_budget", "max_cost_usd", "skip_coordination_rounds", "debug_final_answer",
		"coordination", "timeout", "session_storage", "dspy", "context_paths", "snapshot_storage",
		"agent_temporary_workspace", "max_response_chars", "max_tool_calls_per_response", "max_answer_chars"}
	coordinationKeys = []string{"enable_planning_mode", "planning_mode_instruction", "max_orchestration_restarts",
		"enable_agent_task_planning", "max_tasks_per_plan", "task_planning_filesystem_mode",
		"enable_memory_filesystem_mode", "use_skills", "massgen_skills", "skills_directory"}
	uiKeys       = []string{"display_type", "logging_enabled", "use_orchestrator_for_single_agent"}
	timeoutKeys  = []string{"orchestrator_timeout_seconds", "agent_timeout_seconds", "presentation_timeout_seconds"}
	sensitivity  = []string{"lenient", "balanced", "strict"}
	presentation = []string{"regenerate", "verbatim"}
	displayTypes = []string{"rich_terminal", "simple", "terminal", "silent"}
)

// notYet refuses a MassGen feature this build does not have yet.
func (w *walker) notYet(f field, what string) {
	w.errKey(f, "remove it; this build cannot do it yet", "%s is not supported yet", what)
}

// offOnly accepts a boolean feature switch only when it is off.
func (w *walker) offOnly(f field) {
	if on, ok := w.boolean(f); ok && on {
		w.errKey(f, "remove it or set it to false", "`%s: true` is not supported yet", f.key)
	}
}

// emptyOnly accepts a feature key only when it is unset or empty.
func (w *walker) emptyOnly(f field) {
	if !empty(f.val) {
		w.notYet(f, fmt.Sprintf("`%s`", f.key))
	}
}

func (w *walker) orchestrator(f field, o *Orchestrator) {
	fields, _ := w.mapping(f, 1)
	for _, e := range fields {
		g := child(f.loc, e)
		switch g.key {
		case "voting_sensitivity":
			if s, ok := w.enum(g, sensitivity); ok {
				o.VotingSensitivity = s
			}
		case "answer_novelty_requirement":
			if s, ok := w.enum(g, sensitivity); ok {
				o.AnswerNovelty = s
			}
		case "final_presentation":
			if s, ok := w.enum(g, presentation); ok {
				o.FinalAnswerStrategy = map[string]string{"regenerate": StrategyWinnerPresent, "verbatim": StrategyWinnerReuse}[s]
			}
		case "max_new_answers_per_agent":
			if n, ok := w.integer(g); ok {
				if n < 1 {
					w.errf(g, "use 1 or more, or null for no limit", "max_new_answers_per_agent must be at least 1")
				} else {
					o.MaxNewAnswersPerAgent = n
				}
			}
		case "max_response_chars":
			w.positive(g, DefaultMaxResponseChars, &o.MaxResponseChars)
		case "max_tool_calls_per_response":
			w.positive(g, DefaultMaxToolCallsPerResponse, &o.MaxToolCallsPerResponse)
		case "max_answer_chars":
			w.positive(g, DefaultMaxAnswerChars, &o.MaxAnswerChars)
		case "failure_budget":
			if n, ok := w.integer(g); ok {
				if n < 1 {
					w.errf(g, "use 1 or more (default 3)", "failure_budget must be at least 1")
				} else {
					o.FailureBudget = n
				}
			}
		case "max_cost_usd":
			if x, ok := w.number(g); ok {
				if x < 0 {
					w.errf(g, "use 0 for no limit or a positive amount in US dollars", "max_cost_usd must not be negative")
				} else {
					o.MaxCostUSD = x
				}
			}
		case "skip_coordination_rounds":
			o.SkipCoordinationRounds, _ = w.boolean(g)
		case "debug_final_answer":
			w.stringOrBool(g)
		case "coordination":
			w.coordination(g, o)
		case "timeout":
			w.orchestratorTimeout(g)
		case "session_storage":
			w.warnAt(g.loc, "`session_storage` is ignored", "sessions are always stored under .massgen/sessions", g.keyN)
		case "dspy":
			w.dspy(g)
		case "context_paths":
			o.ContextPaths = w.contextPaths(g)
		case "snapshot_storage", "agent_temporary_workspace":
			w.str(g) // accepted for compatibility: every run gets its own folders
		default:
			w.errKey(g, didYouMean(g.key, orchestratorKeys), "unknown orchestrator key `%s`", clip(g.key))
		}
	}
	if resp := cmp.Or(o.MaxResponseChars, DefaultMaxResponseChars); o.MaxAnswerChars > resp {
		// The answer travels in the response's tool-call arguments, which the response cap cuts first.
		w.warnAt(f.loc, fmt.Sprintf("max_answer_chars (%d) is above max_response_chars (%d): a response carrying such an answer is cut off first", o.MaxAnswerChars, resp),
			fmt.Sprintf("raise max_response_chars to at least %d", o.MaxAnswerChars+o.MaxAnswerChars/4), f.keyN)
	}
	if o.PlanningMode && o.FinalAnswerStrategy == StrategyWinnerReuse {
		// The held-back tools run only in the winner's presentation, which verbatim skips.
		w.warnAt(f.loc, "planning mode with final_presentation: verbatim never carries the plan out",
			"use final_presentation: regenerate, so that the winner runs the tools held back", f.keyN)
	}
}

// positive reads a cap that must be at least 1 into dst.
func (w *walker) positive(f field, def int, dst *int) {
	if n, ok := w.integer(f); ok {
		if n < 1 {
			w.errf(f, fmt.Sprintf("use 1 or more (default %d)", def), "%s must be at least 1", f.key)
		} else {
			*dst = n
		}
	}
}

func (w *walker) stringOrBool(f field) {
	switch f.val.(type) {
	case nil, *ast.StringNode, *ast.LiteralNode, *ast.BoolNode:
		return
	}
	w.errf(f, "", "%s must be a string or a boolean, not %s", f.key, kind(f.val))
}

func (w *walker) dspy(f field) {
	fields, _ := w.mapping(f, 1)
	for _, e := range fields {
		if e.key == "enabled" {
			g := child(f.loc, e)
			if on, ok := w.boolean(g); ok && on {
				w.errKey(g, "remove the dspy block or set enabled: false", "`dspy` is not supported yet")
			}
		}
	}
}

func (w *walker) coordination(f field, o *Orchestrator) {
	fields, _ := w.mapping(f, 1)
	for _, e := range fields {
		g := child(f.loc, e)
		switch g.key {
		case "enable_planning_mode":
			o.PlanningMode, _ = w.boolean(g)
		case "planning_mode_instruction":
			o.PlanningInstruction, _ = w.str(g)
		case "enable_agent_task_planning", "enable_memory_filesystem_mode", "use_skills":
			w.offOnly(g)
		case "task_planning_filesystem_mode":
			w.boolean(g)
		case "max_orchestration_restarts":
			if n, ok := w.integer(g); ok {
				switch {
				case n < 0:
					w.errf(g, "use 0 (no restarts)", "max_orchestration_restarts must not be negative")
				case n > 0:
					w.errKey(g, "remove it or set it to 0", "orchestration restarts (`max_orchestration_restarts: %d`) are not supported yet", n)
				}
			}
		case "max_tasks_per_plan":
			if n, ok := w.integer(g); ok && n < 1 {
				w.errf(g, "use 1 or more", "max_tasks_per_plan must be at least 1")
			}
		case "skills_directory":
			w.str(g)
		case "massgen_skills":
			w.strList(g)
		default:
			w.errKey(g, didYouMean(g.key, coordinationKeys), "unknown coordination key `%s`", clip(g.key))
		}
	}
}

func (w *walker) orchestratorTimeout(f field) {
	fields, _ := w.mapping(f, 1)
	for _, e := range fields {
		g := child(f.loc, e)
		if g.key != "orchestrator_timeout_seconds" {
			w.errKey(g, didYouMean(g.key, []string{"orchestrator_timeout_seconds"}), "unknown orchestrator.timeout key `%s`", clip(g.key))
			continue
		}
		if _, ok := w.seconds(g); ok {
			w.warnAt(g.loc, "orchestrator.timeout.orchestrator_timeout_seconds is ignored (as in MassGen)",
				"set timeout_settings.orchestrator_timeout_seconds instead", g.keyN)
		}
	}
}

// seconds reads a positive number of seconds as a duration.
func (w *walker) seconds(f field) (time.Duration, bool) {
	var x float64
	switch f.val.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		var ok bool
		if x, ok = w.number(f); !ok {
			return 0, false
		}
	case *ast.InfinityNode, *ast.NanNode:
		w.errf(f, "", "%s must be a finite number of seconds", f.key)
		return 0, false
	case *ast.StringNode:
		w.errf(f, "write the number without quotes", "%s must be a positive number of seconds, not a string", f.key)
		return 0, false
	default:
		w.errf(f, "", "%s must be a positive number of seconds, not %s", f.key, kind(f.val))
		return 0, false
	}
	if x <= 0 {
		w.errf(f, "", "%s must be a positive number of seconds", f.key)
		return 0, false
	}
	if x > float64(math.MaxInt64)/float64(time.Second) {
		w.errf(f, "", "%s is too large", f.key)
		return 0, false
	}
	d := time.Duration(x * float64(time.Second))
	if d <= 0 {
		w.errf(f, "", "%s is too small", f.key)
		return 0, false
	}
	return d, true
}

func (w *walker) timeouts(f field, t *Timeouts) {
	fields, _ := w.mapping(f, 1)
	for _, e := range fields {
		g := child(f.loc, e)
		var dst *time.Duration
		switch g.key {
		case "orchestrator_timeout_seconds":
			dst = &t.Orchestrator
		case "agent_timeout_seconds":
			dst = &t.Agent
		case "presentation_timeout_seconds":
			dst = &t.Presentation
		default:
			w.errKey(g, didYouMean(g.key, timeoutKeys), "unknown timeout_settings key `%s`", clip(g.key))
			continue
		}
		if d, ok := w.seconds(g); ok {
			*dst = d
		}
	}
}

func (w *walker) ui(f field, u *UI) {
	fields, _ := w.mapping(f, 1)
	for _, e := range fields {
		g := child(f.loc, e)
		switch g.key {
		case "display_type":
			if s, ok := w.enum(g, displayTypes); ok {
				u.DisplayType = s
			}
		case "logging_enabled":
			if b, ok := w.boolean(g); ok {
				u.LoggingEnabled = b
			}
		case "use_orchestrator_for_single_agent":
			if b, ok := w.boolean(g); ok && !b {
				w.errKey(g, "remove it; a single agent always runs through the orchestrator",
					"`use_orchestrator_for_single_agent: false` is not supported yet")
			}
		default:
			sugg := didYouMean(g.key, uiKeys)
			if g.key == "type" {
				sugg = "did you mean `display_type`?"
			}
			w.warnAt(g.loc, fmt.Sprintf("unknown ui key `%s` is ignored", clip(g.key)), sugg, g.keyN)
		}
	}
}

// memory accepts a memory block only while it is disabled.
func (w *walker) memory(f field) {
	fields, _ := w.mapping(f, 1)
	for _, e := range fields {
		if e.key != "enabled" {
			continue
		}
		g := child(f.loc, e)
		if on, ok := w.boolean(g); ok && on {
			w.errKey(g, "remove the memory block or set enabled: false", "`memory` is not supported yet")
		}
	}
}
