package workspace

import (
	"io/fs"
	"os"

	"massgen/internal/private"
)

// own reports whether the grant is one of massgen's own trees (a workspace or the snapshots),
// whose folders and files only the user may read; a context path is the user's own folder,
// where what the tools create gets the ordinary modes any program's would.
func (g *grant) own() bool { return g.kind != kindContext }

// MkdirAll creates rel and its missing parents under root: private folders in massgen's own
// trees, ordinary ones (umask applied) elsewhere.
func MkdirAll(root *os.Root, rel string, own bool) error {
	if own {
		return private.MkdirAllIn(root, rel)
	}
	return root.MkdirAll(rel, 0o755)
}

// NewFileMode is the mode of a file a tool creates: private in massgen's own trees.
func NewFileMode(own bool) fs.FileMode {
	if own {
		return private.FileMode
	}
	return 0o644
}

// copyMode is the mode of a copy of a file of mode m: private in massgen's own trees, else
// m's with the user's read and write added.
func copyMode(m fs.FileMode, own bool) fs.FileMode {
	if own {
		return private.CopyMode(m)
	}
	return m.Perm() | 0o600
}
