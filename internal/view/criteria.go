package view

import (
	"fmt"
	"strings"

	"massgen/internal/event"
)

// CriteriaLines are the lines a CriteriaEmerged event shows as (plain output, the live
// view's notices): the warning first, then each criterion added and the ones dropped.
func CriteriaLines(v event.CriteriaEmerged) []string {
	who := "criteria"
	switch {
	case v.Source == event.CriteriaSubagent:
		who = fmt.Sprintf("criteria (critic on version %d)", v.Version)
	case v.Agent != "":
		who = "criteria (proposed by " + v.Agent + ")"
	}
	var out []string
	if v.Warning != "" {
		out = append(out, who+": warning: "+oneLine(v.Warning, 300))
	}
	for _, c := range v.Added {
		out = append(out, fmt.Sprintf("%s: + %s [%s]: %s", who, c.ID, c.Category, oneLine(c.Text, 160)))
	}
	if len(v.Evicted) > 0 {
		out = append(out, who+": dropped (over bootstrap_max_total): "+strings.Join(v.Evicted, ", "))
	}
	if len(out) == 0 {
		out = append(out, who+": none new")
	}
	return out
}
