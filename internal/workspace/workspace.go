// Package workspace owns the per-agent working directories of one run, the snapshots agents
// share, and the rules of what each agent may read and change there; the filetool package's
// file tools are built on it (Agent.Resolve, Agent.Walk, Agent.Tree), and the command package (execute_command, the srt sandbox) asks it what an agent
// holds (Agent.Resolve, Agent.Sight) and attaches what it starts to the run (Agent.Attach).
//
// Layout of a run (nothing is shared between two runs, not even of one config):
//
//	<root>/<runID>/<agent id>/workspace   the agent's private, writable workspace
//	<root>/<runID>/snapshots/<label>/     the latest shared snapshot of the agent labelled <label>
//	<root>/<runID>/.staging/              snapshots being copied (never visible to agents)
//	<root>/<runID>/previous_turn/         the previous turn's winning workspace (conversations)
//
// Other agents address snapshots by their absolute path, <root>/<runID>/snapshots/<label>/...;
// the tool descriptions state both directories, so the same path works in the file tools and
// in commands. Only anonymous labels appear under snapshots/.
//
// Every path a tool receives is checked against the roots the agent holds at that moment
// (workspace: read/write; snapshots: read; context paths: read, and write for the final
// presenter where the config says so) after resolving symbolic links, and then used through an
// os.Root opened on the granted root, so a link swapped in after the check cannot escape.
//
// Beyond the grants, the file tools (through the helpers here)
//   - open regular files only, without blocking, and decide on the opened descriptor: a named
//     pipe, a socket or a device a command left under a file's name is refused at once, never
//     waited on (special_files.go);
//   - never write in place to a file with other hard links, whose other names may lie outside
//     every grant; replacing or deleting such a name is allowed (special_files.go);
//   - hide, by one rule for direct access and for every entry a walk yields, massgen's private
//     trees (the run's workspaces, the logs, .massgen and massgen_logs folders in context
//     paths) and, in context paths, files that commonly hold secrets unless a context path
//     names the file itself (secrets.go).
package workspace

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"massgen/internal/private"
)

// Run is the directory tree of one run. Its methods are safe for concurrent use.
type Run struct {
	dir       string // <root>/<runID>, symlinks resolved
	snapDir   string // <dir>/snapshots
	stageDir  string // <dir>/.staging
	snapshots *os.Root

	mu     sync.Mutex
	agents map[string]*Agent // by id
	labels map[string]bool
	hidden []string // trees reachable only through an own workspace or the snapshots
	seq    int      // names staging directories
	closed bool
}

// NewRun creates <root>/<runID>/ with its snapshots folder. root is created if missing
// (typically ".massgen/workspaces"); runID must be unique for the run (the log folder name,
// for example), and an existing <root>/<runID> is refused, so two runs never share a directory.
// The whole of root is hidden from the agents' context paths: another run's or another agent's
// private workspace is never readable through a context path that happens to contain it.
func NewRun(root, runID string) (*Run, error) { return openRun(root, runID, false) }

// ReopenRun takes up the run runID under root that a process before this one left (massgen
// resume): its workspaces and snapshots are kept as they are, and it is created when missing.
func ReopenRun(root, runID string) (*Run, error) { return openRun(root, runID, true) }

func openRun(root, runID string, reopen bool) (*Run, error) {
	if err := checkName("run id", runID); err != nil {
		return nil, err
	}
	if err := private.MkdirAll(root); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if realRoot, err = filepath.Abs(realRoot); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	dir := filepath.Join(realRoot, runID)
	if err := private.Mkdir(dir); err != nil && !(reopen && errors.Is(err, os.ErrExist) && isRealDir(dir)) {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("workspace: run directory %s already exists (each run needs a fresh id)", dir)
		}
		return nil, fmt.Errorf("workspace: %w", err)
	}
	r := &Run{
		dir:      dir,
		snapDir:  filepath.Join(dir, "snapshots"),
		stageDir: filepath.Join(dir, ".staging"),
		agents:   map[string]*Agent{},
		labels:   map[string]bool{},
		hidden:   []string{realRoot},
	}
	for _, d := range []string{r.snapDir, r.stageDir} {
		if err := private.Mkdir(d); err != nil && !(reopen && errors.Is(err, os.ErrExist) && isRealDir(d)) {
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	if r.snapshots, err = os.OpenRoot(r.snapDir); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return r, nil
}

// previousName is the run's copy of the previous turn's workspace.
const previousName = "previous_turn"

// CopyPrevious copies src, the winner's workspace of the conversation's previous turn, into
// <run>/previous_turn and returns that folder. MassGen gives it to every agent twice from the
// second turn on: as a read-only context path, to compare against, and as a writable copy in
// its own workspace (Agent.Seed). The copy keeps the path free of the previous winner's id.
func (r *Run) CopyPrevious(src string) (string, error) {
	in, err := os.OpenRoot(src)
	if err != nil {
		return "", fmt.Errorf("workspace: previous turn: %w", err)
	}
	defer in.Close()
	dst := filepath.Join(r.dir, previousName)
	if err := copyInto(in, dst, nil); err != nil {
		return "", fmt.Errorf("workspace: previous turn: %w", err)
	}
	return dst, nil
}

// Dir is the run's directory.
func (r *Run) Dir() string { return r.dir }

// SnapshotsDir is the directory holding every agent's shared snapshot, one folder per label.
func (r *Run) SnapshotsDir() string { return r.snapDir }

// HidePath makes the tree at p unreachable through context paths (the log directory, for
// example, which holds real agent ids and every answer). p need not exist yet. It applies to
// every agent of the run from the next tool call on.
func (r *Run) HidePath(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return fmt.Errorf("workspace: hide %s: %w", p, err)
	}
	if real, err := realPath(abs); err == nil {
		abs = real
	}
	r.mu.Lock()
	r.hidden = append(r.hidden, abs)
	r.mu.Unlock()
	return nil
}

