package permission

import (
	"massgen/internal/permission/rule"

	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The gate judges the path a call names, before it runs. A tool reaches other paths too: the
// file a symbolic link leads to, every entry a walk, copy, comparison or snapshot visits. The
// workspace asks PathRefusal about each of them, so that a rule holds for every path a tool
// touches, after symlinks are resolved:
//   - a deny rule refuses the action on every path it matches: read_file(proj/private/**)
//     keeps proj/private's files out of read_file, list_directory, search_files, copy_file's
//     source, the comparisons, the media tools and the agent's shared snapshot;
//     write_file(...) keeps them from every write, delete, move and copy destination;
//   - an allow rule lets the path through even where an ask rule matches;
//   - an ask rule that matches the reached path but not the path the call named (which the
//     gate already put to the person) refuses it: the model names it in a call of its own,
//     and the gate asks.

// PathRefusal returns why the agent may not read (write false) or change abs, a resolved path
// one of its tools reached from named (the path the call named, as the gate judged it: joined
// to the workspace and cleaned), or "" when it may. It is safe for concurrent use.
func (p *Policy) PathRefusal(write bool, abs, named string) string {
	action := rule.ActionRead
	if write {
		action = rule.ActionWrite
	}
	t := Target{Action: action, Target: abs, path: true}
	for _, r := range p.deny {
		if r.matches(t) {
			return "denied by permissions rule " + r.Text
		}
	}
	for _, r := range p.allow {
		if r.matches(t) {
			return ""
		}
	}
	asked := Target{Action: action, Target: named, path: true}
	for _, r := range p.ask {
		if r.matches(t) && !r.matches(asked) {
			return "needs approval (permissions rule " + r.Text + "): name it in a call of its own to ask for it"
		}
	}
	return ""
}

// resolveLinks resolves the symbolic links in the literal directory part of an absolute path
// pattern (what comes before its first wildcard), so that a rule written through a link
// (/home/me/proj, a link to /data/proj) matches the resolved paths the workspace checks.
// It returns pattern as it is when nothing there is a link or nothing exists.
func resolveLinks(pattern string) string {
	if !filepath.IsAbs(pattern) {
		return pattern
	}
	lit, rest := pattern, ""
	if i := strings.IndexAny(pattern, "*?["); i >= 0 {
		j := strings.LastIndexByte(pattern[:i], filepath.Separator)
		lit, rest = pattern[:j], pattern[j:]
	} else if strings.HasSuffix(pattern, "/") {
		lit, rest = strings.TrimSuffix(pattern, "/"), "/"
	}
	if lit == "" {
		return pattern
	}
	// Resolve the deepest part that exists; what lies below it cannot be a link yet.
	cur, tail := filepath.Clean(lit), ""
	for {
		if _, err := os.Lstat(cur); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return pattern
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return pattern
		}
		tail = filepath.Join(filepath.Base(cur), tail)
		cur = parent
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil {
		return pattern
	}
	return filepath.Join(real, tail) + rest
}
