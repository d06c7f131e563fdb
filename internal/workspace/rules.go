package workspace

import (
	"fmt"
	"path/filepath"

	"massgen/internal/tool"
)

// PathRules are the permission rules on paths (permission.Policy). The permission gate judges
// the path a call names before it runs; the tools ask PathRules about every path they reach:
// the path a call names once symbolic links are resolved, and each entry a walk (list, search,
// compare), a copy, a delete, a move or the agent's shared snapshot visits. What the rules
// keep from reading is left out of walks, as concealed files are; a path given directly, or
// a write into a tree, is refused with an error the model reads.
type PathRules interface {
	// PathRefusal returns why the agent may not read (write false) or change abs, which its
	// tool reached from named (the path the call named, joined to the workspace and cleaned,
	// as the gate judged it), or "" when it may. Safe for concurrent use.
	PathRefusal(write bool, abs, named string) string
}

// SetPathRules puts the agent's file tools, media inputs and snapshots under rules; nil
// removes them. Call it before the agent's tools run.
func (a *Agent) SetPathRules(rules PathRules) {
	a.mu.Lock()
	a.rules = rules
	a.mu.Unlock()
}

func (a *Agent) pathRules() PathRules {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rules
}

// named is raw as the permission gate judged it: joined to the workspace and cleaned.
func (a *Agent) named(raw string) string {
	if !filepath.IsAbs(raw) {
		raw = filepath.Join(a.dir, raw)
	}
	return filepath.Clean(raw)
}

// ruled returns the error for a path the rules refuse: abs, reached from named, which the
// model wrote as raw. nil when the rules allow it or there are none.
func ruled(rules PathRules, write bool, abs, named, raw string) error {
	if rules == nil {
		return nil
	}
	why := rules.PathRefusal(write, abs, named)
	if why == "" {
		return nil
	}
	leads := ""
	if abs != named && abs != raw {
		leads = " (it is " + abs + ")"
	}
	return fmt.Errorf("%s%s: %s; the call did not run. Do not try to reach it another way (another tool, a link, a folder above it): do the task without it, or say in your answer what you would need",
		tool.Quote(raw), leads, why)
}

// readable reports whether the rules let the agent read abs, reached from named.
func readable(rules PathRules, abs, named string) bool {
	return rules == nil || rules.PathRefusal(false, abs, named) == ""
}
