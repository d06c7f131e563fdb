package permission

import (
	"massgen/internal/lazy"
	"strconv"
	"strings"
)

// The command classifier is advice for the risk tier, not a wall: the sandbox and the
// workspace's confinement enforce. So it errs one way only. A command is low-risk when it is
// one plain word from a short list of read-only programs with plain arguments; anything the
// shell could turn into something else (operators, expansions, quoting in the command word,
// launchers, interpreters) is at least medium, whatever its first word. MassGen's classifier
// read only the first word, and `echo ok; python3 -c ...`, `env python3 ...` and `\c\u\r\l`
// got past it.

// lowPrograms are the read-only programs, each with the arguments that would make it write,
// run something or reach the network.
var lowPrograms = map[string][]string{
	"ls": nil, "ll": nil, "cat": nil, "head": nil, "tail": nil, "pwd": nil, "echo": nil,
	"which": nil, "whoami": nil, "wc": nil, "grep": nil, "stat": nil,
	"date": {"-s", "--set"},
	"file": {"-C", "--compile"},
	"tree": {"-o"},
	"find": {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"},
}

// lowGit are the read-only git subcommands, which must directly follow git (git -c ... can
// set an external diff, a pager or an ssh command).
var lowGit = map[string]bool{"status": true, "diff": true, "log": true, "show": true, "branch": true, "remote": true, "config": true}

// gitWriteArgs make a read-only git subcommand write or run something.
var gitWriteArgs = []string{"--output", "--ext-diff", "--exec", "-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy",
	"--set-upstream-to", "--unset-upstream", "--edit-description", "add", "remove", "rm", "rename", "set-url", "set-head", "prune", "update"}

// shellSpecial are the bytes that make the shell do more than run one program with literal
// arguments: operators, redirections, expansions, quoting and escapes, subshells, comments.
const shellSpecial = ";&|<>$`\\\n\r(){}#!"

// plainLow reports whether command is one read-only program with plain arguments.
func plainLow(command string) bool {
	for i := 0; i < len(command); i++ {
		if c := command[i]; strings.IndexByte(shellSpecial, c) >= 0 || c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	words := strings.Fields(command)
	if len(words) == 0 {
		return false
	}
	name, args := words[0], words[1:]
	if name == "git" {
		if len(args) == 0 || !lowGit[args[0]] {
			return false
		}
		if args[0] == "config" && (len(args) < 2 || args[1] != "--get") {
			return false
		}
		return !anyArg(args[1:], gitWriteArgs)
	}
	risky, ok := lowPrograms[name] // an exact word: no path, quote, glob or assignment in it
	return ok && !anyArg(args, risky)
}

// anyArg reports whether an argument is one of risky, or one of them with =value.
func anyArg(args, risky []string) bool {
	for _, a := range args {
		for _, r := range risky {
			if a == r || strings.HasPrefix(a, r+"=") {
				return true
			}
		}
	}
	return false
}

// unquote undoes the quoting that hides a word from a pattern: backslashes, quotes and
// $'...' escapes (\x63, \143), so that c""url, 'c'url, \c\u\r\l and $'\x63url' read curl.
func unquote(command string) string {
	var b strings.Builder
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case c == '$' && i+1 < len(command) && command[i+1] == '\'':
			end := strings.IndexByte(command[i+2:], '\'')
			if end < 0 {
				end = len(command) - i - 2
			}
			b.WriteString(ansiC(command[i+2 : i+2+end]))
			i += 2 + end
		case c == '\\' || c == '\'' || c == '"':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

var ansiEscape = lazy.Regexp(`\\(?:x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)`)

// ansiC decodes the escapes of a $'...' string.
func ansiC(s string) string {
	return ansiEscape().ReplaceAllStringFunc(s, func(e string) string {
		switch {
		case e[1] == 'x':
			n, _ := strconv.ParseUint(e[2:], 16, 8)
			return string(rune(n))
		case e[1] >= '0' && e[1] <= '7':
			n, _ := strconv.ParseUint(e[1:], 8, 8)
			return string(rune(n))
		}
		return e[1:]
	})
}

// egressCode are signs that a program's inline code or arguments reach the network.
var egressCode = lazy.Regexp(`(?i)\b(?:urllib|requests\.|http\.client|httpx|aiohttp|socket|fetch\(|XMLHttpRequest|net/http|LWP::|open-uri|Net::HTTP|net\.connect)|/dev/(?:tcp|udp)/|\b(?:https?|ftp)://`)

// commandRisk tiers a command line.
func commandRisk(command string) string {
	if command == "" {
		return RiskMedium
	}
	for _, text := range []string{command, unquote(command)} {
		if egressCommand().MatchString(text) || egressCode().MatchString(text) {
			return RiskHigh
		}
		for _, re := range highCommand() {
			if re.MatchString(text) {
				return RiskHigh
			}
		}
	}
	if plainLow(command) {
		return RiskLow
	}
	return RiskMedium
}
