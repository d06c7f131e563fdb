// Package subagent is MassGen's spawn_subagents tool: an agent hands independent subtasks to
// nested teams, each a session of its own (own workspace, tools and log folder under the
// parent's), and gets their answers back as the tool's result, or, in the background, as a
// message at its next step. The package holds the tool, its caps and the bookkeeping (ids,
// concurrency, the shared cost budget, background results); the nested session itself is run
// by a Runner the caller (internal/app) supplies, so that this package does not import it.
package subagent

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// Hard caps, whatever the config says: they bound what one agent's model can start.
const (
	// MaxDepth is how deep subagents nest: a subagent's team never spawns subagents, as in
	// MassGen. A session at this depth is offered no spawn_subagents tool and refuses one.
	MaxDepth = 1
	// MaxConcurrent caps subagent_max_concurrent.
	MaxConcurrent = 8
	// MaxSpawnsPerAgent caps the subagents one agent starts in one session.
	MaxSpawnsPerAgent = 24

	maxTaskChars     = 20000 // one task's text, and the shared context
	maxContextPaths  = 16    // per task
	maxIDChars       = 40
	maxAnswerChars   = 50000 // one subagent's answer as the caller reads it
	presentationPart = 2     // a subagent's presentation may take timeout/presentationPart more
	hardGrace        = 10 * time.Second
)

// Settings are one parent session's subagent rules.
type Settings struct {
	// Timeout is each subagent's coordination time: subagent_default_timeout clamped to
	// [MinTimeout, MaxTimeout].
	Timeout time.Duration
	// MaxConcurrent caps the tasks of one call and one agent's subagents running at once.
	MaxConcurrent int
	// Types are the specialised profiles offered.
	Types []string
	// Background allows background: true.
	Background bool
	// MaxCostUSD is the parent's max_cost_usd (0: none): the parent and all its subagents
	// together spend at most this.
	MaxCostUSD float64
	// Depth is the parent session's depth (0 for a session a person started).
	Depth int
	// LogRoot is where the subagents' log folders go (<parent turn>/subagents), "" without
	// logs.
	LogRoot string
	// ShownLogRoot is where the log folders are named in events and results when they are
	// moved there after the session (a session on Temporal: the starter's log folder, while
	// the worker writes them under LogRoot); "" names them where they are written.
	ShownLogRoot string
}

// shown is where dir, a path under LogRoot, is named for the user and the model.
func (s Settings) shown(dir string) string {
	if s.ShownLogRoot == "" || s.LogRoot == "" || dir == "" {
		return dir
	}
	rel, err := filepath.Rel(s.LogRoot, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return dir
	}
	return filepath.Join(s.ShownLogRoot, rel)
}

// FromConfig resolves the config's subagent keys with MassGen's defaults: timeout 300 s
// within [60 s, 600 s] (a default above the maximum raises the maximum), 3 at once.
func FromConfig(c config.Subagents, maxCostUSD float64, depth int, logRoot string) Settings {
	def, lo, hi := or(c.DefaultTimeout, 300*time.Second), or(c.MinTimeout, 60*time.Second), or(c.MaxTimeout, 600*time.Second)
	hi = max(hi, def)
	types := c.Types
	if types == nil {
		types = config.SubagentDefaultTypes
	}
	var offered []string
	for _, t := range types {
		if _, ok := profiles[t]; ok {
			offered = append(offered, t)
		}
	}
	conc := c.MaxConcurrent
	if conc <= 0 {
		conc = 3
	}
	return Settings{Timeout: min(max(def, lo), hi), MaxConcurrent: min(conc, MaxConcurrent),
		Types: offered, Background: !c.NoBackground, MaxCostUSD: maxCostUSD, Depth: depth, LogRoot: logRoot}
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// HardTimeout is how long a subagent may run in all: its coordination time, a presentation,
// and a grace to end; the tool's own bound is this plus a margin.
func (s Settings) HardTimeout() time.Duration {
	return s.Timeout + s.Timeout/presentationPart + hardGrace
}

// Request is one subagent to run.
type Request struct {
	Agent string // the spawning agent's id
	ID    string // unique in the parent session; names its log and workspace folders
	Kind  string // a profile name, "" for a generic subagent
	// Question is what the subagent's team is asked; System is added to each of its agents'
	// system messages (the profile).
	Question, System string
	// ContextPaths are shared read-only with the subagent's agents (absolute, checked).
	ContextPaths []string
	// Refine false asks for one answer each, no voting rounds, the first answer reused.
	Refine bool
	// Timeout is the subagent's coordination time; Presentation bounds its final answer.
	Timeout, Presentation time.Duration
	// MaxCostUSD is what the subagent may spend (0: no budget).
	MaxCostUSD float64
	// LogRoot and ID give its log folder: <LogRoot>/<ID>/turn_1 ("" LogRoot: no logs).
	LogRoot string
	// OnCost must be called with the cost of each of the subagent's model calls as it is
	// reported (the shared budget watches it); unknown marks a call without a price.
	OnCost func(usd float64, unknown bool)
}

// Outcome is how a subagent's session ended.
type Outcome struct {
	Answer      string
	Err         error
	TimedOut    bool // its session ended by its own timeout
	LogDir      string
	Workspace   string // the winner's workspace, "" if none
	Usage       provider.Usage
	CostUSD     float64
	CostUnknown bool
}

// Runner runs one subagent's session to its end; it must return when ctx ends.
type Runner func(ctx context.Context, r Request) Outcome
