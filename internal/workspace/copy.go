package workspace

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

var (
	errIsDir      = errors.New("is a directory")
	errNotRegular = errors.New("is not a regular file (device, pipe or socket)")
)

// openRegular opens name under r for reading, refusing directories and special files. The
// open never blocks on a pipe swapped in for a file.
func openRegular(r *os.Root, name string, flags int) (*os.File, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|oNonBlock|flags, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	switch {
	case err != nil:
	case info.IsDir():
		err = errIsDir
	case !info.Mode().IsRegular():
		err = errNotRegular
	default:
		return f, nil
	}
	_ = f.Close()
	return nil, err
}

// copyInto copies the whole of src into the folder dst, created if missing.
func copyInto(src *os.Root, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	out, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = copyTree(context.Background(), src, ".", out, ".", nil)
	return err
}

type copyStats struct {
	files, dirs, skipped int
	bytes                int64
}

// copyTree copies srcRel under src (a file or a directory) to dstRel under dst, overwriting
// files. Every access goes through the two roots, so nothing outside them is read or written.
// visit, when set, is called before each entry is created with its slash-separated path
// relative to the copied tree ("" for the top) and may refuse it. Relative symbolic links that
// stay inside the tree are recreated; other links and special files are skipped.
func copyTree(ctx context.Context, src *os.Root, srcRel string, dst *os.Root, dstRel string,
	visit func(within string, dir bool) error,
) (copyStats, error) {
	var st copyStats
	err := walkRoot(ctx, src, srcRel, func(p, within string, d fs.DirEntry) error {
		target := filepath.Join(dstRel, filepath.FromSlash(within))
		if visit != nil {
			if err := visit(within, d.IsDir()); err != nil {
				return err
			}
		}
		switch t := d.Type(); {
		case d.IsDir():
			st.dirs++
			return dst.MkdirAll(target, 0o755)
		case t.IsRegular():
			n, err := copyFile(src, p, dst, target)
			if errors.Is(err, errNotRegular) || errors.Is(err, errIsDir) {
				st.skipped++ // swapped while walking
				return nil
			}
			st.files++
			st.bytes += n
			return err
		case t&fs.ModeSymlink != 0:
			link, err := src.Readlink(p)
			if err != nil {
				return err
			}
			if within == "" || filepath.IsAbs(link) || !filepath.IsLocal(path.Join(path.Dir(within), filepath.ToSlash(link))) {
				st.skipped++
				return nil
			}
			_ = dst.Remove(target)
			st.files++
			return dst.Symlink(link, target)
		default:
			st.skipped++
			return nil
		}
	})
	return st, err
}

func copyFile(src *os.Root, name string, dst *os.Root, target string) (int64, error) {
	in, err := openRegular(src, name, oNoFollow)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return 0, err
	}
	if old, err := dst.Lstat(target); err == nil && old.Mode()&fs.ModeSymlink != 0 {
		_ = dst.Remove(target) // replace a link, never write through it
	}
	out, err := dst.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|oNoFollow, info.Mode().Perm()|0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	return n, errors.Join(err, out.Close())
}
