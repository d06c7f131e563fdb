package config

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// MassGen's permissions: block (v0.1.97): each problem is reported at its key path, so
// --validate names the rule to fix.
func TestParse_Permissions(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"massgen's example", scripted("      answers: [hi]\n      permissions:\n        enabled: true\n        automation_default: risk-based\n        role: read-write\n        rules:\n          deny: [\"command(git push --force*)\"]\n"), nil},
		{"top level", okAgents + "permissions:\n  rules: {allow: [\"write_file(./**)\", mcp(linear/*)], ask: [read_url], deny: [\"*(*secret*)\"]}\n", nil},
		{"bare switch", okAgents + "permissions: true\n", nil},
		{"bad rule", okAgents + "permissions:\n  rules:\n    deny: [\"command(rm *)\", \"shell(rm *)\"]\n",
			[]string{`E 6:29 permissions.rules.deny[1] | deny[1] is not a permission rule: unknown action "shell"`}},
		{"unclosed", okAgents + "permissions: {rules: {ask: [\"command(ls\"]}}\n",
			[]string{`E 4:29 permissions.rules.ask[0] | has no closing parenthesis`}},
		{"rules as a list", okAgents + "permissions:\n  rules:\n    - deny: execute_command(rm *)\n",
			[]string{"E 6:5 permissions.rules | rules must be a mapping of allow, ask and deny lists, not a list | rules: {deny:"}},
		{"unknown key", scripted("      answers: [hi]\n      permissions: {nosuch: [\"*\"]}\n"),
			[]string{"E 6:21 agents[0].backend.permissions.nosuch | unknown permissions key `nosuch`"}},
		// The lists belong under rules:; written directly under permissions they say so.
		{"ask without rules", okAgents + "permissions: {ask: [\"command(echo*)\"]}\n",
			[]string{"E 4:15 permissions.ask | unknown permissions key `ask` | did you mean `rules: {ask: [...]}`? the allow, ask and deny lists go under rules:"}},
		{"deny without rules", scripted("      answers: [hi]\n      permissions: {deny: [\"*\"]}\n"),
			[]string{"E 6:21 agents[0].backend.permissions.deny | unknown permissions key `deny` | did you mean `rules: {deny: [...]}`?"}},
		{"automation_default", okAgents + "permissions: {automation_default: ask}\n",
			[]string{"E 4:35 permissions.automation_default | "}},
		{"role", okAgents + "permissions: {role: admin}\n", []string{"E 4:21 permissions.role | "}},
		{"file handshake", okAgents + "permissions: {approval_mode: file}\n",
			[]string{"E 4:15 permissions.approval_mode | `approval_mode: file` is not supported yet: the file handshake is not built"}},
		{"cap", okAgents + "permissions: {max_consecutive_auto: 0}\n", []string{"E 4:37 permissions.max_consecutive_auto | "}},
		{"not a mapping", okAgents + "permissions: [x]\n", []string{"E 4:14 permissions | permissions must be a mapping, not a list"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rep := Parse("c.yaml", []byte(tc.yaml))
			checkIssues(t, rep, tc.want)
		})
	}
}

// README's example permissions: block is valid as written, and means what it says.
func TestReadme_PermissionsExample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```yaml\npermissions:\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README has no ```yaml block starting with permissions:")
	}
	cfg, rep := Parse("readme.yaml", []byte(okAgents+"permissions:\n"+block))
	checkIssues(t, rep, nil)
	p := cfg.PermissionsFor(0)
	if p == nil || len(p.Allow) == 0 || len(p.Ask) == 0 || len(p.Deny) == 0 {
		t.Errorf("README's block gives %+v; want allow, ask and deny rules", p)
	}
}

func TestPermissionsFor(t *testing.T) {
	y := "agents:\n" +
		"  - id: a\n    backend: {type: scripted, answers: [hi], permissions: {role: read-only, automation_default: deny-all, rules: {allow: [\"read_file(*)\"]}}}\n" +
		"  - id: b\n    backend: {type: scripted, answers: [hi]}\n" +
		"  - id: c\n    backend: {type: scripted, answers: [hi], permissions: {enabled: false}}\n" +
		"permissions: {max_consecutive_auto: 3, rules: {deny: [\"command(rm *)\"]}}\n"
	cfg, rep := Parse("c.yaml", []byte(y))
	checkIssues(t, rep, nil)
	a := cfg.PermissionsFor(0)
	if a == nil || a.Role != "read-only" || a.AutomationDefault != "deny-all" || a.MaxConsecutiveAuto != 3 ||
		!slices.Equal(a.Deny, []string{"command(rm *)"}) || !slices.Equal(a.Allow, []string{"read_file(*)"}) {
		t.Errorf("a = %+v", a)
	}
	if b := cfg.PermissionsFor(1); b == nil || !slices.Equal(b.Deny, []string{"command(rm *)"}) || b.Role != "" {
		t.Errorf("b = %+v", b)
	}
	if c := cfg.PermissionsFor(2); c != nil {
		t.Errorf("c, whose block is off, = %+v", c)
	}
	none, _ := Parse("c.yaml", []byte(okAgents))
	if p := none.PermissionsFor(0); p != nil {
		t.Errorf("no block: %+v", p)
	}
}
