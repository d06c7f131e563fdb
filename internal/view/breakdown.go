package view

import (
	"fmt"
	"strings"

	"massgen/internal/provider"
	"massgen/internal/readmodel"
	"massgen/internal/usage"
)

// breakdown is the summary's split of the session's usage, when there is more than one agent
// or round to tell apart: "by agent: a 1200 in (200 cached), 30 out, $0.0041; b ..." and
// "by round: setup ...; round 1 ...; final ...". Agents that reported no usage are left out.
func breakdown(st *readmodel.State) []string {
	part := func(name string, u provider.Usage, cost float64, known bool) string {
		t := fmt.Sprintf("%s %d in", name, u.InputTokens)
		if u.CachedInputTokens > 0 {
			t += fmt.Sprintf(" (%d cached)", u.CachedInputTokens)
		}
		return t + fmt.Sprintf(", %d out, %s", u.OutputTokens, usage.AmountOf(cost, u, known))
	}
	var agents []string
	for _, a := range st.Agents {
		if len(a.Rounds) > 0 {
			agents = append(agents, part(a.ID, a.Usage, a.CostUSD, a.CostKnown()))
		}
	}
	var out []string
	if len(agents) > 1 {
		out = append(out, "by agent: "+strings.Join(agents, "; "))
	}
	if rounds := st.Totals.Rounds; len(rounds) > 1 {
		parts := make([]string, len(rounds))
		for i, r := range rounds {
			parts[i] = part(roundName(r), r.Usage, r.CostUSD, !unpricedIn(st, r))
		}
		out = append(out, "by round: "+strings.Join(parts, "; "))
	}
	return out
}

func roundName(r readmodel.RoundUsage) string {
	switch r.Stage {
	case readmodel.StageSetup:
		return "setup"
	case readmodel.StagePresentation:
		return "final"
	}
	return fmt.Sprintf("round %d", r.Round)
}

// unpricedIn reports whether a model without a price used tokens in round r.
func unpricedIn(st *readmodel.State, r readmodel.RoundUsage) bool {
	for _, a := range st.Agents {
		if !a.Unpriced {
			continue
		}
		for _, ar := range a.Rounds {
			if ar.Stage == r.Stage && ar.Round == r.Round && ar.Usage != (provider.Usage{}) {
				return true
			}
		}
	}
	return false
}
