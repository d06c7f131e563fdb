package view

import (
	"fmt"
	"strings"

	"massgen/internal/event"
	"massgen/internal/usage"
)

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
