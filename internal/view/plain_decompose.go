package view

import (
	"strings"

	"massgen/internal/event"
)

// decomposition prints decomposition mode's events as plain lines; it reports whether e was one.
func (p *Plain) decomposition(e event.Payload) bool {
	switch v := e.(type) {
	case event.SubtasksAssigned:
		if v.Warning != "" {
			p.line("subtasks: warning: %s", oneLine(v.Warning, 300))
		}
		for _, st := range v.Subtasks {
			text := oneLine(st.Text, 160)
			if st.Source == event.SubtaskNone {
				text = "(none: it picks its part from the task)"
			}
			p.line("subtask of %s (%s): %s", p.who(st.Agent), st.Source, text)
		}
	case event.AgentStopped:
		p.flush(v.Agent)
		if v.Stale {
			p.line("%s: stop not counted (made on answers v%d, which changed); continuing with the new work", p.who(v.Agent), v.Version)
			return true
		}
		p.line("%s: stopped (%s): %s", p.who(v.Agent), v.Status, oneLine(v.Summary, 200))
	case event.PartsIntegrated:
		for _, pt := range v.Parts {
			why := ""
			if pt.Why != "" {
				why = ": " + oneLine(pt.Why, 200)
			}
			p.line("  part %s: %s%s", pt.Label, pt.Status, why)
		}
		if len(v.Files) > 0 {
			p.line("  %d workspace file(s) of the other parts gathered into %s's workspace", len(v.Files), p.label(v.Presenter))
		}
		for _, c := range v.Conflicts {
			var copies []string
			for l, path := range c.Copies {
				copies = append(copies, l+"'s at "+path)
			}
			p.line("  conflict: %s written differently by several parts; %s's kept, %s", c.Path, c.Kept, strings.Join(copies, ", "))
		}
		if v.Error != "" {
			p.line("  warning: gathering the parts' workspaces: %s", oneLine(v.Error, 300))
		}
	default:
		return false
	}
	return true
}
