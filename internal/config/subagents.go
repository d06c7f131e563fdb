package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Subagents are orchestrator.coordination's subagent settings: an agent may hand a subtask
// to a nested team (spawn_subagents) whose answer comes back as the tool's result.
type Subagents struct {
	Enabled bool
	// DefaultTimeout bounds each subagent, clamped to [MinTimeout, MaxTimeout] (0: MassGen's
	// 300, 60 and 600 s). A default above the maximum raises the maximum, as in MassGen.
	DefaultTimeout, MinTimeout, MaxTimeout time.Duration
	// MaxConcurrent caps the tasks of one call and the subagents of one agent running at once
	// (0: 3).
	MaxConcurrent int
	// Types are the specialised profiles offered (subagent_types); nil means
	// SubagentDefaultTypes, empty offers only generic subagents.
	Types []string
	// NoBackground refuses background: true (background_subagents: {enabled: false}).
	NoBackground bool
	// RuntimeMode is subagent_runtime_mode as written (isolated or inherited, which run alike
	// here); kept for the log's config.
	RuntimeMode string
}

// SubagentTypes are the profiles this build has; SubagentDefaultTypes those offered when
// subagent_types is not set (MassGen's: novelty, critic and builder are opt-in).
var (
	SubagentTypes        = []string{"evaluator", "explorer", "researcher", "novelty", "critic", "builder", "round_evaluator"}
	SubagentDefaultTypes = []string{"evaluator", "explorer", "researcher"}
)

// subagentTypesCheck refuses the analytical type this build does not have and warns about
// names it does not know, as MassGen does. round_evaluator is a profile agents can spawn, or,
// with orchestrator_managed_round_evaluator, one the orchestrator launches itself.
func subagentTypesCheck(w *walker, v *value) bool {
	for _, name := range v.list {
		n := strings.ToLower(strings.TrimSpace(name))
		switch {
		case n == "execution_trace_analyzer":
			w.errf(v.f, "remove it (the other types work)",
				"subagent type `%s` is not supported yet: it analyses MassGen's execution traces, which this build does not write", n)
			return false
		case !slices.Contains(SubagentTypes, n):
			w.warnAt(v.f.loc, fmt.Sprintf("subagent type `%s` is not one this build has; it is not offered", name),
				"use "+strings.Join(SubagentTypes, ", "), v.f.keyN)
		}
	}
	return true
}

func subagents(f func(s *Subagents, v value)) func(*walker, *target, value) {
	return orch(func(o *Orchestrator, v value) { f(&o.Subagents, v) })
}
