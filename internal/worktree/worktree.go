// Package worktree gives every agent a private copy of a writable context path to change
// during coordination (MassGen's write_mode): a git worktree when the folder is in a git
// repository with a commit, else a plain copy. At the end only the presenter's changes are
// applied to the folder (Apply), checked file by file against what the folder held when the
// copies were made, so that a file someone changed meanwhile (drift) is handled as
// drift_conflict_policy says; Close removes every worktree and copy, whatever happened.
//
// What a copy holds is what the agent may see of the folder: massgen's own folders (.massgen,
// massgen_logs), .git and the files that commonly hold secrets are neither copied nor ever
// applied back (they stay out of reach as they do in a context path), nor are symbolic
// links and special files. A git worktree starts from HEAD and then receives the folder's
// uncommitted changes and untracked files (ignored files are left out), so that every agent
// starts from the folder as it is.
//
// The state of a Set (the base and where the copies are) is kept in a file of its own, so a
// process that takes over a run killed with SIGKILL (massgen resume) finds the copies, keeps
// using them and removes them at its end.
package worktree

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"massgen/internal/private"
)

// MassGen's write_mode values and drift_conflict_policy values.
const (
	ModeAuto     = "auto"
	ModeWorktree = "worktree"
	ModeIsolated = "isolated"
	ModeLegacy   = "legacy"

	PolicySkip            = "skip"
	PolicyPreferPresenter = "prefer_presenter"
	PolicyFail            = "fail"
)

// Isolating reports whether write_mode gives agents copies.
func Isolating(mode string) bool { return mode != "" && mode != ModeLegacy }

// Limits on what one copy may hold: a copy is made per agent, so a huge folder is refused with
// a clear message rather than copied many times over.
var (
	MaxFiles       = 50_000
	MaxBytes int64 = 1 << 30
)

// cleanupWait bounds Close, which runs also after a cancellation.
const cleanupWait = 2 * time.Minute

// Kinds of copy.
const (
	kindWorktree = "worktree"
	kindCopy     = "copy"
)

// Set is the isolation of one context path for one run. Its methods are safe for concurrent
// use.
type Set struct {
	g        *git
	stateDir string
	hide     []string

	mu sync.Mutex
	st state
}

// state is what the state file keeps.
type state struct {
	Target string `json:"target"`           // the folder, or the file, symlinks resolved
	File   bool   `json:"file,omitempty"`   // Target is a single file
	Kind   string `json:"kind"`             // kindWorktree or kindCopy
	Note   string `json:"note,omitempty"`   // why auto or worktree fell back to a copy
	Repo   string `json:"repo,omitempty"`   // the repository's top level (worktree)
	Prefix string `json:"prefix,omitempty"` // Target relative to Repo, slash-separated ("" at the top)
	Head   string `json:"head,omitempty"`   // the commit the worktrees start from
	// Base maps each path (slash-separated, relative to Target's folder) to the hash of its
	// content when the Set was opened.
	Base  map[string]string `json:"base"`
	Trees map[string]string `json:"trees"` // agent id -> the tree's top (the worktree, or the copy)
}

const stateFile = "state.json"

// Open isolates target under mode (auto, worktree or isolated) and keeps its state in
// stateDir, a private folder of the run. When stateDir already holds a state for target (a
// run taken over after its process died), that state is used again: its base, and the copies
// that still exist.
// hide lists trees (the run's workspaces, the logs) never copied even when inside target.
func Open(ctx context.Context, target, mode, stateDir string, hide []string) (*Set, error) {
	if !Isolating(mode) {
		return nil, fmt.Errorf("worktree: write_mode %q does not isolate", mode)
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return nil, fmt.Errorf("context path %s: %w", target, err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, err
	}
	s := &Set{g: &git{}, stateDir: stateDir, hide: hide}
	if b, err := os.ReadFile(filepath.Join(stateDir, stateFile)); err == nil {
		if err := json.Unmarshal(b, &s.st); err != nil || s.st.Target != real {
			return nil, fmt.Errorf("worktree: %s holds the state of another folder, or a damaged one; remove it", stateDir)
		}
		return s, nil
	}
	if err := private.MkdirAll(stateDir); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	s.st = state{Target: real, File: !info.IsDir(), Kind: kindCopy, Trees: map[string]string{}}
	if !s.st.File && mode != ModeIsolated {
		s.detectRepo(ctx, mode)
	}
	if s.st.Base, err = s.listTarget(ctx); err != nil {
		return nil, err
	}
	return s, s.save()
}

// detectRepo makes the Set a worktree one when Target is in a repository with a commit.
func (s *Set) detectRepo(ctx context.Context, mode string) {
	fallback := func(why string) {
		if mode == ModeWorktree {
			s.st.Note = why + ", so it is isolated as a copy"
		}
	}
	top, err := s.g.run(ctx, s.st.Target, "rev-parse", "--show-toplevel")
	if err != nil {
		fallback("it is not in a git repository")
		return
	}
	head, err := s.g.run(ctx, s.st.Target, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		fallback("its repository has no commit yet")
		return
	}
	repo, err := filepath.EvalSymlinks(strings.TrimSpace(string(top)))
	if err != nil {
		fallback("its repository cannot be read")
		return
	}
	prefix, err := filepath.Rel(repo, s.st.Target)
	if err != nil || prefix == ".." || strings.HasPrefix(prefix, ".."+string(filepath.Separator)) {
		fallback("it lies outside its repository's work tree")
		return
	}
	if prefix == "." {
		prefix = ""
	}
	s.st.Kind, s.st.Repo, s.st.Prefix, s.st.Head = kindWorktree, repo, filepath.ToSlash(prefix), strings.TrimSpace(string(head))
}

// Target is the isolated folder or file; Note says why worktree mode fell back to a copy.
func (s *Set) Target() string { return s.st.Target }

// Describe says how the folder is isolated, for the run's report.
func (s *Set) Describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	how := "a git worktree per agent"
	if s.st.Kind == kindCopy {
		how = "a copy per agent"
	}
	if s.st.Note != "" {
		how += " (" + s.st.Note + ")"
	}
	return fmt.Sprintf("%s: %s, %d files", s.st.Target, how, len(s.st.Base))
}

