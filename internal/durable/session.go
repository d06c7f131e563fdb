// Package durable is what massgen knows of sessions on Temporal without the Temporal SDK: where
// they run (Target), what a session there may contain (Supported), the config as it travels
// to the workers (Encode, DecodeConfig) and where a worker may send an agent's key
// (Allowlist). The SDK side (the workflow, the activities, the client) is durable/temporalrun,
// linked only into massgen-temporal: the SDK costs the stripped binary about 10 MB and every
// start its initialisers.
package durable

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/redact"
)

// Defaults of a Target.
const (
	DefaultNamespace = "default"
	DefaultQueue     = "massgen"
)

// Target is where sessions run: a Temporal frontend, a namespace and a task queue.
type Target struct {
	Address   string // HOST:PORT
	Namespace string // "" means DefaultNamespace
	Queue     string // "" means DefaultQueue
	// Heartbeat is the activities' heartbeat timeout; 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// Live is how often a running turn sends its events; 0 means the default (half a second).
	Live time.Duration
	// HistoryLimit continues a session's workflow as a new run past this many history events;
	// 0 leaves it to Temporal's suggestion.
	HistoryLimit int
	// Version is a worker's Worker Deployment Version; the zero Version is an unversioned
	// worker. Starters leave it empty: the server routes new sessions to the current version.
	Version Version
}

// NamespaceOrDefault is t's namespace, DefaultNamespace when unset.
func (t Target) NamespaceOrDefault() string { return cmpOr(t.Namespace, DefaultNamespace) }

// QueueOrDefault is t's task queue, DefaultQueue when unset.
func (t Target) QueueOrDefault() string { return cmpOr(t.Queue, DefaultQueue) }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Supported refuses, by name, what a session on Temporal cannot do yet: every tool that runs
// on the machine (files, commands, MCP servers, custom tools) and the steps before
// coordination. Those run locally, without --temporal.
func Supported(cfg *config.Config) error {
	if cfg == nil || len(cfg.Agents) == 0 {
		return errors.New("the session has no agents")
	}
	var refused []string
	add := func(what string) {
		for _, r := range refused {
			if r == what {
				return
			}
		}
		refused = append(refused, what)
	}
	o := cfg.Orchestrator
	if o.PlanningMode {
		add("orchestrator.coordination.enable_planning_mode")
	}
	if o.PersonaGenerator.Enabled {
		add("orchestrator.coordination.persona_generator")
	}
	if o.Decomposing() {
		// The stop tool, the task decomposer and the parts' presentation are not in the
		// workflow's activities yet.
		add("orchestrator.coordination_mode: decomposition")
	}
	if o.MaxOrchestrationRestarts > 0 {
		// The post-evaluation and the attempts are not in the workflow's activities yet.
		add("orchestrator.coordination.max_orchestration_restarts")
	}
	if o.MaxTokensPerAgent > 0 {
		// The per-agent count lives in the engine's session, which activities do not carry.
		add("orchestrator.max_tokens_per_agent")
	}
	if o.Broadcast.Mode != "" {
		// The side calls read the peers' conversations, which live in the workers' activities.
		add("orchestrator.coordination.broadcast")
	}
	if o.TaskPlanning.Enabled {
		// The plans live in the session the engine runs, which on Temporal is split over
		// activities that do not carry them.
		add("orchestrator.coordination.enable_agent_task_planning")
	}
	if o.DSPy.Enabled {
		add("orchestrator.dspy (question paraphrasing)")
	}
	if len(o.ContextPaths) > 0 {
		add("orchestrator.context_paths")
	}
	if o.Subagents.Enabled {
		add("orchestrator.coordination.enable_subagents (subagents are nested sessions run by this process)")
	}
	if o.Checklist.Bootstrapping() {
		// The emerged criteria live in the engine's session, which the workflow does not
		// carry yet; the critic is a nested session too.
		add("orchestrator.coordination.criteria_mode: " + o.Checklist.CriteriaMode)
	}
	if len(o.Verifiers) > 0 {
		// The checks run between coordination and the presentation in the engine's session,
		// which the workflow's activities do not carry yet.
		add("orchestrator.verifiers")
	}
	if o.RoundEvaluator.Enabled {
		add("orchestrator.coordination.round_evaluator_before_checklist (the round evaluator is a nested session run by this process)")
	}
	if cfg.FilesystemMemory.Enabled {
		add("filesystem_memory")
	}
	if o.MemoryFiles {
		add("orchestrator.coordination.enable_memory_filesystem_mode (the memories are files in the workspaces on this machine)")
	}
	if o.UseSkills {
		add("orchestrator.coordination.use_skills (the skills are files on this machine)")
	}
	if o.WriteMode != "" && o.WriteMode != "legacy" {
		// Its copies live in the agents' workspaces, on the machine.
		add("orchestrator.coordination.write_mode")
	}
	for _, a := range cfg.Agents {
		if cfg.MemoryOf(a).Enabled {
			add("memory (its store is on this machine)")
		}
		t := a.Backend.Tools
		if bt := config.BackendTypes[a.Backend.Type]; bt.Protocol == config.ProtocolCLI {
			add("backend type " + a.Backend.Type + " (a coding-agent CLI works in a workspace)")
		}
		switch {
		case t.Cwd != "":
			add("cwd")
		case len(t.ContextPaths) > 0:
			add("context_paths")
		}
		if t.Media.Over(o.Media).Enabled() {
			add("media tools (they read and write the workspace)")
		}
		if t.CommandLine {
			add("enable_mcp_command_line")
		}
		if len(t.MCPServers) > 0 {
			add("mcp_servers")
		}
		if t.CodeTools {
			add("enable_code_based_tools")
		}
		for _, c := range t.CustomTools {
			if name := c.ComputerTool(); name != "" {
				add("custom_tools " + name + " (a browser on this machine)")
			} else {
				add("custom_tools")
			}
		}
		if len(a.Backend.Uploads) > 0 {
			add("upload_files (the files are on this machine)")
		}
		if s := a.Backend.Script; s != nil && len(s.ToolCalls) > 0 {
			add("script tool_calls")
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("%s: not supported on Temporal yet (workers run agents without tools that touch a machine); run without --temporal",
		strings.Join(refused, ", "))
}

// ForWorkers is cfg as it travels to the workers, inside the workflow's history: without API
// keys (each worker reads its own) and with credentials taken out of base URLs.
func ForWorkers(cfg *config.Config) (*config.Config, error) {
	out := *cfg
	out.Agents = make([]config.Agent, len(cfg.Agents))
	for i, a := range cfg.Agents {
		if a.Backend.APIKey != "" {
			return nil, fmt.Errorf("agent %s: api_key in the config is not sent to Temporal workers: set the backend's key variable in each worker's environment instead", a.ID)
		}
		if u := a.Backend.BaseURL; u != "" && redact.URL(u) != u {
			return nil, fmt.Errorf("agent %s: a base_url with credentials is not sent to Temporal workers: put them in the worker's environment", a.ID)
		}
		out.Agents[i] = a
	}
	out.Warnings = nil
	return &out, nil
}

// Encode is cfg as it travels to the workers (ForWorkers), written as a config file; an error
// says what cannot travel.
func Encode(cfg *config.Config) (string, error) {
	if err := Supported(cfg); err != nil {
		return "", err
	}
	wcfg, err := ForWorkers(cfg)
	if err != nil {
		return "", err
	}
	return encodeConfig(wcfg)
}
