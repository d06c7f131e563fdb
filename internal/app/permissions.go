package app

import (
	"context"
	"strings"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/mcptool"
	"massgen/internal/permission"
	"massgen/internal/redact"
)

// guard puts the calls of every agent with a permissions: block through one gate, before
// they run (engine.Agent.Permit). The gate's decisions are events, which the audit ledger
// is written from (openLedger).
func guard(cfg *config.Config, agents []engine.Agent, tb *toolbox, o Options, bus *event.Bus, red *redact.Redactor) error {
	var gate *permission.Gate
	for i, a := range cfg.Agents {
		pc := cfg.PermissionsFor(i)
		if pc == nil {
			continue
		}
		if gate == nil {
			gate = permission.NewGate(permission.GateOptions{Broker: o.Approvals, Timeout: o.AskTimeout, Publish: func(p event.Payload) { bus.Publish(p) },
				Redact: red.String})
		}
		var wsDir string
		if ws := tb.ws[a.ID]; ws != nil {
			wsDir = ws.Dir()
		}
		p, err := permission.NewPolicy(permission.Config{AutomationDefault: pc.AutomationDefault, Role: pc.Role, Allow: pc.Allow, Ask: pc.Ask,
			Deny: pc.Deny, MaxConsecutiveAuto: pc.MaxConsecutiveAuto, NoAudit: pc.NoAudit, ReadOnlyTools: readOnlyTools(a.Backend.Tools.MCPServers)}, wsDir)
		if err != nil {
			return errorf(ExitConfig, "agent %s: permissions: %v", a.ID, err)
		}
		gate.Add(a.ID, p)
		if ws := tb.ws[a.ID]; ws != nil {
			ws.SetPathRules(p) // the rules hold for every path the file tools reach, not only the one named
		}
		id := a.ID
		agents[i].Permit = func(ctx context.Context, tool, args string) string { return gate.Check(ctx, id, tool, args) }
	}
	return nil
}

// openLedger opens the audit ledger in the turn's log folder dir when an agent has a
// permissions: block, and writes every decision published on bus to it, wherever the call
// was decided (on Temporal, a worker). The returned close closes it, and is never nil.
func openLedger(cfg *config.Config, bus *event.Bus, dir, runID string) (func() error, error) {
	nothing := func() error { return nil }
	if dir == "" {
		return nothing, nil
	}
	for i := range cfg.Agents {
		if cfg.PermissionsFor(i) == nil {
			continue
		}
		l, err := permission.OpenLedger(dir)
		if err != nil {
			return nothing, errorf(ExitExecution, "cannot write the permissions ledger in %s: %v (fix its permissions, or set permissions.audit: false)", dir, err)
		}
		bus.Subscribe(permission.LedgerSink(l, runID))
		return l.Close, nil
	}
	return nothing, nil
}

// readOnlyTools are the exposed names (patterns) of the MCP tools the config marks read-only.
func readOnlyTools(servers []config.MCPServer) []string {
	var out []string
	for _, s := range servers {
		one, _ := mcptool.ToolName(s.Name, "t")
		prefix := strings.TrimSuffix(one, "t") // mcp__<server>__ as the tools are offered
		if s.ReadOnly {
			out = append(out, prefix+"*")
			continue
		}
		for _, t := range s.ReadOnlyTools {
			name, _ := mcptool.ToolName(s.Name, t)
			if strings.ContainsAny(t, "*?[") {
				name = prefix + t // a pattern is matched as written
			}
			out = append(out, name)
		}
	}
	return out
}
