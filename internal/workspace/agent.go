package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Agent is one agent's view of the run: its workspace, the snapshots, its context paths and
// what it may do with them (Resolve and the access API in sight.go and entries.go). Its methods are safe for concurrent use.
type Agent struct {
	run       *Run
	id, label string
	dir       string // the workspace, symlinks resolved
	ws, snap  *grant

	snapMu  sync.Mutex // serialises Snapshot and CopyOut, guards retired
	retired []retiredSnapshot

	mu               sync.Mutex
	contexts         []*grant
	final            bool
	readBeforeDelete bool
	touched          map[string]bool // resolved paths read or created by the agent's tools
	rules            PathRules       // the permission rules on paths; nil: none (rules.go)

	resMu     sync.Mutex
	residents []Resident // what runs in the workspace (Attach)
	closed    bool
}

// ID is the agent's real id, which names its workspace folder.
func (a *Agent) ID() string { return a.id }

// Label is the agent's anonymous label, which names its snapshot folder.
func (a *Agent) Label() string { return a.label }

// Dir is the agent's workspace directory.
func (a *Agent) Dir() string { return a.dir }

// SnapshotDir is where the agent's latest snapshot is shared (it may not exist yet).
func (a *Agent) SnapshotDir() string { return filepath.Join(a.run.snapDir, a.label) }

// SetContextPaths replaces the agent's context paths (use MergeContextPaths for the
// orchestrator's and the backend's lists). Every path must exist; "/" and the system trees
// /proc, /sys and /dev are refused. Call it before Tools, whose descriptions list the paths.
func (a *Agent) SetContextPaths(paths []ContextPath) error {
	var gs []*grant
	var errs []error
	for i, c := range paths {
		g, err := newContextGrant(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("context_paths[%d]: %w", i, err))
			continue
		}
		gs = append(gs, g)
	}
	if err := errors.Join(errs...); err != nil {
		for _, g := range gs {
			_ = g.root.Close()
		}
		return err
	}
	a.mu.Lock()
	old := a.contexts
	a.contexts = gs
	a.mu.Unlock()
	for _, g := range old {
		_ = g.root.Close()
	}
	return nil
}

func newContextGrant(c ContextPath) (*grant, error) {
	if c.Path == "" {
		return nil, errors.New("path is empty")
	}
	abs, err := filepath.Abs(c.Path)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("context path %s does not exist: create it, or fix or remove it in context_paths", c.Path)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("context path %s cannot be reached: a folder on its path does not let you in (fix its permissions, or remove it from context_paths)", c.Path)
	case err != nil:
		return nil, fmt.Errorf("context path %s: %w", c.Path, err)
	}
	if real == "/" || SystemPath(real) {
		return nil, fmt.Errorf("%s would expose the system; name a project directory or file", c.Path)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	g := &grant{kind: kindContext, path: real, write: c.Write && c.Copy == "", copy: c.Copy, file: !info.IsDir()}
	for _, p := range c.Protected {
		if !filepath.IsAbs(p) {
			p = filepath.Join(real, p)
		}
		rp, err := realPath(filepath.Clean(p))
		if err != nil {
			return nil, fmt.Errorf("protected path %s: %w", p, err)
		}
		if !Within(real, rp) {
			return nil, fmt.Errorf("protected path %s is outside %s", p, c.Path)
		}
		g.protected = append(g.protected, rp)
	}
	rootDir := real
	if g.file {
		rootDir = filepath.Dir(real)
	}
	if g.root, err = os.OpenRoot(rootDir); err != nil {
		return nil, err
	}
	return g, nil
}

// SetReadBeforeDelete switches MassGen's enforce_read_before_delete (on by default): a file can
// be deleted only after the agent read or created it with its tools.
func (a *Agent) SetReadBeforeDelete(on bool) {
	a.mu.Lock()
	a.readBeforeDelete = on
	a.mu.Unlock()
}

// GrantFinal opens write access to the context paths marked Write, for the agent presenting
// the final answer. Protected paths and the default exclusions stay read-only. Idempotent.
func (a *Agent) GrantFinal() {
	a.mu.Lock()
	a.final = true
	a.mu.Unlock()
}

