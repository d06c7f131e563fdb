package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/suggest"
)

// checkModeFlags checks the values of the mode and context flags before anything is loaded.
func checkModeFlags(o *runOptions) error {
	if o.cwdContext != "" && !slices.Contains([]string{"ro", "rw", "read", "write"}, strings.ToLower(o.cwdContext)) {
		return exitf(ExitConfig, "--cwd-context %q: use ro or read (the agents may read the current directory), rw or write (the final presenter may also write it)", o.cwdContext)
	}
	switch o.display {
	case "", "rich", "textual":
	default:
		return exitf(ExitConfig, "--display %q: use rich or textual (both are massgen's live view), or --no-display for plain text", o.display)
	}
	switch o.coordinationMode {
	case "", "parallel", "voting", "decomposition":
	default:
		return exitf(ExitConfig, "--coordination-mode %q: use parallel (every agent answers the whole question, then they vote) or decomposition (each agent owns a subtask)", o.coordinationMode)
	}
	if o.coordinationMode == "decomposition" && o.quick {
		return exitf(ExitConfig, "--quick with --coordination-mode decomposition: --quick is a voting mode (one answer each, one vote); leave one of them out")
	}
	switch o.personas {
	case "", "off", "perspective", "implementation", "methodology":
	default:
		return exitf(ExitConfig, "--personas %q: use off, perspective, implementation or methodology", o.personas)
	}
	switch o.broadcast {
	case "", "false", config.BroadcastAgents, config.BroadcastHuman:
	default:
		return exitf(ExitConfig, "--broadcast %q: use agents (agents ask each other), human (agents ask you) or false", o.broadcast)
	}
	if o.timeoutSet && o.orchestratorTimeout <= 0 {
		return exitf(ExitConfig, "--orchestrator-timeout must be a whole number of seconds above 0 (it bounds coordination; leave it out for the config's, default 1800)")
	}
	return nil
}

// applyOverrides applies the command line's settings to a loaded config, as MassGen applies
// them to its config dict: the timeout, the current directory as a context path, and the mode
// flags. The result is validated like YAML context paths are, when the run starts.
func applyOverrides(cfg *config.Config, o *runOptions) error {
	if o.timeoutSet {
		cfg.Timeouts.Orchestrator = time.Duration(o.orchestratorTimeout) * time.Second
	}
	if o.cwdContext != "" {
		dir, err := os.Getwd()
		if err != nil {
			return exitf(ExitConfig, "--cwd-context: cannot tell the current directory: %v", err)
		}
		// --cwd-context decides the permission, also of an entry the config has for the
		// directory, as MassGen's override does.
		write := strings.ToLower(o.cwdContext) == "rw" || strings.ToLower(o.cwdContext) == "write"
		paths := slices.Clone(cfg.Orchestrator.ContextPaths)
		k := slices.IndexFunc(paths, func(c config.ContextPath) bool { return samePath(c.Path, dir) })
		if k < 0 {
			paths = append(paths, config.ContextPath{Path: dir})
			k = len(paths) - 1
		}
		paths[k].Write = write
		cfg.Orchestrator.ContextPaths = paths
	}
	if o.singleAgent.set {
		kept, err := singleAgent(cfg.Agents, o.singleAgent.value)
		if err != nil {
			return err
		}
		cfg.Agents = kept
	}
	switch o.personas {
	case "off":
		cfg.Orchestrator.PersonaGenerator.Enabled = false
	case "":
	default:
		cfg.Orchestrator.PersonaGenerator = config.PersonaGenerator{Enabled: true, DiversityMode: o.personas}
	}
	switch o.coordinationMode {
	case "parallel", "voting":
		cfg.Orchestrator.CoordinationMode = config.ModeVoting
	case "decomposition":
		if err := decompositionOverride(cfg); err != nil {
			return err
		}
	}
	switch o.broadcast {
	case "false":
		cfg.Orchestrator.Broadcast.Mode = ""
	case config.BroadcastAgents, config.BroadcastHuman:
		cfg.Orchestrator.Broadcast.Mode = o.broadcast
	}
	if o.quick {
		// MassGen's mode_flags.py: refinement off.
		cfg.Orchestrator.MaxNewAnswersPerAgent = 1
		if o.singleAgent.set {
			cfg.Orchestrator.SkipVoting = true
			cfg.Orchestrator.FinalAnswerStrategy = config.StrategyWinnerReuse
		} else {
			cfg.Orchestrator.DisableInjection = true
			cfg.Orchestrator.DeferVotingUntilAllAnswered = true
			cfg.Orchestrator.FinalAnswerStrategy = config.StrategySynthesize
		}
	}
	return nil
}

// decompositionOverride turns decomposition mode on over a config (MassGen's
// --coordination-mode overrides coordination_mode), refusing the vote settings the config
// validation refuses with it.
func decompositionOverride(cfg *config.Config) error {
	o := &cfg.Orchestrator
	var clash []string
	for key, on := range map[string]bool{"skip_voting": o.SkipVoting, "defer_voting_until_all_answered": o.DeferVotingUntilAllAnswered,
		"lazy_start_agents": o.LazyStartAgents > 0, "voting_sensitivity: checklist_gated": o.VotingSensitivity == "checklist_gated"} {
		if on {
			clash = append(clash, key)
		}
	}
	if len(clash) > 0 {
		slices.Sort(clash)
		return exitf(ExitConfig, "--coordination-mode decomposition: the config sets %s, which do not apply without votes; remove them or run --coordination-mode parallel",
			strings.Join(clash, ", "))
	}
	o.CoordinationMode = config.ModeDecomposition
	return nil
}

// singleAgent keeps the agent with id (the first when id is ""), as --single-agent does.
func singleAgent(agents []config.Agent, id string) ([]config.Agent, error) {
	if len(agents) == 0 {
		return nil, exitf(ExitConfig, "--single-agent: the config has no agents")
	}
	if id == "" {
		return agents[:1:1], nil
	}
	ids := make([]string, len(agents))
	for i, a := range agents {
		if a.ID == id {
			return []config.Agent{a}, nil
		}
		ids[i] = a.ID
	}
	hint := ""
	if best := suggest.Closest(id, ids); best != "" {
		hint = fmt.Sprintf("did you mean %s? ", best)
	}
	if strings.ContainsAny(id, " \t\n?") {
		hint += "(--single-agent takes the next argument as the agent id, as in MassGen; for the first agent put -- or another flag between it and the question: massgen --single-agent -- \"question\") "
	}
	return nil, exitf(ExitConfig, "--single-agent %q: no such agent; %sthe agents are %s", id, hint, strings.Join(ids, ", "))
}
