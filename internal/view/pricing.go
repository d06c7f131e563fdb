package view

import (
	"fmt"
	"slices"
	"strings"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// pricing tracks which agents' models have no price (event.AgentInfo.Unpriced) and used
// tokens: for them the reported cost is not the real one.
type pricing struct {
	models   map[string]string // unpriced agent id -> model
	unpriced []string          // their models that used tokens, in order of first use
}

func (p *pricing) start(agents []event.AgentInfo) {
	p.models = map[string]string{}
	for _, a := range agents {
		if a.Unpriced {
			p.models[a.ID] = a.Model
		}
	}
}

func (p *pricing) used(u event.UsageReported) {
	m, ok := p.models[u.Agent]
	if ok && u.Usage != (provider.Usage{}) && !slices.Contains(p.unpriced, m) {
		p.unpriced = append(p.unpriced, m)
	}
}

// has reports whether agent's model has no price.
func (p *pricing) has(agent string) bool {
	_, ok := p.models[agent]
	return ok
}

// unknown lists the models whose cost is unknown.
func (p *pricing) unknown() []string { return p.unpriced }

// BudgetWarning says, when the session has a cost budget, which agents it cannot see: their
// model has no price, so their spending counts as $0 and max_cost_usd never stops them. ""
// when there is nothing to say.
func BudgetWarning(s event.SessionStarted) string {
	if s.Settings.MaxCostUSD <= 0 {
		return ""
	}
	var blind []string
	for _, a := range s.Agents {
		if a.Unpriced {
			blind = append(blind, fmt.Sprintf("%s %s (model %s)", a.Label, a.ID, a.Model))
		}
	}
	if len(blind) == 0 {
		return ""
	}
	whose := "its"
	if len(blind) > 1 {
		whose = "their"
	}
	return fmt.Sprintf("max_cost_usd %s cannot be enforced for %s: no price is known, so %s spending is not counted",
		usage.Dollars(s.Settings.MaxCostUSD), strings.Join(blind, ", "), whose)
}
