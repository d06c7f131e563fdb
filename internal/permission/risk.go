package permission

import (
	"massgen/internal/lazy"
	"massgen/internal/permission/rule"
	"sync"

	"regexp"
	"strings"
)

// Risk tiers (MassGen's RiskTier): what a call no rule covers can do.
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

// hardline() are the catastrophic commands MassGen's hardline.py denies whatever the rules,
// the role or automation_default say: deleting /, fork bombs, writing or formatting disks.
type hardlineRule struct {
	re  *regexp.Regexp
	why string
}

var hardline = sync.OnceValue(func() []hardlineRule {
	return []hardlineRule{
		{regexp.MustCompile(`\brm\s+(?:-{1,2}[A-Za-z-]+\s+)*-[A-Za-z]*[rRf][A-Za-z]*\s+(?:-{1,2}[A-Za-z-]+\s+)*/(?:\*|\s|$|;|&|\|)`), "recursive delete of / is never allowed"},
		{regexp.MustCompile(`:\s*\(\s*\)\s*\{\s*:\s*\|\s*:?\s*&\s*\}\s*;\s*:`), "fork bombs are never allowed"},
		{regexp.MustCompile(`\bdd\b.*\bof=/dev/(?:sd|nvme|disk|hd|vd|xvd)`), "writing a raw disk with dd is never allowed"},
		{regexp.MustCompile(`\bmkfs(?:\.\w+)?\b`), "formatting a file system is never allowed"},
		{regexp.MustCompile(`>\s*/dev/(?:sd|nvme|disk|hd|vd|xvd)[a-z]*[0-9]*\b`), "overwriting a raw disk is never allowed"},
		{regexp.MustCompile(`\bmv\b.+\s/dev/null\b`), "moving files into /dev/null is never allowed"},
	}
})

// Hardline returns why the command is never allowed, or "".
func Hardline(command string) string {
	for _, h := range hardline() {
		if h.re.MatchString(command) {
			return h.why
		}
	}
	return ""
}

// highCommand() are dangerous, irreversible or privileged commands (MassGen's _HIGH_COMMAND).
var highCommand = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`\bsudo\b|\bsu\b`),
		regexp.MustCompile(`\bgit\s+push\b.*--force|\bgit\s+push\s+-f\b|--force-with-lease`),
		regexp.MustCompile(`\bgit\s+(?:reset\s+--hard|clean\s+-[a-z]*f)`),
		regexp.MustCompile(`\b(?:npm|yarn|pnpm)\s+publish\b|\btwine\s+upload\b|\bpip\s+.*\bupload\b|\bgh\s+release\s+create\b|\bdocker\s+push\b`),
		regexp.MustCompile(`\bchmod\b|\bchown\b`),
		regexp.MustCompile(`\bdd\b|\bmkfs|\bfdisk\b`),
		regexp.MustCompile(`\brm\s+-[a-zA-Z]*[rR]`),
		regexp.MustCompile(`\bkill(?:all)?\b|\bpkill\b|\bshutdown\b|\breboot\b`),
		regexp.MustCompile(`\bcrontab\b|\bsystemctl\b|\blaunchctl\b`),
	}
})

// egressCommand is network egress from a command: an exfiltration channel.
var egressCommand = lazy.Regexp(`\b(?:curl|wget|nc|ncat|netcat|ssh|scp|sftp|rsync|telnet)\b`)

// riskHints are MassGen's risk_classifier.py name hints; they differ a little from rules.py's.
var (
	riskCommandHints = []string{"bash", "shell", "exec", "execute_command", "run_command", "terminal"}
	riskNetworkHints = []string{"fetch", "read_url", "websearch", "web_search", "browse", "http", "curl_"}
	riskReadHints    = []string{"read", "grep", "glob", "list", "cat_", "view", "search"}
	riskWriteHints   = []string{"write", "edit", "create", "move", "copy", "apply_patch", "notebook"}
)

// Risk tiers a call by its blast radius, as MassGen's RiskClassifier: commands by what they
// run (commandRisk), network tools high, deletes medium, reads and workspace writes low, anything else
// medium. command is the call's command line, if it has one.
func Risk(tool, command string) string {
	t := strings.ToLower(tool)
	if uses, ok := workspaceTools[tool]; ok && uses[0].action != rule.ActionCommand {
		// massgen's own file tools stay inside what the workspace grants.
		if tool == "delete_file" {
			return RiskMedium
		}
		return RiskLow
	}
	if workspaceTools[tool] != nil || hasAny(t, riskCommandHints) {
		return commandRisk(command)
	}
	switch {
	case hasAny(t, riskNetworkHints):
		return RiskHigh
	case strings.Contains(t, "delete") || strings.Contains(t, "remove") || strings.Contains(t, "rm_"):
		return RiskMedium
	case hasAny(t, riskReadHints), hasAny(t, riskWriteHints):
		return RiskLow
	}
	return RiskMedium
}
