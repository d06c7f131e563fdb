package command

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// danger is one of MassGen's always-refused command patterns.
type danger struct {
	re   *regexp.Regexp
	why  string
	hint string
}

// cmd matches where a command name can begin: at the start of a pipeline element, after
// assignments and wrappers such as env, xargs or nohup, with or without a directory
// (/usr/bin/sudo). Mentions in arguments (grep sudo) are not commands.
const cmd = `(?:^|[;&|(` + "`" + `\n]|\$\(|\b(?:then|do|else)\s)\s*(?:!\s*)?(?:\w+=\S*\s+)*` +
	`(?:(?:env|nohup|time|exec|command|builtin|nice|xargs|timeout\s+\S+)(?:\s+-\S+)*\s+)*(?:\S*/)?`

var dangers = sync.OnceValue(func() []danger {
	return []danger{
		{re: regexp.MustCompile(cmd + `rm\s+(?:-[\w-]+\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\s+(?:-[\w-]+\s+)*["']?(?:/|/\*|~|~/|~/\*|\*|\$HOME|\$\{HOME\}|\$HOME/\*)["']?(?:\s|$|[;&|)])`),
			why: "recursive deletion of /, ~ or *", hint: "delete named files or directories inside your workspace"},
		{re: regexp.MustCompile(cmd + `dd\s`), why: "dd (raw disk copy)", hint: "use cp"},
		{re: regexp.MustCompile(`>\s*/dev/(?:sd|hd|nvme|xvd|vd|mmcblk|disk)`), why: "writing to a disk device"},
		{re: regexp.MustCompile(`:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}`), why: "fork bomb"},
		{re: regexp.MustCompile(`\w+\s*\(\s*\)\s*\{\s*\w+\s*\|\s*\w+\s*&\s*\}`), why: "fork bomb"},
		{re: regexp.MustCompile(cmd + `mv\s[^;&|]*\s/dev/null(?:\s|$|[;&|)])`), why: "moving files to /dev/null", hint: "delete them with rm"},
		{re: regexp.MustCompile(cmd + `(?:mkfs(?:\.\w+)?|fdisk|sfdisk|parted|wipefs)(?:\s|$)`), why: "formatting or partitioning disks"},
		{re: regexp.MustCompile(cmd + `format\s`), why: "formatting disks"},
		{re: regexp.MustCompile(cmd + `(?:sudo|su|doas)(?:\s|$)`), why: "privilege escalation (sudo, su)",
			hint: "commands run with your own rights only"},
		{re: regexp.MustCompile(cmd + `(?:chmod|chown|chgrp)(?:\s|$)`), why: "changing permissions or owners (chmod, chown)",
			hint: "run scripts with sh script.sh or python script.py instead of making them executable"},
	}
})

// commandFilter holds the compiled allow and block lists.
type commandFilter struct {
	allowed, blocked []*regexp.Regexp
	allowedSrc       []string
	err              error // invalid patterns: every command is refused with it
}

func newCommandFilter(allowed, blocked []string) commandFilter {
	f := commandFilter{allowedSrc: allowed}
	var errs []error
	for i, p := range allowed {
		re, err := regexp.Compile(`^(?:` + p + `)`)
		if err != nil {
			errs = append(errs, fmt.Errorf("command_line_allowed_commands[%d]: invalid regular expression %q: %w", i, p, err))
			continue
		}
		f.allowed = append(f.allowed, re)
	}
	for i, p := range blocked {
		re, err := regexp.Compile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("command_line_blocked_commands[%d]: invalid regular expression %q: %w", i, p, err))
			continue
		}
		f.blocked = append(f.blocked, re)
	}
	f.err = errors.Join(errs...)
	return f
}

