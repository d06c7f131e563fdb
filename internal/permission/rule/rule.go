// Package rule is the grammar of MassGen's permission rules, `action(target)` with an
// fnmatch pattern, and the words a permissions: block may use (automation defaults, role
// names). It imports nothing of massgen's, so config checks what a user wrote with it and the
// permission engine, which decides calls, builds on it.
package rule

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The actions of MassGen's rule vocabulary (rules.py ACTIONS). Any matches every action.
const (
	ActionCommand = "command"    // execute_command and start_background_shell: the command line
	ActionRead    = "read_file"  // file reads: the path
	ActionWrite   = "write_file" // file writes, edits, moves and deletes: the path
	ActionURL     = "read_url"   // network fetches: the URL
	ActionMCP     = "mcp"        // MCP calls (server/tool) and custom tools (their name)
	ActionAny     = "*"
)

// Actions lists the actions a rule may name.
var Actions = []string{ActionCommand, ActionRead, ActionWrite, ActionURL, ActionMCP, ActionAny}

// What an ask becomes when nobody answers it (MassGen's AutomationDefault).
const (
	RiskBased = "risk-based" // high risk is denied, low and medium allowed (MassGen's default)
	DenyAll   = "deny-all"
	AllowAll  = "allow-all"
)

// AutomationDefaults lists the automation_default values.
var AutomationDefaults = []string{RiskBased, DenyAll, AllowAll}

// RoleNames lists the role presets a permissions: block may name, in a stable order; the
// permission engine holds what each one allows.
var RoleNames = []string{"read-only", "researcher", "read-write", "implementer"}

// MaxLen caps one rule; a config holds rules a person wrote, not data.
const MaxLen = 4096

// Rule is one parsed `action(target)` rule. A bare action (`read_url`) has the target `*`.
type Rule struct {
	Action  string
	Pattern string
	// Text is the rule as written, for messages ("denied by permissions rule command(rm *)").
	Text string
}

// String is the rule in its canonical form.
func (r Rule) String() string { return r.Action + "(" + r.Pattern + ")" }

// Parse reads one rule. MassGen logs and drops a malformed rule and keeps a rule with an
// unknown action, which then never matches; both are errors here, so a rule the user counts
// on is never silently void.
func Parse(s string) (Rule, error) {
	if len(s) > MaxLen {
		return Rule{}, fmt.Errorf("the rule is %d bytes long; at most %d", len(s), MaxLen)
	}
	if !utf8.ValidString(s) {
		return Rule{}, fmt.Errorf("the rule is not valid UTF-8")
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return Rule{}, fmt.Errorf("the rule is empty; write action(target), for example command(git push*)")
	}
	name, rest := t, ""
	if i := strings.IndexByte(t, '('); i >= 0 {
		name, rest = strings.TrimRightFunc(t[:i], unicode.IsSpace), t[i:]
		if !strings.HasSuffix(rest, ")") {
			return Rule{}, fmt.Errorf("%q has no closing parenthesis; write action(target), for example write_file(/etc/**)", clip(t))
		}
		rest = rest[1 : len(rest)-1]
	}
	if !validAction(name) {
		return Rule{}, fmt.Errorf("%q does not start with an action; write action(target) with an action among %s", clip(t), strings.Join(Actions, ", "))
	}
	known := false
	for _, a := range Actions {
		known = known || a == name
	}
	if !known {
		return Rule{}, fmt.Errorf("unknown action %q in %q; the actions are %s", clip(name), clip(t), strings.Join(Actions, ", "))
	}
	pattern := rest
	if !strings.Contains(t, "(") {
		pattern = "*"
	}
	if err := checkPattern(pattern); err != nil {
		return Rule{}, fmt.Errorf("%q: %v", clip(t), err)
	}
	return Rule{Action: name, Pattern: pattern, Text: t}, nil
}

// validAction is MassGen's action syntax: a letter, _ or * and then word characters or *.
func validAction(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		word := c == '_' || c == '*' || (c < utf8.RuneSelf && (unicode.IsLetter(c) || (i > 0 && unicode.IsDigit(c))))
		if !word {
			return false
		}
	}
	return true
}

// checkPattern refuses a bracket expression that is never closed, which fnmatch would read
// as a literal "[" and the user almost never means.
func checkPattern(pattern string) error {
	p := []rune(pattern)
	for i := 0; i < len(p); i++ {
		if p[i] != '[' {
			continue
		}
		end := classEndRunes(p, i)
		if end < 0 {
			return fmt.Errorf("the [ at character %d is never closed; write [abc] for one of a, b, c, or [[] for a literal [", i+1)
		}
		i = end
	}
	return nil
}

// Matches reports whether the rule covers action and target.
func (r Rule) Matches(action, target string) bool {
	if r.Action != ActionAny && r.Action != action {
		return false
	}
	return Match(r.Pattern, target)
}

func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	n := 80
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
