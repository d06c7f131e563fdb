package permission

import (
	"massgen/internal/permission/rule"

	"context"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"massgen/internal/event"
)

// AskTimeout is how long an ask waits for a person before automation_default decides it
// (MassGen's file handshake waits as long).
const AskTimeout = 300 * time.Second

// GateOptions configure a run's gate.
type GateOptions struct {
	// Broker carries a person's answers; nil means nobody can answer, so every ask follows
	// automation_default at once (--automation, plain output).
	Broker *Broker
	// Timeout bounds each ask; 0 is AskTimeout.
	Timeout time.Duration
	// Publish puts the permission events into the session's stream.
	Publish func(event.Payload)
	// Redact hides keys and secrets in what the events (and the ledger written from them,
	// LedgerSink) quote; nil keeps all.
	Redact func(string) string
}

// Gate is the one check every tool call of a run passes before it runs.
type Gate struct {
	o        GateOptions
	ids      *Broker // numbers the decisions when nobody can answer
	mu       sync.Mutex
	policies map[string]*Policy
	auto     map[string]int // consecutive automatic approvals, per agent
}

// NewGate returns a gate with no agent under permissions yet.
func NewGate(o GateOptions) *Gate {
	if o.Timeout <= 0 {
		o.Timeout = AskTimeout
	}
	if o.Publish == nil {
		o.Publish = func(event.Payload) {}
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	ids := o.Broker
	if ids == nil {
		ids = NewBroker()
	}
	return &Gate{o: o, ids: ids, policies: map[string]*Policy{}, auto: map[string]int{}}
}

// Add puts agent's calls under p.
func (g *Gate) Add(agent string, p *Policy) {
	g.mu.Lock()
	g.policies[agent] = p
	g.mu.Unlock()
}

// Guarded reports whether agent's calls are checked.
func (g *Gate) Guarded(agent string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.policies[agent] != nil
}

// Check decides agent's call of tool with args (the model's JSON) and returns "" when it may
// run, or the refusal the model gets as the call's result. An ask waits for the person, the
// timeout or ctx, holding no lock: other agents go on meanwhile.
func (g *Gate) Check(ctx context.Context, agent, tool, args string) (refusal string) {
	g.mu.Lock()
	p := g.policies[agent]
	g.mu.Unlock()
	if p == nil {
		return ""
	}
	v, checked := p.Decide(tool, args)
	if !checked {
		return ""
	}
	d := decision{agent: agent, tool: tool, args: args, v: v, id: g.ids.newID(), decision: v.Decision, by: event.ByRule}
	if v.Decision == Ask {
		g.ask(ctx, p, &d)
	}
	g.record(p, d)
	if d.decision == Allow {
		return ""
	}
	return d.refusal(p, g.o.Timeout)
}

// decision is one call's way through the gate.
type decision struct {
	agent, tool, args string
	v                 Verdict
	id                string
	decision, by      string
	asked             bool
}

func (g *Gate) ask(ctx context.Context, p *Policy, d *decision) {
	d.asked = true
	if b := g.o.Broker; b != nil {
		ch := b.open(d.id)
		g.o.Publish(event.PermissionAsked{Agent: d.agent, ID: d.id, Tool: d.tool, Action: d.v.Target.Action,
			Target: g.o.Redact(clipTarget(d.v.Target.Target)), Rule: d.v.Rule, Risk: d.v.Risk, TimeoutSeconds: g.o.Timeout.Seconds()})
		answer, why := b.wait(ctx, d.id, ch, g.o.Timeout)
		switch why {
		case "person":
			d.decision, d.by = answer, event.ByPerson
			g.mu.Lock()
			delete(g.auto, d.agent) // a person weighed in: the run of automatic approvals ends
			g.mu.Unlock()
			return
		case "cancelled":
			d.decision, d.by = Deny, event.ByCancelled
			return
		}
		d.by = event.ByTimeout
	} else {
		d.by = event.ByAutomationDefault
	}
	d.decision = p.Automatic(d.v)
	if d.decision == Allow && p.maxAuto > 0 {
		g.mu.Lock()
		g.auto[d.agent]++
		over := g.auto[d.agent] > p.maxAuto
		g.mu.Unlock()
		if over {
			d.decision, d.by = Deny, event.ByBudget
		}
	}
}

// refusal is what the model reads instead of the call's result.
func (d decision) refusal(p *Policy, timeout time.Duration) string {
	const after = "; the call did not run. Do not try to get around this with another tool or another spelling of the call: " +
		"do the task another way, or say in your answer what you would need."
	switch {
	case d.v.Rule == "hardline", d.v.Rule == RoleRule:
		return "denied by permissions: " + d.v.Reason + after
	case d.by == event.ByRule:
		return "denied by permissions rule " + d.v.Rule + after
	case d.by == event.ByPerson:
		return fmt.Sprintf("denied by permissions: the person asked to approve %s %s said no%s", d.v.Target.Action, clipTarget(d.v.Target.Target), after)
	case d.by == event.ByCancelled:
		return "not run: the session ended while the call waited for approval"
	case d.by == event.ByBudget:
		return fmt.Sprintf("denied by permissions: %d calls in a row were approved without a person (max_consecutive_auto); a person must approve the next%s", p.maxAuto, after)
	}
	why := "nobody was there to approve it"
	if d.by == event.ByTimeout {
		why = fmt.Sprintf("nobody answered the approval request within %s", timeout)
	}
	if p.automation == rule.RiskBased {
		return fmt.Sprintf("denied by automation policy (automation_default: risk-based): %s is high-risk (%s) and %s. Choose a lower-risk action%s",
			d.tool, d.v.Reason, why, after)
	}
	return fmt.Sprintf("denied by automation policy (automation_default: %s): %s needs approval (%s) and %s%s", p.automation, d.tool, d.v.Reason, why, after)
}

// record publishes the decision, with what the audit ledger records of it (LedgerSink).
func (g *Gate) record(p *Policy, d decision) {
	g.o.Publish(event.PermissionDecided{Agent: d.agent, ID: d.id, Tool: d.tool, Decision: d.decision, By: d.by, Rule: d.v.Rule,
		Reason: g.o.Redact(d.v.Reason), Action: d.v.Target.Action, Target: g.o.Redact(clipTarget(d.v.Target.Target)), Risk: d.v.Risk,
		Args: g.o.Redact(clipTarget(d.args)), Asked: d.asked, Audit: p.audit})
}

// clipTarget caps what the events and the ledger quote of a call.
func clipTarget(s string) string { return clipTo(s, maxPreview) }

// clip caps what an error message quotes of a caller's value.
func clip(s string) string { return clipTo(s, 80) }

func clipTo(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