// Tree makes (or finds again) agent's copy at dir, a folder that must not exist yet inside the
// agent's workspace, and returns the path the agent changes: the copy of the folder (inside
// a worktree of the whole repository, the folder's place in it), or of the file.
func (s *Set) Tree(ctx context.Context, agent, dir string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.st.Trees[agent]; ok {
		if prev == dir && s.treeValid(ctx, dir) {
			return s.copyPath(dir), nil
		}
		if err := s.removeTree(ctx, prev); err != nil {
			return "", err
		}
		delete(s.st.Trees, agent)
	}
	if _, err := os.Lstat(dir); err == nil {
		return "", fmt.Errorf("worktree: %s already exists", dir)
	}
	if err := private.MkdirAll(filepath.Dir(dir)); err != nil {
		return "", err
	}
	// Recorded before it exists, so that a process killed while it is made still finds it.
	s.st.Trees[agent] = dir
	if err := s.save(); err != nil {
		return "", err
	}
	var err error
	if s.st.Kind == kindWorktree {
		err = s.makeWorktree(ctx, dir)
	} else {
		err = s.makeCopy(dir)
	}
	if err != nil {
		_ = s.removeTree(context.WithoutCancel(ctx), dir)
		delete(s.st.Trees, agent)
		_ = s.save()
		return "", fmt.Errorf("cannot isolate %s for agent %s: %w", s.st.Target, agent, err)
	}
	return s.copyPath(dir), nil
}

// copyPath is where, in the tree at dir, the agent finds the target.
func (s *Set) copyPath(dir string) string {
	switch {
	case s.st.File:
		return filepath.Join(dir, filepath.Base(s.st.Target))
	case s.st.Kind == kindWorktree:
		return filepath.Join(dir, filepath.FromSlash(s.st.Prefix))
	}
	return dir
}

// baseDir is the folder Base's paths are relative to.
func (s *Set) baseDir() string {
	if s.st.File {
		return filepath.Dir(s.st.Target)
	}
	return s.st.Target
}

// treeBase is the folder, in the tree at dir, that corresponds to baseDir.
func (s *Set) treeBase(dir string) string {
	if s.st.File {
		return dir
	}
	return s.copyPath(dir)
}

func (s *Set) treeValid(ctx context.Context, dir string) bool {
	if !isDir(dir) {
		return false
	}
	if s.st.Kind != kindWorktree {
		return true
	}
	out, err := s.g.run(ctx, s.st.Repo, "worktree", "list", "--porcelain", "-z")
	return err == nil && slices.Contains(nulList(out), "worktree "+dir)
}

func (s *Set) makeWorktree(ctx context.Context, dir string) error {
	// No checkout yet: the configuration the new worktree sees (conditional includes on its
	// path) is read before git checks anything out there.
	if _, err := s.g.run(ctx, s.st.Repo, "worktree", "add", "--detach", "--no-checkout", dir, s.st.Head); err != nil {
		return err
	}
	if _, err := s.g.run(ctx, dir, "reset", "--hard", "-q", s.st.Head); err != nil {
		return err
	}
	return s.overlay(dir)
}

// Close removes every copy and worktree and the state, also after a cancellation (it does
// not use ctx's cancellation, only its values). Idempotent.
func (s *Set) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupWait)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for agent, dir := range s.st.Trees {
		if err := s.removeTree(ctx, dir); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(s.st.Trees, agent)
	}
	if len(errs) > 0 {
		_ = s.save()
		return errors.Join(errs...)
	}
	if err := os.RemoveAll(s.stateDir); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// Release removes agent's copy (the run keeps the others until Close).
func (s *Set) Release(ctx context.Context, agent string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupWait)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, ok := s.st.Trees[agent]
	if !ok {
		return nil
	}
	if err := s.removeTree(ctx, dir); err != nil {
		return err
	}
	delete(s.st.Trees, agent)
	return s.save()
}

// removeTree removes the tree at dir: the worktree from the repository's list, then what is
// left of the folder.
func (s *Set) removeTree(ctx context.Context, dir string) error {
	var errs []error
	if s.st.Kind == kindWorktree {
		if isDir(dir) {
			if _, err := s.g.run(ctx, s.st.Repo, "worktree", "remove", "--force", "--force", dir); err != nil && !isGitError(err) {
				errs = append(errs, err)
			}
		}
		if _, err := s.g.run(ctx, s.st.Repo, "worktree", "prune"); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("cannot remove the isolated copy %s: %w", dir, errors.Join(errs...))
	}
	return nil
}

func (s *Set) save() error {
	b, err := json.Marshal(s.st)
	if err != nil {
		return err
	}
	return private.WriteFileAtomic(filepath.Join(s.stateDir, stateFile), b)
}

func isDir(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && info.IsDir()
}