// refuse returns why command must not run, or "".
func (f commandFilter) refuse(command string) string {
	if f.err != nil {
		return fmt.Sprintf("Commands are disabled: the command filter is misconfigured: %v", f.err)
	}
	for _, d := range dangers() {
		if m := d.re.FindString(command); m != "" {
			msg := fmt.Sprintf("Dangerous command pattern: %s (%q) is never run", d.why, strings.TrimSpace(m))
			if d.hint != "" {
				msg += "; " + d.hint
			}
			return msg + "."
		}
	}
	trimmed := strings.TrimSpace(command)
	if len(f.allowed) > 0 {
		ok := false
		for _, re := range f.allowed {
			ok = ok || re.MatchString(trimmed)
		}
		if !ok {
			return fmt.Sprintf("Command not allowed: it must match one of command_line_allowed_commands (from its start): %s.",
				strings.Join(f.allowedSrc, ", "))
		}
	}
	for _, re := range f.blocked {
		if re.MatchString(command) {
			return fmt.Sprintf("Command blocked by command_line_blocked_commands pattern %q.", re.String())
		}
	}
	return ""
}

// token is a word or an operator of a shell command line.
type token struct {
	text string
	op   bool
}

// shellWords splits a command line into words and operators (; & | && || newlines, parentheses
// and redirections), honouring quotes and backslashes. It is not a shell parser: it finds the
// literal paths a command obviously writes to, nothing more.
func shellWords(s string) []token {
	var toks []token
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			toks = append(toks, token{text: cur.String()})
		}
		cur.Reset()
		inWord = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			flush()
		case c == '>' || c == '<':
			if w := cur.String(); inWord && (w == "&" || strings.Trim(w, "0123456789") == "") {
				cur.Reset()
				inWord = false // a file-descriptor prefix (2>, &>)
			}
			flush()
			op := string(c)
			for i+1 < len(s) && strings.IndexByte("<>|&", s[i+1]) >= 0 {
				i++
				op += string(s[i])
			}
			toks = append(toks, token{text: op, op: true})
		case strings.IndexByte(";&|()\n", c) >= 0:
			flush()
			op := string(c)
			if i+1 < len(s) && (s[i+1] == '&' || s[i+1] == '|') && c != ';' {
				i++
				op += string(s[i])
			}
			toks = append(toks, token{text: op, op: true})
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return toks
}

var (
	allArgsWrite = map[string]bool{"rm": true, "rmdir": true, "touch": true, "mkdir": true, "tee": true, "truncate": true, "unlink": true}
	lastArgWrite = map[string]bool{"mv": true, "cp": true, "ln": true, "install": true, "rsync": true}
	deleting     = map[string]bool{"rm": true, "rmdir": true, "unlink": true}
)

// writeTargets returns the literal paths command writes to through redirections or common
// file commands, each with whether it deletes.
func writeTargets(command string) (paths []string, deletes []bool) {
	toks := shellWords(command)
	var words []string
	verb := ""
	end := func() {
		var args []string
		for _, w := range words {
			if !strings.HasPrefix(w, "-") {
				args = append(args, w)
			}
		}
		switch {
		case allArgsWrite[verb]:
			for _, w := range args {
				paths, deletes = append(paths, w), append(deletes, deleting[verb])
			}
		case lastArgWrite[verb] && len(args) >= 2:
			paths, deletes = append(paths, args[len(args)-1]), append(deletes, false)
			if verb == "mv" {
				for _, w := range args[:len(args)-1] {
					paths, deletes = append(paths, w), append(deletes, true)
				}
			}
		}
		words, verb = nil, ""
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.op && strings.HasPrefix(t.text, ">") && !strings.Contains(t.text, "&"):
			if i+1 < len(toks) && !toks[i+1].op {
				i++
				paths, deletes = append(paths, toks[i].text), append(deletes, false)
			}
		case t.op && (strings.HasPrefix(t.text, "<") || strings.Contains(t.text, ">")):
			if i+1 < len(toks) && !toks[i+1].op {
				i++ // an input file or a file descriptor
			}
		case t.op:
			end()
		case verb == "" && strings.Contains(t.text, "=") && !strings.HasPrefix(t.text, "="):
			// an assignment before the command
		case verb == "":
			verb = filepath.Base(t.text)
		default:
			words = append(words, t.text)
		}
	}
	end()
	return paths, deletes
}

// harmlessTarget are device files commands may always write to.
func harmlessTarget(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}
