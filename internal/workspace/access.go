package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/tool"
)

// Limits on the paths tools receive.
const (
	maxPath      = 4096
	maxComponent = 255
)

type grantKind int

const (
	kindWorkspace grantKind = iota
	kindSnapshots
	kindContext
)

// grant is one root an agent holds. root is opened on path, or on its parent for a file grant.
type grant struct {
	kind      grantKind
	path      string // symlinks resolved
	file      bool   // grants only the file at path
	write     bool   // context path with permission: write
	copy      string // the agent's own copy of the context path (ContextPath.Copy)
	protected []string
	root      *os.Root
}

// ReadOnlyInContext reports whether an entry of this name stays read-only inside a writable
// context path (MassGen's default exclusions).
func ReadOnlyInContext(name string) bool {
	switch name {
	case ".massgen", ".env", ".git", "node_modules", "__pycache__", ".venv", "venv", ".pytest_cache",
		".mypy_cache", ".ruff_cache", ".DS_Store", "massgen_logs":
		return true
	}
	return false
}

// Access is what a tool is about to do with a path.
type Access int

const (
	Read Access = iota
	Write
	Remove // like Write, but the last component is not resolved: a link is deleted, not its target
	Move   // the source of a move: checked as Remove, with messages that say "moved"
)

// target is a checked path: abs is resolved, rel is abs relative to g.root.
type target struct {
	raw   string
	named string // raw as the permission gate judged it (Agent.named)
	abs   string
	g     *grant
	rel   string
	flags int // extra open flags (no-follow for a file grant)
}

// resolve resolves raw and checks acc against what the agent holds at this moment. Errors are
// written for the model: they say what is allowed.
func (a *Agent) resolve(raw string, acc Access) (target, error) {
	if err := a.checkSyntax(raw); err != nil {
		return target{}, err
	}
	p := raw
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.dir, p)
	}
	p = filepath.Clean(p)
	var abs string
	var err error
	if (acc == Remove || acc == Move) && filepath.Dir(p) != p {
		abs, err = realPath(filepath.Dir(p))
		abs = filepath.Join(abs, filepath.Base(p))
	} else {
		abs, err = realPath(p)
	}
	grants, final := a.grants()
	if err != nil {
		if deepest(grants, p) == nil {
			return target{}, a.outside(raw, grants, final)
		}
		return target{}, fmt.Errorf("%s cannot be used: %w", tool.Quote(raw), err)
	}
	g := deepest(grants, abs)
	if g == nil || SystemPath(abs) {
		return target{}, a.outside(raw, grants, final)
	}
	// massgen's trees are refused before anything else is said about them; a secret file
	// after the rules for changes, whose messages say more (".env is never changed here").
	c, hidden := a.viewOf(grants).conceal(g, abs)
	if hidden && c.private {
		return target{}, c.refusal(raw, abs, a.run.snapDir)
	}
	if err := a.allow(g, abs, acc, final, raw); err != nil {
		return target{}, err
	}
	if hidden {
		return target{}, c.refusal(raw, abs, a.run.snapDir)
	}
	named := a.named(raw)
	if err := ruled(a.pathRules(), acc != Read, abs, named, raw); err != nil {
		return target{}, err
	}
	t := target{raw: raw, named: named, abs: abs, g: g}
	base := g.path
	if g.file {
		base, t.flags = filepath.Dir(g.path), oNoFollow
	}
	if t.rel, err = filepath.Rel(base, abs); err != nil {
		return target{}, fmt.Errorf("%s cannot be used: %w", tool.Quote(raw), err)
	}
	return t, nil
}

func (a *Agent) checkSyntax(raw string) error {
	switch {
	case raw == "":
		return fmt.Errorf("the path is empty: give a path relative to your workspace %s, or an absolute path", a.dir)
	case strings.IndexByte(raw, 0) >= 0:
		return fmt.Errorf("%s contains a NUL byte; paths cannot contain one", tool.Quote(raw))
	case len(raw) > maxPath:
		return fmt.Errorf("the path is %d bytes long; the limit is %d", len(raw), maxPath)
	case strings.HasPrefix(raw, "~"):
		return fmt.Errorf(`%s: "~" is not expanded here. Use a path relative to your workspace %s, or an absolute path`,
			tool.Quote(raw), a.dir)
	}
	for c := range strings.SplitSeq(raw, string(filepath.Separator)) {
		if len(c) > maxComponent {
			return fmt.Errorf("a component of the path is %d bytes long; the limit is %d", len(c), maxComponent)
		}
	}
	return nil
}

