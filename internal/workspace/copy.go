package workspace

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"massgen/internal/private"
)

// copyInto copies the whole of src into the private folder dst (a snapshot, a log's copy),
// created if missing; visit is CopyTree's.
func copyInto(src *os.Root, dst string, visit func(within string, dir bool) error) error {
	if err := private.MkdirAll(dst); err != nil {
		return err
	}
	out, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = CopyTree(context.Background(), src, ".", out, ".", true, visit)
	return err
}

// CopyStats counts what CopyTree did.
type CopyStats struct {
	Files, Dirs, Skipped int
	Hidden               int // entries visit concealed (ErrConcealed)
	Bytes                int64
}

// CopyTree copies srcRel under src (a file or a directory) to dstRel under dst, overwriting
// files; own says dst is one of massgen's own trees, whose copies are private (modes.go).
// Every access goes through the two roots, so nothing outside them is read or written.
// visit, when set, is called before each entry is created with its slash-separated path
// relative to the copied tree ("" for the top) and may refuse it, or leave it (and what is
// below it) out by returning ErrConcealed. Relative symbolic links that stay inside the tree
// are recreated; other links and special files are skipped. A destination file that is
// special or has other hard links stops the copy (OpenWrite).
func CopyTree(ctx context.Context, src *os.Root, srcRel string, dst *os.Root, dstRel string, own bool,
	visit func(within string, dir bool) error,
) (CopyStats, error) {
	var st CopyStats
	err := walkRoot(ctx, src, srcRel, func(p, within string, d fs.DirEntry) error {
		target := filepath.Join(dstRel, filepath.FromSlash(within))
		if visit != nil {
			err := visit(within, d.IsDir())
			switch {
			case errors.Is(err, ErrConcealed) && d.IsDir():
				st.Hidden++
				return fs.SkipDir
			case errors.Is(err, ErrConcealed):
				st.Hidden++
				return nil
			case err != nil:
				return err
			}
		}
		switch t := d.Type(); {
		case d.IsDir():
			st.Dirs++
			return MkdirAll(dst, target, own)
		case t.IsRegular():
			in, err := OpenRegular(src, p, oNoFollow)
			if errors.Is(err, errNotRegular) || errors.Is(err, ErrIsDir) {
				st.Skipped++ // swapped while walking
				return nil
			} else if err != nil {
				return err
			}
			n, err := copyFile(in, dst, target, own)
			_ = in.Close()
			var rf *RefusedFile
			if errors.As(err, &rf) && within != "" {
				rf.inside = within
			}
			st.Files++
			st.Bytes += n
			return err
		case t&fs.ModeSymlink != 0:
			link, err := src.Readlink(p)
			if err != nil {
				return err
			}
			if within == "" || filepath.IsAbs(link) || !filepath.IsLocal(path.Join(path.Dir(within), filepath.ToSlash(link))) {
				st.Skipped++
				return nil
			}
			_ = dst.Remove(target)
			st.Files++
			return dst.Symlink(link, target)
		default:
			st.Skipped++
			return nil
		}
	})
	return st, err
}

// copyFile copies the open file in to target under dst, replacing a link there rather than
// writing through it.
func copyFile(in *os.File, dst *os.Root, target string, own bool) (int64, error) {
	info, err := in.Stat()
	if err != nil {
		return 0, err
	}
	if old, err := dst.Lstat(target); err == nil && old.Mode()&fs.ModeSymlink != 0 {
		_ = dst.Remove(target) // replace a link, never write through it
	}
	out, err := OpenWrite(dst, target, os.O_CREATE|oNoFollow, copyMode(info.Mode(), own))
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	return n, errors.Join(err, out.Close())
}
