package workspace

import (
	"io/fs"
	"os"
)

// What the agent's other rooms (the file tools, the command package's sandbox and work_dir
// checks) need of the grants: the same rules, read from outside.

// Target is a path the agent may use now as Resolve was asked. Use it through Root and Rel,
// never through Abs, so that a link swapped in after the check cannot lead outside.
type Target struct{ t target }

// Resolve checks raw (relative to the workspace, or absolute) for acc against what the agent
// holds at this moment: symbolic links resolved, massgen's trees and secret files hidden, the
// path rules applied. Errors are written for the model: they say what is allowed.
func (a *Agent) Resolve(raw string, acc Access) (Target, error) {
	t, err := a.resolve(raw, acc)
	return Target{t}, err
}

// Raw is the path as the agent gave it.
func (t Target) Raw() string { return t.t.raw }

// Abs is the path with its symbolic links resolved.
func (t Target) Abs() string { return t.t.abs }

// Root is the root the path was checked in; Rel names the path inside it.
func (t Target) Root() *os.Root { return t.t.g.root }

// Rel is the path relative to Root.
func (t Target) Rel() string { return t.t.rel }

// Flags are the extra open flags the path needs (no-follow where a context path names a file).
func (t Target) Flags() int { return t.t.flags }

// Own reports whether the path lies in one of massgen's own trees (a workspace or the
// snapshots), where what is created is private (MkdirAll, NewFileMode).
func (t Target) Own() bool { return t.t.g.own() }

// InWorkspace reports whether the path lies in the agent's own workspace.
func (t Target) InWorkspace() bool { return t.t.g.kind == kindWorkspace }

// Stat describes the file at the path, through the root it was checked in.
func (t Target) Stat() (fs.FileInfo, error) { return t.t.g.root.Stat(t.t.rel) }

// SnapshotsDir is the run's folder of shared snapshots, which the agent reads.
func (a *Agent) SnapshotsDir() string { return a.run.snapDir }

// Root is one tree the agent holds.
type Root struct {
	Path      string   // symlinks resolved
	File      bool     // only the file at Path is held
	Context   bool     // a context path (else the workspace or the snapshots)
	Workspace bool     // the agent's own workspace
	Writable  bool     // writable now: the workspace, or a writable context path of the final presenter
	Protected []string // paths inside a writable context path that stay read-only
}

// Sight is what the agent holds and what stays hidden from it, at one moment.
type Sight struct {
	Roots  []Root          // the workspace, the snapshots, then the context paths
	Hidden []string        // massgen's private trees: the run's workspaces, Run.HidePath's paths
	Named  map[string]bool // files context paths name, which the secret rule does not hide
}

// Sight returns what the agent holds and what stays hidden from it now.
func (a *Agent) Sight() Sight {
	grants, final := a.grants()
	v := a.viewOf(grants)
	s := Sight{Hidden: v.hidden, Named: v.named}
	for _, g := range grants {
		s.Roots = append(s.Roots, Root{
			Path: g.path, File: g.file, Context: g.kind == kindContext, Workspace: g.kind == kindWorkspace,
			Writable:  g.kind == kindWorkspace || g.kind == kindContext && g.write && final,
			Protected: g.protected,
		})
	}
	return s
}

// MassgenDirs are the names of massgen's own folders of state and logs (.massgen,
// massgen_logs), hidden inside context paths.
func MassgenDirs() []string { return []string{".massgen", "massgen_logs"} }
