package worktree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"massgen/internal/workspace"
)

// excluded reports whether the file at rel (slash-separated, under base) stays out of every
// copy and is never applied back: massgen's folders, .git, the folders a context path keeps
// read-only (node_modules, .venv, ...) and the files that commonly hold secrets.
func excluded(base, rel string) bool {
	for c := range strings.SplitSeq(rel, "/") {
		if workspace.ReadOnlyInContext(c) {
			return true
		}
	}
	return workspace.SecretPattern(filepath.Join(base, filepath.FromSlash(rel))) != ""
}

// listTarget hashes what the copies start from: every regular file of the target that is not
// excluded (in a repository, the tracked and the untracked files that are not ignored).
func (s *Set) listTarget(ctx context.Context) (map[string]string, error) {
	root, err := os.OpenRoot(s.baseDir())
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if s.st.File {
		h, ok, err := hashIn(root, filepath.Base(s.st.Target))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("context path %s is not a regular file", s.st.Target)
		}
		return map[string]string{filepath.Base(s.st.Target): h}, nil
	}
	names, err := s.list(ctx, s.st.Target)
	if err != nil {
		return nil, err
	}
	base := make(map[string]string, len(names))
	var total int64
	for _, rel := range names {
		info, err := root.Lstat(filepath.FromSlash(rel))
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted but tracked, a link, a submodule: not copied
		}
		if total += info.Size(); total > MaxBytes {
			return nil, fmt.Errorf("context path %s holds more than %d MiB; every agent would get a copy of it: name a smaller folder, or use write_mode: legacy", s.st.Target, MaxBytes>>20)
		}
		h, ok, err := hashIn(root, rel)
		if err != nil {
			return nil, err
		}
		if ok {
			base[rel] = h
		}
	}
	return base, nil
}

// list returns the candidate files under dir (the target, or a tree's copy of it), relative
// and slash-separated, excluded ones left out.
func (s *Set) list(ctx context.Context, dir string) ([]string, error) {
	var names []string
	add := func(rel string) error {
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		if excluded(dir, rel) || slices.ContainsFunc(s.hide, func(h string) bool { return workspace.Within(h, abs) }) {
			return nil
		}
		if len(names) >= MaxFiles {
			return fmt.Errorf("context path %s holds more than %d files; every agent would get a copy of it: name a smaller folder, or use write_mode: legacy", s.st.Target, MaxFiles)
		}
		names = append(names, rel)
		return nil
	}
	if s.st.Kind == kindWorktree {
		out, err := s.g.run(ctx, dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, rel := range nulList(out) {
			if seen[rel] || !fs.ValidPath(rel) {
				continue
			}
			seen[rel] = true
			if err := add(rel); err != nil {
				return nil, err
			}
		}
		return names, nil
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if workspace.ReadOnlyInContext(d.Name()) || slices.ContainsFunc(s.hide, func(h string) bool { return workspace.Within(h, p) }) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return add(rel)
	})
	return names, err
}

// hashIn hashes the regular file rel under r; ok is false when there is none (missing, a
// link, a folder or a special file).
func hashIn(r *os.Root, rel string) (h string, ok bool, err error) {
	name := filepath.FromSlash(rel)
	info, err := r.Lstat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", false, nil
		}
		return "", false, err
	}
	if !info.Mode().IsRegular() {
		return "", false, nil
	}
	f, err := workspace.OpenRegular(r, name, 0)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", false, err
	}
	return hex.EncodeToString(sum.Sum(nil)), true, nil
}

// copyFile copies the regular file rel from one root to another, through the roots (no link
// leads outside either), replacing the destination in one rename; perm is the new file's mode
// unless keepMode finds an existing file whose mode to keep (with src's executable bits).
func copyFile(src *os.Root, dst *os.Root, rel string, keepMode bool) error {
	name := filepath.FromSlash(rel)
	in, err := workspace.OpenRegular(src, name, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	perm := info.Mode().Perm()
	if keepMode {
		if old, err := dst.Lstat(name); err == nil && old.Mode().IsRegular() {
			perm = old.Mode().Perm()&^0o111 | info.Mode().Perm()&0o111
		}
	}
	if dir := path.Dir(rel); dir != "." {
		if err := dst.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
			return err
		}
	}
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".massgen-apply")
	_ = dst.Remove(tmp)
	out, err := workspace.OpenWrite(dst, tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dst.Chmod(tmp, perm) // the umask may have narrowed it
	}
	if err == nil {
		err = dst.Rename(tmp, name)
	}
	if err != nil {
		_ = dst.Remove(tmp)
	}
	return err
}

// overlay makes the fresh worktree at dir hold the target as it is: its uncommitted changes,
// its untracked files, without what it deleted, and without the excluded files HEAD holds.
func (s *Set) overlay(dir string) error {
	src, err := os.OpenRoot(s.st.Target)
	if err != nil {
		return err
	}
	defer src.Close()
	tb := s.treeBase(dir)
	if err := os.MkdirAll(tb, 0o755); err != nil { // a folder HEAD does not have yet
		return err
	}
	dst, err := os.OpenRoot(tb)
	if err != nil {
		return err
	}
	defer dst.Close()
	for rel, h := range s.st.Base {
		if cur, ok, _ := hashIn(dst, rel); ok && cur == h {
			continue
		}
		if err := copyFile(src, dst, rel, false); err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
	}
	// What HEAD holds that the target does not (deleted there), and the secrets a context
	// path would hide.
	return filepath.WalkDir(tb, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == tb {
			return err
		}
		rel, err := filepath.Rel(tb, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" && path.Dir(rel) == "." && s.st.Prefix == "" {
				return fs.SkipDir // the worktree's own link to its repository (a file, usually)
			}
			return nil
		}
		if rel == ".git" && s.st.Prefix == "" {
			return nil
		}
		secret := workspace.SecretPattern(filepath.Join(s.st.Target, filepath.FromSlash(rel))) != ""
		if _, kept := s.st.Base[rel]; kept && !secret {
			return nil
		}
		if !secret && excluded(s.st.Target, rel) {
			return nil // node_modules and the like: read-only where they are, left as HEAD has them
		}
		return os.Remove(p)
	})
}

// makeCopy copies the target's base files into dir.
func (s *Set) makeCopy(dir string) error {
	src, err := os.OpenRoot(s.baseDir())
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	dst, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer dst.Close()
	for rel := range s.st.Base {
		if err := copyFile(src, dst, rel, false); err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
	}
	return nil
}
