package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"massgen/internal/event"
	"massgen/internal/workspace"
	"massgen/internal/worktree"
)

// isolation is write_mode for one run: every writable context path becomes, for each agent,
// a copy in its workspace (package worktree); the presenter's copy is applied at the end.
type isolation struct {
	mode, policy string
	stateRoot    string   // <run>/.isolation: one state folder per context path
	hide         []string // trees never copied (the run's workspaces)

	mu    sync.Mutex
	sets  map[string]*isolated // by the context path, symlinks resolved
	order []*isolated
}

type isolated struct {
	set       *worktree.Set
	protected []string
}

func newIsolation(mode, policy, runDir, workspaceRoot string) *isolation {
	if policy == "" {
		policy = worktree.PolicySkip
	}
	hide := []string{}
	if real, err := filepath.EvalSymlinks(workspaceRoot); err == nil {
		if abs, err := filepath.Abs(real); err == nil {
			hide = append(hide, abs)
		}
	}
	return &isolation{mode: mode, policy: policy, stateRoot: filepath.Join(runDir, ".isolation"), hide: hide,
		sets: map[string]*isolated{}}
}

// isolate gives agent its copy of each writable path, at <workspace>/.worktree/ctx_<k> (k
// counting the writable paths in order, so a resumed run finds the same folders).
func (iso *isolation) isolate(ctx context.Context, agent, wsDir string, paths []workspace.ContextPath) ([]workspace.ContextPath, error) {
	out := make([]workspace.ContextPath, len(paths))
	copy(out, paths)
	k := 0
	for i, p := range out {
		if !p.Write {
			continue
		}
		k++
		is, err := iso.open(ctx, p)
		if err != nil {
			return nil, err
		}
		c, err := is.set.Tree(ctx, agent, filepath.Join(wsDir, ".worktree", fmt.Sprintf("ctx_%d", k)))
		if err != nil {
			return nil, err
		}
		out[i].Copy = c
	}
	return out, nil
}

func (iso *isolation) open(ctx context.Context, p workspace.ContextPath) (*isolated, error) {
	real, err := filepath.EvalSymlinks(p.Path)
	if err != nil {
		return nil, fmt.Errorf("context path %s: %w", p.Path, err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, err
	}
	iso.mu.Lock()
	defer iso.mu.Unlock()
	if is := iso.sets[real]; is != nil {
		return is, nil
	}
	sum := sha256.Sum256([]byte(real))
	set, err := worktree.Open(ctx, real, iso.mode, filepath.Join(iso.stateRoot, "ctx_"+hex.EncodeToString(sum[:6])), iso.hide)
	if err != nil {
		return nil, err
	}
	is := &isolated{set: set}
	for _, pr := range p.Protected {
		if !filepath.IsAbs(pr) {
			pr = filepath.Join(real, pr)
		}
		if r, err := filepath.EvalSymlinks(pr); err == nil {
			pr = r
		}
		is.protected = append(is.protected, filepath.Clean(pr))
	}
	iso.sets[real] = is
	iso.order = append(iso.order, is)
	return is, nil
}

// statuses say how each path is isolated, for the session's start.
func (iso *isolation) statuses() []event.Payload {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	var out []event.Payload
	for _, is := range iso.order {
		out = append(out, event.ToolServerStatus{Server: event.ServerWrites, Status: "isolated", Detail: is.set.Describe()})
	}
	return out
}

// deliver applies presenter's copies to their context paths and reports each on bus. Drift
// that policy fail refuses, and a write that failed, are errors.
func (iso *isolation) deliver(ctx context.Context, presenter string, bus *event.Bus) error {
	iso.mu.Lock()
	order := append([]*isolated(nil), iso.order...)
	iso.mu.Unlock()
	var errs []error
	for _, is := range order {
		r := is.set.Apply(ctx, presenter, iso.policy, is.protected)
		status := "applied"
		switch {
		case r.Conflict:
			status = "conflict"
			errs = append(errs, fmt.Errorf("write_mode: the changes to %s were not applied: %d file(s) changed there during the run and drift_conflict_policy is fail (%s); the final presenter's copy is kept in the log folder, under final/%s/workspace/.worktree",
				r.Target, len(r.Drifted), strings.Join(r.Drifted, ", "), presenter))
		case r.Err != nil:
			status = "failed"
			errs = append(errs, fmt.Errorf("write_mode: applying the changes to %s stopped: %w (applied before that: %d file(s))", r.Target, r.Err, len(r.Applied)))
		case len(r.Drifted) > 0 && iso.policy == worktree.PolicySkip:
			status = "applied, drifted files skipped"
		case !r.Changed():
			status = "unchanged"
		}
		bus.Publish(event.ToolServerStatus{Server: event.ServerWrites, Status: status, Detail: r.Summary()})
	}
	return errors.Join(errs...)
}

// close removes every copy, however the session ended.
func (iso *isolation) close() error {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	var errs []error
	for _, is := range iso.order {
		errs = append(errs, is.set.Close(context.Background()))
	}
	return errors.Join(errs...)
}
