package config

import (
	"massgen/internal/permission/rule"

	"github.com/goccy/go-yaml/ast"
)

// MassGen v0.1.97's permission engine (massgen/permissions): a permissions: block per agent
// (agents[].backend.permissions, where MassGen reads it) or at the top level for every agent.

const (
	secPerm      = "permissions"
	secPermRules = "permissions.rules"
)

// Permissions is one permissions: block as written. The top-level block and an agent's own
// are merged by PermissionsFor.
type Permissions struct {
	// Enabled is false for `enabled: false` (or `permissions: false`): the block is off.
	Enabled bool
	// AutomationDefault is what an ask nobody answers becomes; "" when not written.
	AutomationDefault string
	Role              string // a role preset; "" for none
	// Allow, Ask and Deny are action(target) rules, each checked by rule.Parse.
	Allow, Ask, Deny []string
	// MaxConsecutiveAuto caps the automatic approvals in a row; 0 when not written.
	MaxConsecutiveAuto int
	// NoAudit is `audit: false`: no ledger.
	NoAudit bool
}

func perm(f func(p *Permissions, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { f(t.perm, v) }
}

func permRules(f func(p *Permissions, rules []string)) func(*walker, *target, field) {
	return func(w *walker, t *target, g field) { f(t.perm, w.ruleList(g)) }
}

func permissionKeys() []Key {
	return []Key{
		{Section: secPerm, Name: "enabled", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.97",
			Doc: "false turns the block off; a block without it is on.", set: perm(func(p *Permissions, v value) { p.Enabled = v.b })},
		{Section: secPerm, Name: "automation_default", Type: TypeEnum, Enum: rule.AutomationDefaults, Default: rule.RiskBased,
			Status: Implemented, Since: "0.1.97",
			Doc: "What an ask becomes when nobody can answer it (--automation, plain output) or nobody answers in time: risk-based denies high-risk calls and allows the rest, deny-all, allow-all.",
			set: perm(func(p *Permissions, v value) { p.AutomationDefault = v.s })},
		{Section: secPerm, Name: "role", Type: TypeEnum, Enum: rule.RoleNames, Status: Implemented, Since: "0.1.97",
			Doc: "A preset: read-only (alias researcher) reads files, asks before read_url, neither writes nor runs commands, and runs only the MCP tools mcp_servers marks read_only or read_only_tools; read-write (alias implementer) adds no rules. Its denials win over allow rules.",
			set: perm(func(p *Permissions, v value) { p.Role = v.s })},
		{Section: secPerm, Name: "rules", Type: TypeMapping, Status: Implemented, Since: "0.1.97", ex: "{deny: [command(git push*)]}",
			Doc: "allow, ask and deny lists of action(target) rules (see permissions.rules).", raw: permRuleSets},
		{Section: secPerm, Name: "audit", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.97",
			Doc: "Write every decision to approvals/ledger.jsonl in the turn's log folder (MassGen's ApprovalLedger lines).",
			set: perm(func(p *Permissions, v value) { p.NoAudit = !v.b })},
		{Section: secPerm, Name: "max_consecutive_auto", Type: TypeInt, Status: Implemented, Since: "0.1.97", check: atLeast(1),
			hint: "use 1 or more, or leave it out for no cap",
			Doc:  "Cap on the asks in a row automation_default approves for one agent; past it they are denied until a person answers one.",
			set:  perm(func(p *Permissions, v value) { p.MaxConsecutiveAuto = v.n })},
		{Section: secPerm, Name: "approval_mode", Type: TypeEnum, Enum: []string{"policy", "file"}, Accept: []string{"policy"}, Default: "policy",
			Status: OffOnly, Since: "0.1.97", Doc: "How asks reach a person: the views and automation_default (policy), or req_*.json and resp_*.json files (file).",
			Why:     "the file handshake is not built",
			Instead: "remove it; asks go to the live view, the dashboard (POST /api/sessions/{log}/{turn}/permissions/{ask_id}) or follow automation_default"},
		{Section: secPerm, Name: "approval_dir", Type: TypeString, Default: ".massgen/approvals", Status: Ignored, Since: "0.1.97", warn: true,
			Doc: "Where MassGen writes the file handshake and the ledger.",
			Why: "the ledger goes to approvals/ledger.jsonl in each turn's log folder"},
		{Section: secPerm, Name: "persist_approvals", Type: TypeBool, Default: "true", Status: Ignored, Since: "0.1.97", warn: true,
			Doc: "Keep a person's 'always' grants as allow rules in settings_path, and load them back.",
			Why: "a person's answer covers one call here (allow or deny); 'always' grants are not built, so none are kept or loaded"},
		{Section: secPerm, Name: "settings_path", Type: TypeString, Default: ".massgen/settings.local.json", Status: Ignored, Since: "0.1.97",
			Needs: "persist_approvals", Doc: "Where persist_approvals keeps the 'always' grants."},
		{Section: secPermRules, Name: "deny", Type: TypeStrings, Status: Implemented, Since: "0.1.97", ex: "[command(git push --force*)]",
			Doc: "Rules that refuse a call; checked first, so deny wins over any allow, in any scope.",
			raw: permRules(func(p *Permissions, r []string) { p.Deny = append(p.Deny, r...) })},
		{Section: secPermRules, Name: "allow", Type: TypeStrings, Status: Implemented, Since: "0.1.97", ex: "[write_file(./**)]",
			Doc: "Rules that let a call run without asking, even a risky one (an allow covers a call when it covers every path the call touches).",
			raw: permRules(func(p *Permissions, r []string) { p.Allow = append(p.Allow, r...) })},
		{Section: secPermRules, Name: "ask", Type: TypeStrings, Status: Implemented, Since: "0.1.97", ex: "[command(npm publish*)]",
			Doc: "Rules that make a call wait for a person's approval.",
			raw: permRules(func(p *Permissions, r []string) { p.Ask = append(p.Ask, r...) })},
	}
}

// permissionsBlock reads a permissions: block into the *Permissions dst returns: a mapping,
// true (on, with the defaults) or false (off).
func permissionsBlock(dst func(t *target) **Permissions) func(*walker, *target, field) {
	return func(w *walker, t *target, f field) {
		switch f.val.(type) {
		case nil:
			return
		case *ast.BoolNode:
			b, _ := w.boolean(f)
			*dst(t) = &Permissions{Enabled: b}
			return
		case *ast.MappingNode:
		default:
			w.errf(f, "write a mapping such as {rules: {deny: [\"command(rm -rf*)\"]}}, or false", "%s must be a mapping, not %s", f.key, kind(f.val))
			return
		}
		p := &Permissions{Enabled: true}
		sub := *t
		sub.perm = p
		w.walk(secPerm, f, &sub)
		*dst(t) = p
	}
}

// permRuleSets reads permissions.rules, saying how MassGen writes it when it is not a mapping.
func permRuleSets(w *walker, t *target, f field) {
	if _, ok := f.val.(*ast.SequenceNode); ok {
		w.errf(f, `write allow, ask and deny lists under it: rules: {deny: ["command(rm -rf *)"], allow: ["read_file(*)"]}`,
			"%s must be a mapping of allow, ask and deny lists, not a list", f.key)
		return
	}
	w.walk(secPermRules, f, t)
}

// ruleList reads a list of action(target) rules, each checked where it is written.
func (w *walker) ruleList(f field) []string {
	items, _ := w.list(f)
	var out []string
	for _, it := range items {
		s, ok := w.str(it)
		if !ok {
			continue
		}
		if _, err := rule.Parse(s); err != nil {
			w.errf(it, "write action(target), for example command(git push --force*) or write_file(/etc/**)",
				"%s is not a permission rule: %v", it.key, err)
			continue
		}
		out = append(out, s)
	}
	return out
}

// PermissionsFor is the permissions of agent i: the top-level block and the agent's own,
// merged as MassGen merges scopes. Rules add up (deny still wins across them); the agent's
// automation_default, role, audit and max_consecutive_auto replace the top level's. nil
// means the agent's calls are not checked: no block, or one turned off.
func (c *Config) PermissionsFor(i int) *Permissions {
	root, own := c.Permissions, c.Agents[i].Backend.Permissions
	if own != nil && !own.Enabled {
		return nil
	}
	if root != nil && !root.Enabled {
		root = nil
	}
	switch {
	case root == nil && own == nil:
		return nil
	case root == nil:
		return own
	case own == nil:
		return root
	}
	m := *root
	m.Allow = append(append([]string(nil), root.Allow...), own.Allow...)
	m.Ask = append(append([]string(nil), root.Ask...), own.Ask...)
	m.Deny = append(append([]string(nil), root.Deny...), own.Deny...)
	if own.AutomationDefault != "" {
		m.AutomationDefault = own.AutomationDefault
	}
	if own.Role != "" {
		m.Role = own.Role
	}
	if own.MaxConsecutiveAuto != 0 {
		m.MaxConsecutiveAuto = own.MaxConsecutiveAuto
	}
	m.NoAudit = root.NoAudit || own.NoAudit
	return &m
}