// RevokeFinal closes what GrantFinal opened (MassGen never does: bug B13). Idempotent.
func (a *Agent) RevokeFinal() {
	a.mu.Lock()
	a.final = false
	a.mu.Unlock()
}

// retiredFor is how long a replaced snapshot stays on disk: longer than any reader takes
// between opening a folder of it and reading a file there. Close removes the rest.
var retiredFor = 10 * time.Second

// retiredSnapshot is a replaced snapshot in the staging folder, and when it was replaced.
type retiredSnapshot struct {
	dir string
	at  time.Time
}

// Snapshot publishes a copy of the workspace as the agent's shared snapshot, replacing the
// previous one: the copy is built in the run's staging folder and swapped into place in one
// step (renameat2 RENAME_EXCHANGE on Linux), so readers never see a half-written snapshot nor a
// missing one, and a replaced one stays whole for retiredFor, so that a reader already inside it
// finishes on a complete copy, however slow; where the swap is not available (another OS, a filesystem without it) the
// previous snapshot is renamed away first and there is an instant with none. An empty workspace
// keeps the previous snapshot, as MassGen does. The workspace itself is left as it is (MassGen
// empties it: bug B9). Symbolic links are copied only when relative and pointing inside the
// workspace; devices, sockets and pipes are skipped.
func (a *Agent) Snapshot() error {
	a.snapMu.Lock()
	defer a.snapMu.Unlock()
	empty, err := isEmpty(a.ws.root)
	if err != nil {
		return fmt.Errorf("workspace: snapshot %s: %w", a.label, err)
	}
	if empty {
		return nil
	}
	r := a.run
	r.mu.Lock()
	r.seq++
	stage := filepath.Join(r.stageDir, fmt.Sprintf("%s-%d", a.label, r.seq))
	old := stage + ".old"
	r.mu.Unlock()
	if err := a.shareTo(stage); err != nil {
		_ = os.RemoveAll(stage)
		return fmt.Errorf("workspace: snapshot %s: %w", a.label, err)
	}
	final := a.SnapshotDir()
	if err := exchange(stage, final); err == nil {
		// stage now holds the previous snapshot, which readers may still be inside.
		now := time.Now()
		a.retired = append(a.retired, retiredSnapshot{dir: stage, at: now})
		var errs []error
		a.retired = slices.DeleteFunc(a.retired, func(r retiredSnapshot) bool {
			if now.Sub(r.at) < retiredFor {
				return false
			}
			errs = append(errs, os.RemoveAll(r.dir))
			return true
		})
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("workspace: snapshot %s: remove replaced snapshots: %w", a.label, err)
		}
		return nil
	}
	hadOld := true
	if err := os.Rename(final, old); errors.Is(err, os.ErrNotExist) {
		hadOld = false
	} else if err != nil {
		_ = os.RemoveAll(stage)
		return fmt.Errorf("workspace: snapshot %s: %w", a.label, err)
	}
	if err := os.Rename(stage, final); err != nil {
		if hadOld {
			_ = os.Rename(old, final)
		}
		_ = os.RemoveAll(stage)
		return fmt.Errorf("workspace: snapshot %s: %w", a.label, err)
	}
	if hadOld {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("workspace: snapshot %s: remove previous: %w", a.label, err)
		}
	}
	return nil
}

// CopyOut copies the workspace into dst (created if missing; existing files are overwritten),
// e.g. to <log dir>/final/<winner>/workspace. Links and special files are treated as by
// Snapshot.
func (a *Agent) CopyOut(dst string) error {
	if abs, err := filepath.Abs(dst); err == nil && Within(a.dir, abs) {
		return fmt.Errorf("workspace: copy %s out: %s is inside the workspace", a.id, dst)
	}
	a.snapMu.Lock()
	defer a.snapMu.Unlock()
	if err := a.copyOutTo(dst); err != nil {
		return fmt.Errorf("workspace: copy %s out: %w", a.id, err)
	}
	return nil
}

func (a *Agent) copyOutTo(dst string) error { return copyInto(a.ws.root, dst, nil) }

