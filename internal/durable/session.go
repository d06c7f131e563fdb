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
	// Store is the folder (FolderStore) where the workspaces of sessions with tools travel
	// between workers and the caller; "" means DefaultStoreDir().
	Store string
	// Version is a worker's Worker Deployment Version; the zero Version is an unversioned
	// worker. Starters leave it empty: the server routes new sessions to the current version.
	Version Version
}

// WorkerOptions are what a worker lets the sessions it runs do on its machine.
type WorkerOptions struct {
	// Allow is where agents' requests may go besides their backends' own endpoints.
	Allow *Allowlist
	// TrustSessions lets sessions start programs and open folders here (trust.OnMachine).
	TrustSessions bool
	// WorkspaceRoot holds the workspaces of the sessions the worker holds.
	WorkspaceRoot string
	// Release is massgen's version, which MCP servers are told.
	Release string
}

// StoreOrDefault is t's store.
func (t Target) StoreOrDefault() Store { return FolderStore{Dir: cmpOr(t.Store, DefaultStoreDir())} }

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

// Supported refuses, by name, what a session on Temporal cannot do yet: the coordination
// features that live in the local session, and a memory store that lives in one process.
// Tools, upload_files, the agents' subagents and the orchestrator's own (emerging criteria's
// critic, the round evaluator, verifier subagents) run on the worker that holds the session,
// persistent memory on the workers' stores (temporalrun).
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
	if o.Broadcast.Mode == config.BroadcastHuman {
		// The person's answers would have to reach a worker's turn while it waits.
		add("orchestrator.coordination.broadcast: human")
	}
	for _, a := range cfg.Agents {
		if m := cfg.MemoryOf(a); m.Enabled && m.Persistent && m.InProcess {
			// Each worker would have its own store, for as long as it runs.
			add("memory.persistent_memory.on_disk: false (use the store on disk, on a folder every worker shares)")
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("%s: not supported on Temporal yet; run without --temporal",
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
		if err := literalSecrets(a); err != nil {
			return nil, err
		}
		out.Agents[i] = a
	}
	if b := cfg.Orchestrator.DSPy.Backend; b != nil {
		if b.APIKey != "" {
			return nil, errors.New("orchestrator.dspy.backend: api_key in the config is not sent to Temporal workers: set the backend's key variable in each worker's environment instead")
		}
		if u := b.BaseURL; u != "" && redact.URL(u) != u {
			return nil, errors.New("orchestrator.dspy.backend: a base_url with credentials is not sent to Temporal workers: put them in the worker's environment")
		}
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

// literalSecrets refuses an MCP server secret written into the config (an env value or a
// header named like a key, a URL with credentials): it would travel in the workflow's
// history. A ${VAR} reference travels as the name, and each worker reads its own value.
func literalSecrets(a config.Agent) error {
	for _, s := range a.Backend.Tools.MCPServers {
		if u := s.URL; u != "" && redact.URL(u) != u {
			return fmt.Errorf("agent %s: MCP server %s: a URL with credentials is not sent to Temporal workers: put them in a ${VAR} the workers set", a.ID, s.Name)
		}
		for what, m := range map[string]map[string]string{"env": s.Env, "headers": s.Headers} {
			for k, v := range m {
				if secretName(k) && !onlyVariables(v) {
					return fmt.Errorf("agent %s: MCP server %s: %s %s holds a secret, which is not sent to Temporal workers: write it as ${VAR} and set VAR in each worker's environment", a.ID, s.Name, what, k)
				}
			}
		}
	}
	return nil
}

func secretName(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"key", "token", "secret", "password", "authorization", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// onlyVariables: v holds no text of its own besides ${VAR} references (and an auth scheme
// such as "Bearer ").
func onlyVariables(v string) bool {
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			rest := strings.TrimSpace(v)
			return rest == "" || rest == "Bearer" || rest == "Basic" || rest == "token"
		}
		j := strings.Index(v[i:], "}")
		if j < 0 {
			return false
		}
		v = v[:i] + v[i+j+1:]
	}
}
