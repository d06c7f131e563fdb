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
	SubagentTypes        = []string{"evaluator", "explorer", "researcher", "novelty", "critic", "builder"}
	SubagentDefaultTypes = []string{"evaluator", "explorer", "researcher"}
)

// subagentTypesCheck refuses the analytical types MassGen's orchestrator runs itself (this
// build does not) and warns about names it does not know, as MassGen does.
func subagentTypesCheck(w *walker, v *value) bool {
	for _, name := range v.list {
		n := strings.ToLower(strings.TrimSpace(name))
		switch {
		case n == "round_evaluator" || n == "execution_trace_analyzer":
			w.errf(v.f, "remove it; the round evaluator is not built (the other types work)",
				"subagent type `%s` is not supported yet: MassGen's orchestrator runs it between rounds", n)
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
