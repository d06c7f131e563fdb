package readmodel

import (
	"slices"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// What a session ran without: a price for some models, and MCP servers that failed or died.
// Views say so next to the cost and in the summary.

// ToolServer is an MCP server's latest status (mcptool's Status* words) and its detail.
type ToolServer struct {
	Name, Status, Detail string
	Time                 time.Time
}

// Problem reports whether the server failed or died: the session went on without it.
func (t ToolServer) Problem() bool { return t.Status == "failed" || t.Status == "died" }

// CostKnown reports whether CostUSD is the agent's real cost: its model has a price (or it
// has used nothing yet), and no run of it was stopped before its usage could be told.
func (a *Agent) CostKnown() bool {
	return !a.Usage.Unknown && (!a.Unpriced || a.Usage == (provider.Usage{}))
}

// Cost is the agent's cost as views show it.
func (a *Agent) Cost() usage.Amount { return usage.AmountOf(a.CostUSD, a.Usage, a.CostKnown()) }

// Cost is the session's cost as views show it.
func (s *State) Cost() usage.Amount {
	return usage.AmountOf(s.Totals.CostUSD, s.Totals.Usage, s.CostKnown())
}

// CostKnown reports whether Totals.CostUSD is the session's real cost, every agent's being
// known.
func (s *State) CostKnown() bool {
	for _, a := range s.Agents {
		if !a.CostKnown() {
			return false
		}
	}
	return true
}

// UnpricedModels lists, once each and in agent order, the models without a price that used
// tokens: their cost is unknown.
func (s *State) UnpricedModels() []string {
	var out []string
	for _, a := range s.Agents {
		if a.Unpriced && a.Usage != (provider.Usage{}) && !slices.Contains(out, a.Model) {
			out = append(out, a.Model)
		}
	}
	return out
}

// toolServer records an MCP server's status; massgen's own tools are not servers.
func (s *State) toolServer(t time.Time, p event.ToolServerStatus) {
	if p.Server == event.ServerWrites {
		s.Writes = append(s.Writes, ToolServer{Name: p.Server, Status: p.Status, Detail: p.Detail, Time: t})
		return
	}
	if event.OwnServer(p.Server) || p.Server == "" {
		return
	}
	for i := range s.ToolServers {
		ts := &s.ToolServers[i]
		if ts.Name != p.Server {
			continue
		}
		if ts.Status != "died" { // what the session lived with; a later stop changes nothing
			ts.Status, ts.Detail, ts.Time = p.Status, p.Detail, t
		}
		return
	}
	s.ToolServers = append(s.ToolServers, ToolServer{Name: p.Server, Status: p.Status, Detail: p.Detail, Time: t})
}