func (r *Run) hiddenPaths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.hidden...)
}

// Agent creates the private workspace <run>/<id>/workspace for the agent with the real id and
// the anonymous label (e.g. "agent1") that names its snapshot. Ids and labels must be unique in
// the run. Read-before-delete is on, no context paths are held and final write access is off.
func (r *Run) Agent(id, label string) (*Agent, error) {
	if err := checkName("agent id", id); err != nil {
		return nil, err
	}
	if id == "snapshots" || id == previousName {
		return nil, fmt.Errorf("workspace: agent id %q is reserved", id)
	}
	if err := checkName("label", label); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return nil, errors.New("workspace: run is closed")
	case r.agents[id] != nil:
		return nil, fmt.Errorf("workspace: agent id %q used twice", id)
	case r.labels[label]:
		return nil, fmt.Errorf("workspace: label %q used twice", label)
	}
	dir := filepath.Join(r.dir, id, "workspace")
	if err := private.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	a := &Agent{
		run: r, id: id, label: label, dir: dir, readBeforeDelete: true, touched: map[string]bool{},
		ws:   &grant{kind: kindWorkspace, path: dir, root: root},
		snap: &grant{kind: kindSnapshots, path: r.snapDir, root: r.snapshots},
	}
	r.agents[id], r.labels[label] = a, true
	return a, nil
}

// Close stops what runs in every agent's workspace (Resident.Stop, all at once: the command
// package's background shells) and returns once it is gone, then closes the residents and
// releases the directory handles of the run and its agents. Files stay on disk. File tools
// called after Close fail. Close is idempotent.
func (r *Run) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true // no agent is added from now on
	stopResidents(slices.Collect(maps.Values(r.agents)))
	errs := []error{r.snapshots.Close()}
	for _, a := range r.agents {
		errs = append(errs, a.close())
	}
	return errors.Join(errs...)
}

// StopResidents stops what runs in every agent's workspace (Resident.Stop), as Close does,
// while the files stay usable: the winner's workspace is copied out once nothing writes into
// it.
func (r *Run) StopResidents() {
	r.mu.Lock()
	agents := slices.Collect(maps.Values(r.agents))
	r.mu.Unlock()
	stopResidents(agents)
}

// stopResidents stops the residents of all the agents at once and waits for them.
func stopResidents(agents []*Agent) {
	var wg sync.WaitGroup
	for _, a := range agents {
		for _, res := range a.attached() {
			wg.Go(res.Stop)
		}
	}
	wg.Wait()
}

// checkName accepts a single, visible path component.
func checkName(what, s string) error {
	if s == "" || s == "." || s == ".." || strings.HasPrefix(s, ".") || strings.ContainsAny(s, `/\`+"\x00") ||
		len(s) > maxComponent {
		return fmt.Errorf("workspace: %s %q must be one path component, not starting with a dot", what, s)
	}
	return nil
}

// ContextPath is one entry of orchestrator.context_paths (or a backend's context_paths).
type ContextPath struct {
	// Path must exist; it may be a file, which grants only that file.
	Path string
	// Write marks permission: write. It takes effect only for the final presenter, between
	// GrantFinal and RevokeFinal; otherwise the path is read-only.
	Write bool
	// Protected lists paths relative to Path (or absolute, inside Path) that stay read-only and
	// undeletable even when Path is writable.
	Protected []string
	// Copy, when set (write_mode), is the agent's own copy of Path inside its workspace: the
	// agent changes the copy, Path stays read-only even for the final presenter, and the
	// presenter's changes are applied to Path after the session (package worktree).
	Copy string
}

// MergeContextPaths joins the orchestrator's context paths with an agent's own; for the same
// path the orchestrator's entry wins, as in MassGen. Order is kept, orchestrator entries first.
func MergeContextPaths(orchestrator, agent []ContextPath) []ContextPath {
	out := append([]ContextPath(nil), orchestrator...)
	seen := map[string]bool{}
	for _, c := range orchestrator {
		seen[filepath.Clean(c.Path)] = true
	}
	for _, c := range agent {
		if !seen[filepath.Clean(c.Path)] {
			seen[filepath.Clean(c.Path)] = true
			out = append(out, c)
		}
	}
	return out
}

// isRealDir reports whether path is a folder itself, not a link to one.
func isRealDir(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.IsDir()
}