// allow decides acc on abs, which lies in g.
func (a *Agent) allow(g *grant, abs string, acc Access, final bool, raw string) error {
	if acc == Read {
		return nil
	}
	switch g.kind {
	case kindSnapshots:
		return fmt.Errorf("%s is in the agents' shared snapshots, which are read-only. Copy what you need into your workspace %s (copy_file) and change it there",
			tool.Quote(raw), a.dir)
	case kindContext:
		if g.copy != "" {
			return fmt.Errorf("%s is in the context path %s, which you change through your own copy of it, %s: make the change there (what the agent presenting the final answer leaves in its copy is applied to %s at the end)",
				tool.Quote(raw), g.path, g.copy, g.path)
		}
		if !g.write {
			return fmt.Errorf("%s is in the read-only context path %s. You can write only inside your workspace %s",
				tool.Quote(raw), g.path, a.dir)
		}
		if !final {
			return fmt.Errorf("%s is in the context path %s, which only the agent presenting the final answer may change; until then it is read-only. Prepare your changes in your workspace %s",
				tool.Quote(raw), g.path, a.dir)
		}
		for _, p := range g.protected {
			if Within(p, abs) {
				return fmt.Errorf("%s is protected inside the context path %s: it can be read but never changed or deleted",
					tool.Quote(raw), g.path)
			}
		}
		if rel, err := filepath.Rel(g.path, abs); err == nil {
			for c := range strings.SplitSeq(rel, string(filepath.Separator)) {
				if ReadOnlyInContext(c) {
					return fmt.Errorf("%s is read-only: agents never change %s inside a context path (read-only there: .git, .env, node_modules, __pycache__, .venv, .massgen, massgen_logs and the like)",
						tool.Quote(raw), c)
				}
			}
		}
	}
	if acc == Remove {
		if abs == g.path {
			return fmt.Errorf("%s is the top of %s and cannot be deleted; delete what is inside it instead", tool.Quote(raw), describeKind(g))
		}
		if b := filepath.Base(abs); b == ".git" || b == ".massgen" {
			return fmt.Errorf("%s is a %s directory; it is never deleted by the file tools", tool.Quote(raw), b)
		}
	}
	if acc == Move {
		if abs == g.path {
			return fmt.Errorf("%s is the top of %s and cannot be moved; move what is inside it instead", tool.Quote(raw), describeKind(g))
		}
		if b := filepath.Base(abs); b == ".git" || b == ".massgen" {
			return fmt.Errorf("%s is a %s directory; it is never moved or deleted by the file tools", tool.Quote(raw), b)
		}
	}
	return nil
}

func (a *Agent) outside(raw string, grants []*grant, final bool) error {
	return fmt.Errorf("%s is outside what you can access. %s", tool.Quote(raw), a.holdings(grants, final))
}

// holdings describes the roots for the model.
func (a *Agent) holdings(grants []*grant, final bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You can use: your workspace %s (read/write; relative paths start there); the latest shared work of every agent, one folder per anonymous label (agent1, agent2, ...), under %s (read-only)",
		a.dir, a.run.snapDir)
	for _, g := range grants {
		if g.kind != kindContext {
			continue
		}
		what := "directory"
		if g.file {
			what = "file"
		}
		mode := "read-only"
		switch {
		case g.copy != "":
			mode = "read-only; change your own copy of it, " + g.copy +
				", in your workspace: what the agent presenting the final answer leaves in its copy is applied to it at the end"
		case g.write && final:
			mode = "read/write"
		case g.write:
			mode = "read-only; writable only by the agent presenting the final answer"
		}
		fmt.Fprintf(&b, "; context %s %s (%s)", what, g.path, mode)
	}
	b.WriteString(".")
	return b.String()
}

func describeKind(g *grant) string {
	switch g.kind {
	case kindWorkspace:
		return "your workspace"
	case kindSnapshots:
		return "the shared snapshots"
	}
	return "a context path"
}

// deepest returns the grant with the longest path holding abs, or nil.
func deepest(grants []*grant, abs string) *grant {
	var best *grant
	for _, g := range grants {
		ok := Within(g.path, abs)
		if g.file {
			ok = abs == g.path
		}
		if ok && (best == nil || len(g.path) > len(best.path)) {
			best = g
		}
	}
	return best
}

// Within reports whether p is base or lies below it. Both are clean absolute paths.
func Within(base, p string) bool {
	if base == string(filepath.Separator) {
		return true
	}
	return p == base || strings.HasPrefix(p, base+string(filepath.Separator))
}

// SystemPath reports whether abs is in /proc, /sys or /dev, which no tool ever reaches.
func SystemPath(abs string) bool {
	return Within("/proc", abs) || Within("/sys", abs) || Within("/dev", abs)
}

// realPath resolves the symbolic links in the clean absolute path p. For a path that does not
// exist yet, its deepest existing ancestor is resolved and the rest appended. A path that
// changes while it is resolved (a snapshot being replaced) is resolved again.
func realPath(p string) (string, error) {
	for attempt := 0; ; attempt++ {
		r, err := resolveOnce(p)
		if !errors.Is(err, errVanished) || attempt == 2 {
			return r, err
		}
	}
}

// errVanished: a component existed when checked and was gone when resolved.
var errVanished = errors.New("it goes through a symbolic link that points nowhere")

func resolveOnce(p string) (string, error) {
	cur := p
	var rest []string
	for {
		_, err := os.Lstat(cur)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", UnwrapPath(err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
	r, err := filepath.EvalSymlinks(cur)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errVanished
	} else if err != nil {
		return "", UnwrapPath(err)
	}
	for i := len(rest) - 1; i >= 0; i-- {
		r = filepath.Join(r, rest[i])
	}
	return r, nil
}

// UnwrapPath drops the operation and path from an *fs.PathError, leaving the reason.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
