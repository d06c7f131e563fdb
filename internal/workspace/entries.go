package workspace

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// What the file tools need beyond Resolve: the walk that hides what a direct access would
// refuse, the rules for the entries of a tree a tool moves, copies or deletes, and the
// bookkeeping of read-before-delete.

// Holdings describes for the model what the agent holds, as if it were not the final
// presenter (the tools' descriptions).
func (a *Agent) Holdings() string {
	grants, _ := a.grants()
	return a.holdings(grants, false)
}

// Walk visits t and what lies below it that the agent may see, through t's root; within is
// slash-separated and relative to t ("" for t itself). An entry a direct access would refuse
// as concealed (view.conceal) or the permission rules keep from reading (PathRules) is left
// out, such a folder not entered; Walk returns how many entries it left out.
func (a *Agent) Walk(ctx context.Context, t Target, fn func(within string, d fs.DirEntry) error) (int, error) {
	grants, _ := a.grants()
	v := a.viewOf(grants)
	rules := a.pathRules()
	hidden := 0
	err := walkRoot(ctx, t.t.g.root, t.t.rel, func(_, w string, d fs.DirEntry) error {
		if w != "" {
			abs := filepath.Join(t.t.abs, filepath.FromSlash(w))
			if _, ok := v.conceal(t.t.g, abs); ok || !readable(rules, abs, t.t.named) {
				hidden++
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		return fn(w, d)
	})
	return hidden, err
}

// walkRoot visits rel and everything below it in root, stopping when ctx is done. fn gets each
// entry's path in root and its slash-separated path relative to rel ("" for rel itself).
func walkRoot(ctx context.Context, root *os.Root, rel string, fn func(p, within string, d fs.DirEntry) error) error {
	start := filepath.ToSlash(rel)
	return fs.WalkDir(root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		within := p
		switch {
		case p == start:
			within = ""
		case start != ".":
			within = strings.TrimPrefix(p, start+"/")
		}
		return fn(p, within, d)
	})
}

// Tree checks the entries of the tree at a Target, which a tool moves, copies or deletes as a
// whole, against the grants, the final-write state and the path rules of one moment.
type Tree struct {
	a     *Agent
	t     target
	final bool
	rules PathRules
	v     view
}

// Tree returns the checks for the entries below t, taken now.
func (a *Agent) Tree(t Target) Tree {
	grants, final := a.grants()
	return Tree{a: a, t: t.t, final: final, rules: a.pathRules(), v: a.viewOf(grants)}
}

// Allow decides acc on abs, below the tree's top, by the grant's rules (Resolve's, without
// the path rules); the message names abs.
func (c Tree) Allow(abs string, acc Access) error { return c.a.allow(c.t.g, abs, acc, c.final, abs) }

// Ruled returns the path rules' refusal to read (write false) or change abs, reached from
// the path the tool was given; nil when they allow it.
func (c Tree) Ruled(abs string, write bool) error {
	return ruled(c.rules, write, abs, c.t.named, abs)
}

// Readable reports whether the path rules let the agent read abs.
func (c Tree) Readable(abs string) bool { return readable(c.rules, abs, c.t.named) }

// Concealed reports whether abs, below the tree's top, is hidden from the agent (view.conceal).
func (c Tree) Concealed(abs string) bool {
	_, hidden := c.v.conceal(c.t.g, abs)
	return hidden
}

// Encloses says what the directory t holds that keeps it from being moved or deleted as a
// whole: another root the agent holds (a nested context path, with its own rights), or, with
// private true, massgen's hidden trees. Both empty: nothing.
func (a *Agent) Encloses(t Target) (other string, private bool) {
	grants, _ := a.grants()
	for _, g := range grants {
		if g != t.t.g && g.path != t.t.abs && Within(t.t.abs, g.path) {
			return g.path, false
		}
	}
	for _, h := range a.run.hiddenPaths() {
		if Within(t.t.abs, h) {
			return "", true
		}
	}
	return "", false
}

// Touch records that the agent read or created the file at abs with its tools.
func (a *Agent) Touch(abs string) {
	a.mu.Lock()
	a.touched[abs] = true
	a.mu.Unlock()
}

// Touched reports whether the agent may delete or move the file at abs as read-before-delete
// goes: it read or created it, or the rule is off.
func (a *Agent) Touched(abs string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.readBeforeDelete || a.touched[abs]
}

// Moved carries what was read or created below from (each slash-separated entry of within,
// "" for from itself) over to the same place below to.
func (a *Agent) Moved(from, to string, within []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range within {
		delete(a.touched, filepath.Join(from, filepath.FromSlash(w)))
		a.touched[filepath.Join(to, filepath.FromSlash(w))] = true
	}
}
