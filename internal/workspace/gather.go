package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// MaxGatherFiles caps the files one GatherPart copies: a part's snapshot is a copy of a
// workspace the agent filled, and a presenter's workspace is not a dump for anything.
const MaxGatherFiles = 20000

// GatherPart copies the latest shared snapshot of the agent labelled label into this agent's
// workspace, for decomposition mode's presenter, so that every part's files reach the final
// result. A file the workspace does not have is copied to the same path (added); one it has
// with the same contents is left; one it has with different contents is a conflict: the
// part's version is written beside it as "<path>.from-<label>" and conflicts maps the path to
// that copy's path, so that nothing is overwritten and the presenter can reconcile them.
// Links and special files are treated as by Snapshot. A part without a snapshot adds nothing.
func (a *Agent) GatherPart(label string) (added []string, conflicts map[string]string, err error) {
	if label == a.label || !filepath.IsLocal(label) {
		return nil, nil, nil
	}
	src, err := os.OpenRoot(filepath.Join(a.run.snapDir, label))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("workspace: gather %s: %w", label, err)
	}
	defer src.Close()
	a.snapMu.Lock()
	defer a.snapMu.Unlock()
	dst := a.ws.root
	conflicts = map[string]string{}
	n := 0
	err = walkRoot(context.Background(), src, ".", func(p, within string, d fs.DirEntry) error {
		if within == "" || !d.Type().IsRegular() {
			return nil
		}
		if n++; n > MaxGatherFiles {
			return fmt.Errorf("over %d files", MaxGatherFiles)
		}
		target := filepath.FromSlash(within)
		if dir := path.Dir(within); dir != "." {
			if err := MkdirAll(dst, filepath.FromSlash(dir), true); err != nil {
				return err
			}
		}
		info, lerr := dst.Lstat(target)
		switch {
		case errors.Is(lerr, os.ErrNotExist):
			if _, err := CopyTree(context.Background(), src, p, dst, target, true, nil); err != nil {
				return err
			}
			added = append(added, within)
			return nil
		case lerr != nil:
			return lerr
		case info.Mode().IsRegular():
			same, err := sameContents(src, p, dst, target)
			if err != nil || same {
				return err
			}
		}
		copyPath := within + ".from-" + label
		if _, err := CopyTree(context.Background(), src, p, dst, filepath.FromSlash(copyPath), true, nil); err != nil {
			return err
		}
		conflicts[within] = copyPath
		return nil
	})
	if err != nil {
		return added, conflicts, fmt.Errorf("workspace: gather %s into %s: %w", label, a.label, err)
	}
	return added, conflicts, nil
}

// sameContents reports whether two regular files hold the same bytes.
func sameContents(ra *os.Root, a string, rb *os.Root, b string) (bool, error) {
	fa, err := OpenRegular(ra, a, oNoFollow)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := OpenRegular(rb, b, oNoFollow)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ia, err := fa.Stat()
	if err != nil {
		return false, err
	}
	ib, err := fb.Stat()
	if err != nil {
		return false, err
	}
	if ia.Size() != ib.Size() {
		return false, nil
	}
	bufA, bufB := make([]byte, 32<<10), make([]byte, 32<<10)
	for {
		na, errA := io.ReadFull(fa, bufA)
		nb, errB := io.ReadFull(fb, bufB)
		if !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		doneA := errors.Is(errA, io.EOF) || errors.Is(errA, io.ErrUnexpectedEOF)
		doneB := errors.Is(errB, io.EOF) || errors.Is(errB, io.ErrUnexpectedEOF)
		switch {
		case errA != nil && !doneA:
			return false, errA
		case errB != nil && !doneB:
			return false, errB
		case doneA || doneB:
			return doneA && doneB, nil
		}
	}
}