// shareTo copies the workspace into dst for the shared snapshot, leaving out what the
// permission rules keep the agent itself from reading: what it may not read, it does not
// share with the other agents.
func (a *Agent) shareTo(dst string) error {
	rules := a.pathRules()
	if rules == nil {
		return a.copyOutTo(dst)
	}
	return copyInto(a.ws.root, dst, func(w string, _ bool) error {
		if !readable(rules, filepath.Join(a.dir, filepath.FromSlash(w)), a.dir) {
			return ErrConcealed
		}
		return nil
	})
}

// Seed copies the tree at dir into the workspace, overwriting files of the same name: a new
// turn starts from the previous turn's work (see Run.CopyPrevious). Links and special files are
// treated as by Snapshot.
func (a *Agent) Seed(dir string) error {
	src, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("workspace: seed %s: %w", a.id, err)
	}
	defer src.Close()
	a.snapMu.Lock()
	defer a.snapMu.Unlock()
	if _, err := CopyTree(context.Background(), src, ".", a.ws.root, ".", true, nil); err != nil {
		return fmt.Errorf("workspace: seed %s: %w", a.id, err)
	}
	return nil
}

// ShareText rewrites the agent's workspace path in text (an answer) into its snapshot path,
// so that paths in an answer can be opened by the agents reading it and do not name the real
// agent id. Call it on answers taken after a Snapshot.
func (a *Agent) ShareText(text string) string {
	return strings.ReplaceAll(text, a.dir, a.SnapshotDir())
}

func (a *Agent) close() error {
	a.snapMu.Lock()
	defer a.snapMu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	errs := []error{a.ws.root.Close()}
	for _, r := range a.retired {
		errs = append(errs, os.RemoveAll(r.dir))
	}
	a.retired = nil
	for _, g := range a.contexts {
		errs = append(errs, g.root.Close())
	}
	a.resMu.Lock()
	a.closed = true
	for _, r := range a.residents {
		errs = append(errs, r.Close())
	}
	a.residents = nil
	a.resMu.Unlock()
	return errors.Join(errs...)
}

// grants returns what the agent holds at this moment, with the final-write state.
func (a *Agent) grants() ([]*grant, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*grant{a.ws, a.snap}, a.contexts...), a.final
}

func isEmpty(r *os.Root) (bool, error) {
	f, err := r.Open(".")
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if len(names) == 0 && err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return len(names) == 0, nil
}

// ReadFile returns at most max bytes of the regular file rel (slash-separated, relative to the
// workspace) and whether it was cut there; a missing file is "" and no error. shared reads the
// last snapshot (what the other agents see, the permission rules applied); otherwise the live
// workspace. Links stay inside the folder read; special files and files with other hard links
// (possibly the inode of a file no grant reaches) are refused.
func (a *Agent) ReadFile(rel string, max int, shared bool) (text string, cut bool, err error) {
	root := a.ws.root
	if shared {
		r, err := os.OpenRoot(a.SnapshotDir())
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("workspace: %s's snapshot: %w", a.label, err)
		}
		defer r.Close()
		root = r
	}
	f, err := OpenRegular(root, filepath.FromSlash(rel), 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("workspace: read %s: %w", rel, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && linkCount(info) > 1 {
		return "", false, fmt.Errorf("workspace: read %s: %w", rel, hardLinked(linkCount(info)))
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return "", false, fmt.Errorf("workspace: read %s: %w", rel, err)
	}
	if len(b) > max {
		for max > 0 && !utf8.RuneStart(b[max]) { // cut between characters
			max--
		}
		return string(b[:max]), true, nil
	}
	return string(b), false, nil
}

// WriteOwn writes data to rel (slash-separated, relative to the workspace) for massgen
// itself, creating its folders: an agent's task plan in tasks/plan.json. It writes a new file
// and renames it over rel, through the workspace's root, so that neither a link the agent
// made there nor a hard link leads the write out of the workspace.
func (a *Agent) WriteOwn(rel string, data []byte) error {
	root := a.ws.root
	name := filepath.FromSlash(rel)
	if err := MkdirAll(root, filepath.Dir(name), true); err != nil {
		return fmt.Errorf("workspace: write %s: %w", rel, err)
	}
	tmp := name + ".massgen-tmp"
	_ = root.Remove(tmp)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, NewFileMode(true))
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", rel, err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, name)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("workspace: write %s: %w", rel, werr)
	}
	return nil
}
