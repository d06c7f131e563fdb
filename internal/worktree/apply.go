package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"massgen/internal/workspace"
)

// Report is what Apply did with one agent's changes.
type Report struct {
	Target  string
	Policy  string
	Applied []string // written or deleted in the target
	Drifted []string // changed in the target since the copies were made; with skip, not applied
	Refused []string // protected paths, or names now a folder or link in the target: never applied
	// Conflict is set when fail found drift: nothing was applied.
	Conflict bool
	// Err is a write that failed; Applied lists what was written before it.
	Err error
}

// Changed reports whether the agent changed anything.
func (r Report) Changed() bool {
	return len(r.Applied)+len(r.Drifted)+len(r.Refused) > 0 || r.Err != nil
}

// change is one file the agent changed.
type change struct {
	rel     string
	remove  bool
	drifted bool
}

// Apply writes agent's changes (its copy against the base) into the target, under policy
// (skip, prefer_presenter or fail). A file whose content in the target is no longer the base
// one has drifted, unless it already is what the agent wrote. Files go in one by one, each
// replaced in one rename, through a handle on the target folder (no link leads out of it);
// protected paths (the context path's protected list) and the excluded ones are never
// written. ctx ends Apply between files; what was written is in the report.
func (s *Set) Apply(ctx context.Context, agent, policy string, protected []string) Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{Target: s.st.Target, Policy: policy}
	dir, ok := s.st.Trees[agent]
	if !ok {
		r.Err = fmt.Errorf("agent %s has no copy of %s", agent, s.st.Target)
		return r
	}
	changes, err := s.changes(ctx, dir, protected, &r)
	if err != nil {
		r.Err = err
		return r
	}
	for _, c := range changes {
		if c.drifted {
			r.Drifted = append(r.Drifted, c.rel)
		}
	}
	if policy == PolicyFail && len(r.Drifted) > 0 {
		r.Conflict = true
		return r
	}
	tgt, err := os.OpenRoot(s.baseDir())
	if err != nil {
		r.Err = err
		return r
	}
	defer tgt.Close()
	src, err := os.OpenRoot(s.treeBase(dir))
	if err != nil {
		r.Err = err
		return r
	}
	defer src.Close()
	for _, c := range changes {
		if c.drifted && policy != PolicyPreferPresenter {
			continue
		}
		if err := ctx.Err(); err != nil {
			r.Err = fmt.Errorf("stopped before %s: %w", c.rel, err)
			return r
		}
		if c.remove {
			err = tgt.Remove(filepath.FromSlash(c.rel))
			if os.IsNotExist(err) {
				err = nil
			}
		} else {
			err = copyFile(src, tgt, c.rel, true)
		}
		if err != nil {
			r.Err = fmt.Errorf("%s: %w", c.rel, workspace.UnwrapPath(err))
			return r
		}
		r.Applied = append(r.Applied, c.rel)
	}
	return r
}

// changes compares the tree at dir with the base and the target.
func (s *Set) changes(ctx context.Context, dir string, protected []string, r *Report) ([]change, error) {
	tb := s.treeBase(dir)
	var names []string
	if s.st.File {
		names = []string{filepath.Base(s.st.Target)}
	} else {
		listed, err := s.list(ctx, tb)
		if err != nil {
			return nil, fmt.Errorf("reading the changes in %s: %w", tb, err)
		}
		names = listed
	}
	for rel := range s.st.Base {
		names = append(names, rel)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	tree, err := os.OpenRoot(tb)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	tgt, err := os.OpenRoot(s.baseDir())
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	var out []change
	for _, rel := range names {
		if excluded(s.baseDir(), rel) {
			continue
		}
		want, wantOK, err := hashIn(tree, rel)
		if err != nil {
			return nil, err
		}
		base, baseOK := s.st.Base[rel]
		if wantOK == baseOK && want == base {
			continue // unchanged
		}
		abs := filepath.Join(s.baseDir(), filepath.FromSlash(rel))
		if slices.ContainsFunc(protected, func(p string) bool { return workspace.Within(p, abs) }) {
			r.Refused = append(r.Refused, rel)
			continue
		}
		cur, curOK, err := hashIn(tgt, rel)
		if err != nil {
			return nil, err
		}
		if curOK == wantOK && cur == want {
			continue // the target already is what the agent wants
		}
		if _, lerr := tgt.Lstat(filepath.FromSlash(rel)); !curOK && lerr == nil {
			// A folder, link or special file took the name: never replaced.
			r.Refused = append(r.Refused, rel)
			continue
		}
		out = append(out, change{rel: rel, remove: !wantOK, drifted: curOK != baseOK || cur != base})
	}
	return out, nil
}

// Summary is a one-line account of the report, naming at most a few files of each list.
func (r Report) Summary() string {
	var parts []string
	add := func(what string, files []string) {
		if len(files) > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%s)", what, len(files), names(files)))
		}
	}
	switch {
	case r.Conflict:
		parts = append(parts, fmt.Sprintf("nothing applied: drift_conflict_policy is fail and %d file(s) changed in %s since the run started", len(r.Drifted), r.Target))
		add("drifted", r.Drifted)
	default:
		add("applied", r.Applied)
		if r.Policy == PolicyPreferPresenter {
			add("applied over changes made meanwhile", r.Drifted)
		} else {
			add("skipped, changed in the folder meanwhile", r.Drifted)
		}
	}
	add("refused (protected, or no longer a file in the folder)", r.Refused)
	if r.Err != nil {
		parts = append(parts, "stopped: "+r.Err.Error())
	}
	if len(parts) == 0 {
		return r.Target + ": no changes"
	}
	return r.Target + ": " + strings.Join(parts, "; ")
}

func names(files []string) string {
	const most = 5
	if len(files) <= most {
		return strings.Join(files, ", ")
	}
	return strings.Join(files[:most], ", ") + fmt.Sprintf(", and %d more", len(files)-most)
}
