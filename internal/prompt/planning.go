package prompt

import (
	"massgen/internal/lazy"
	"strings"
	"unicode/utf8"

	"massgen/internal/provider"
)

// Planning mode (MassGen's coordination.enable_planning_mode): before coordination one agent
// judges whether the task needs MCP tools whose effects cannot be undone; if so, those tools
// are held back while the agents coordinate, and only the winner runs them when it presents.

// PlanningInstruction is the built-in instruction added to the coordination system prompt
// while tools are held back.
const PlanningInstruction = `Planning mode is on: some tools act on the outside world and their effects cannot be undone, ` +
	`so they are held back while the agents compare answers. Do not try to carry the task out with them: ` +
	`describe in your answer exactly what you would do with them (which tool, with which arguments, in which order). ` +
	`The agent chosen to present the final answer will carry out the chosen plan. ` +
	`Tools that only read, and your own workspace, remain available.`

// Planning returns the section appended to the coordination system prompt: instruction, or the
// built-in one when empty, and the tools held back (nil: every MCP tool).
func Planning(instruction string, held []string) string {
	if strings.TrimSpace(instruction) == "" {
		instruction = PlanningInstruction
	}
	what := "every MCP tool (mcp__...)"
	if len(held) > 0 {
		what = strings.Join(held, ", ")
	}
	return "\nPLANNING MODE\n" + strings.TrimSpace(instruction) + "\nHeld back until the final presentation: " + what + "\n"
}

// PlanningRelease is added to the presentation system prompt after tools were held back.
const PlanningRelease = "\nThe tools held back while the agents planned are available now: carry out the plan of the " +
	"final answer with them, then report what you did.\n"

// PlanningCheck is the one question put, without tools, to the agent that judges whether the
// task needs irreversible actions, with the MCP tools the agents have.
func PlanningCheck(question string, tools []provider.ToolSpec) string {
	var b strings.Builder
	b.WriteString(`Before several agents work on the task below, decide whether carrying it out needs tools ` +
		`whose effects cannot be undone: sending messages, posting, buying, deleting or changing data outside a private ` +
		`scratch folder, deploying, and the like. Reading, searching and working in the agents' own temporary ` +
		`workspaces are safe.

TASK:
`)
	b.WriteString(Escape(strings.TrimSpace(question)))
	b.WriteString("\n\nTOOLS:\n")
	for _, t := range tools {
		b.WriteString("- " + t.Name)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(": " + oneLine(d, 300))
		}
		b.WriteString("\n")
	}
	b.WriteString(`
Reply with exactly two lines and nothing else:
IRREVERSIBLE: YES or NO
BLOCKED_TOOLS: the names of the tools above that must wait, separated by commas (empty when NO)
`)
	return b.String()
}

var (
	irreversibleLine = lazy.Regexp(`(?im)^\W*IRREVERSIBLE\W*:\W*(YES|NO)\b`)
	blockedLine      = lazy.Regexp(`(?im)^\W*BLOCKED_TOOLS\W*:(.*)$`)
	looseYes         = lazy.Regexp(`(?i)\byes\b`)
	looseNo          = lazy.Regexp(`(?i)\bno\b`)
)

// PlanningVerdict reads the judging agent's reply. irreversible says whether to hold tools
// back and blocked which (nil: all of them). A reply without the IRREVERSIBLE line is read
// loosely; one that says neither yes nor no, or both, holds every tool back: when in doubt,
// nothing irreversible happens before the winner is chosen.
func PlanningVerdict(reply string) (irreversible bool, blocked []string, how string) {
	m := irreversibleLine().FindStringSubmatch(reply)
	if m == nil {
		yes, no := looseYes().MatchString(reply), looseNo().MatchString(reply)
		switch {
		case no && !yes:
			return false, nil, "the reply said no, not in the requested format"
		case yes && !no:
			return true, nil, "the reply said yes, not in the requested format: every MCP tool held back"
		}
		return true, nil, "the reply was unclear: every MCP tool held back"
	}
	if strings.EqualFold(m[1], "NO") {
		return false, nil, "no irreversible action needed"
	}
	if b := blockedLine().FindStringSubmatch(reply); b != nil {
		for _, name := range strings.Split(b[1], ",") {
			if name = strings.Trim(strings.TrimSpace(name), "`*\"'"); name != "" {
				blocked = append(blocked, name)
			}
		}
	}
	if len(blocked) == 0 {
		return true, nil, "irreversible actions needed, no tool named: every MCP tool held back"
	}
	return true, blocked, "irreversible actions needed"
}

// oneLine puts s on one line, cut to about n bytes on a rune boundary.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
