package permission

import (
	"massgen/internal/permission/rule"

	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Decisions.
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// Roles are MassGen's per-agent presets (rules.py _ROLE_SPECS), one for each of
// rule.RoleNames: read-only (alias researcher) reads, asks before the network, and neither
// writes nor runs commands; read-write (alias implementer) adds no rules.
var Roles = map[string]struct{ allow, ask, deny []string }{
	"read-only":   {allow: []string{"read_file(*)"}, ask: []string{"read_url(*)"}, deny: []string{"write_file(*)", "command(*)"}},
	"researcher":  {allow: []string{"read_file(*)"}, ask: []string{"read_url(*)"}, deny: []string{"write_file(*)", "command(*)"}},
	"read-write":  {},
	"implementer": {},
}

// Config is one agent's permissions: block, after the top level and the agent's own block
// are merged.
type Config struct {
	AutomationDefault  string // "" is risk-based
	Role               string
	Allow, Ask, Deny   []string
	MaxConsecutiveAuto int  // 0: no cap
	NoAudit            bool // keep this agent's decisions out of the ledger
	// ReadOnlyTools are the MCP tools the config marks read-only, by exposed name
	// (mcp__server__tool, or mcp__server__* for a whole server): the only MCP tools the
	// read-only role runs besides file reads and fetches. A server's own readOnlyHint is not
	// enough: the server is not trusted to describe itself.
	ReadOnlyTools []string
}

// RoleRule is the Verdict.Rule of a call the read-only role refuses as a whole (an MCP tool
// not marked read-only), rather than by one of its rules.
const RoleRule = "role read-only"

// Policy decides the calls of one agent.
type Policy struct {
	deny, allow, ask []policyRule
	automation       string
	maxAuto          int
	dir              string
	audit            bool
	readOnly         bool     // the read-only role (or researcher)
	readOnlyTools    []string // Config.ReadOnlyTools
}

// policyRule is a rule.Rule with its pattern also resolved for file targets: a relative path pattern
// names files in the workspace, as the file tools' relative paths do.
type policyRule struct {
	rule.Rule
	pathPattern string
	// realPattern is pathPattern with the links in its literal directories resolved
	// (resolveLinks), matched too: the workspace checks resolved paths.
	realPattern string
}

// NewPolicy builds the policy of an agent whose workspace is dir ("" without one).
func NewPolicy(c Config, dir string) (*Policy, error) {
	p := &Policy{automation: c.AutomationDefault, maxAuto: c.MaxConsecutiveAuto, dir: dir, audit: !c.NoAudit}
	if p.automation == "" {
		p.automation = rule.RiskBased
	}
	if !contains(rule.AutomationDefaults, p.automation) {
		return nil, fmt.Errorf("automation_default %q: use %s", p.automation, strings.Join(rule.AutomationDefaults, ", "))
	}
	var allow, ask, deny []string
	if c.Role != "" {
		r, ok := Roles[strings.ToLower(strings.TrimSpace(c.Role))]
		if !ok {
			return nil, fmt.Errorf("unknown role %q: use %s", c.Role, strings.Join(rule.RoleNames, ", "))
		}
		allow, ask, deny = r.allow, r.ask, r.deny
		name := strings.ToLower(strings.TrimSpace(c.Role))
		p.readOnly = name == "read-only" || name == "researcher"
		p.readOnlyTools = c.ReadOnlyTools
	}
	// Every scope's rules go into one bucket per decision, so deny wins across scopes: a role's
	// write denial cannot be loosened by an allow rule (MassGen's PermissionRuleSet.merge).
	for _, b := range []struct {
		dst   *[]policyRule
		texts []string
	}{{&p.deny, slices.Concat(deny, c.Deny)}, {&p.allow, slices.Concat(allow, c.Allow)}, {&p.ask, slices.Concat(ask, c.Ask)}} {
		for _, t := range b.texts {
			r, err := rule.Parse(t)
			if err != nil {
				return nil, err
			}
			pp := resolvePattern(r.Pattern, dir)
			*b.dst = append(*b.dst, policyRule{Rule: r, pathPattern: pp, realPattern: resolveLinks(pp)})
		}
	}
	return p, nil
}

// resolvePattern anchors a relative path pattern in the workspace: write_file(./**) and
// write_file(src/*) name the workspace's files. Patterns that start with a wildcard match
// anywhere, as written.
func resolvePattern(pattern, dir string) string {
	if dir == "" || pattern == "" || filepath.IsAbs(pattern) || strings.ContainsRune("*?[", rune(pattern[0])) {
		return pattern
	}
	trail := ""
	if strings.HasSuffix(pattern, "/") {
		trail = "/"
	}
	return filepath.Join(dir, pattern) + trail
}

func (r policyRule) matches(t Target) bool {
	if r.Action != rule.ActionAny && r.Action != t.Action {
		return false
	}
	if t.path {
		return rule.Match(r.pathPattern, t.Target) || (r.realPattern != r.pathPattern && rule.Match(r.realPattern, t.Target))
	}
	return rule.Match(r.Pattern, t.Target)
}

// Verdict is the engine's decision on one call, before anybody is asked.
type Verdict struct {
	Decision string // Allow, Ask or Deny
	// Rule is the rule that decided (as written), "hardline" for the catastrophic-command
	// floor, or "" when the risk tier decided.
	Rule   string
	Risk   string
	Target Target // the target that decided (the first, when the risk tier did)
	// Reason says why, for the model and the ledger.
	Reason string
}

// Decide judges the call of tool with args; checked is false for calls no rule applies to
// (they run).
func (p *Policy) Decide(tool, args string) (v Verdict, checked bool) {
	targets, checked := Classify(tool, args, p.dir)
	if !checked {
		return Verdict{Decision: Allow}, false
	}
	first := Target{Action: rule.ActionMCP, Target: tool}
	if len(targets) > 0 {
		first = targets[0]
	}
	cmd := ""
	if first.Action == rule.ActionCommand {
		cmd = first.Target
	}
	risk := Risk(tool, cmd)
	for _, c := range hardlineTexts(first, args) {
		if why := Hardline(c); why != "" {
			return Verdict{Decision: Deny, Rule: "hardline", Risk: RiskHigh, Target: first, Reason: "hardline block: " + why}, true
		}
	}
	if why := p.roleRefusal(tool, targets); why != "" {
		return Verdict{Decision: Deny, Rule: RoleRule, Risk: risk, Target: first, Reason: why}, true
	}
	for _, bucket := range []struct {
		rules    []policyRule
		decision string
	}{{p.deny, Deny}, {p.allow, Allow}, {p.ask, Ask}} {
		if bucket.decision == Allow {
			// An allow covers the call only when it covers every target it acts on.
			if r, ok := p.allowAll(targets); ok {
				return Verdict{Decision: Allow, Rule: r, Risk: risk, Target: first, Reason: "allowed by permissions rule " + r}, true
			}
			continue
		}
		for _, t := range targets {
			for _, r := range bucket.rules {
				if r.matches(t) {
					what := map[string]string{Deny: "denied", Ask: "needs approval"}[bucket.decision]
					return Verdict{Decision: bucket.decision, Rule: r.Text, Risk: risk, Target: t,
						Reason: what + " by permissions rule " + r.Text}, true
				}
			}
		}
	}
	if risk == RiskLow {
		return Verdict{Decision: Allow, Risk: risk, Target: first, Reason: "low-risk operation"}, true
	}
	return Verdict{Decision: Ask, Risk: risk, Target: first, Reason: risk + "-risk operation: " + tool}, true
}

// roleRefusal is why the read-only role refuses an MCP tool: one the classifier cannot place
// among reads, writes, commands and fetches may do anything, so it runs only when the config
// marks it read-only. "" when the role lets the call through to the rules.
func (p *Policy) roleRefusal(tool string, targets []Target) string {
	if !p.readOnly || !strings.HasPrefix(tool, "mcp__") {
		return ""
	}
	for _, t := range targets {
		if t.Action != rule.ActionMCP {
			continue
		}
		for _, pat := range p.readOnlyTools {
			if rule.Match(pat, tool) {
				return ""
			}
		}
		return "the read-only role runs only the MCP tools the config marks read-only, and " + tool +
			" is not marked (mark its server read_only: true, or list the tool in the server's read_only_tools, if it only reads)"
	}
	return ""
}

// allowAll returns the first allow rule of the call when every target has one.
func (p *Policy) allowAll(targets []Target) (string, bool) {
	if len(targets) == 0 || len(p.allow) == 0 {
		return "", false
	}
	first := ""
	for _, t := range targets {
		found := false
		for _, r := range p.allow {
			if r.matches(t) {
				if first == "" {
					first = r.Text
				}
				found = true
				break
			}
		}
		if !found {
			return "", false
		}
	}
	return first, true
}

// hardlineTexts are the strings the hardline floor checks: the command line, and the
// arguments MassGen reads a command from in any tool (command, cmd, script, code).
func hardlineTexts(first Target, args string) []string {
	var out []string
	if first.Action == rule.ActionCommand {
		out = append(out, first.Target)
	}
	var params map[string]any
	if json.Unmarshal([]byte(args), &params) == nil {
		for _, k := range []string{"command", "cmd", "script", "code"} {
			if s, ok := params[k].(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// Automatic is what automation_default makes of an ask nobody answers.
func (p *Policy) Automatic(v Verdict) string {
	switch p.automation {
	case rule.AllowAll:
		return Allow
	case rule.DenyAll:
		return Deny
	}
	if v.Risk == RiskHigh {
		return Deny
	}
	return Allow
}

// AutomationDefault is the policy's automation_default.
func (p *Policy) AutomationDefault() string { return p.automation }

func contains(list []string, s string) bool { return slices.Contains(list, s) }
