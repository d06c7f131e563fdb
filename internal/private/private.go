// Package private creates massgen's own folders and files (logs, sessions, workspaces,
// snapshots, eval results, state under ~/.massgen) so that only the user running massgen can
// read them: folders 0700, files 0600. They hold every prompt, answer and file an agent saw, so
// the modes are set explicitly, whatever the umask, rather than left to it; changing the
// umask in-process is no answer, as every goroutine shares it.
//
// Files massgen writes into the user's own folders (a granted context path, --output-file)
// keep ordinary modes and do not come here.
package private

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes of massgen's own folders and files.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// MkdirAll creates path and every missing parent as private folders; folders that already
// exist keep their modes (a log root the user made, /tmp). It is os.MkdirAll otherwise.
func MkdirAll(path string) error {
	missing := missingDirs(path)
	if err := os.MkdirAll(path, DirMode); err != nil {
		return err
	}
	for _, d := range missing {
		if err := os.Chmod(d, DirMode); err != nil {
			return err
		}
	}
	return nil
}

// MkdirAllIn is MkdirAll for name inside root (the confined tools' way to reach a tree).
func MkdirAllIn(root *os.Root, name string) error {
	var missing []string
	for p := filepath.Clean(name); p != "." && p != string(filepath.Separator); p = filepath.Dir(p) {
		if _, err := root.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, p)
	}
	if err := root.MkdirAll(name, DirMode); err != nil {
		return err
	}
	for _, d := range missing {
		if err := root.Chmod(d, DirMode); err != nil {
			return err
		}
	}
	return nil
}

// missingDirs lists path and those of its parents that do not exist, deepest first.
func missingDirs(path string) []string {
	var out []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, p)
		if filepath.Dir(p) == p {
			return out
		}
	}
}

// Mkdir creates the private folder path; its parent must exist. It is os.Mkdir otherwise: an
// existing path is an error wrapping fs.ErrExist.
func Mkdir(path string) error {
	if err := os.Mkdir(path, DirMode); err != nil {
		return err
	}
	return os.Chmod(path, DirMode)
}

// OpenFile is os.OpenFile for massgen's own files: with os.O_CREATE the file is made private,
// and an existing one is made private too (an older massgen left it 0644).
func OpenFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag, FileMode)
	if err != nil || flag&os.O_CREATE == 0 {
		return f, err
	}
	if err := f.Chmod(FileMode); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// WriteFile writes data to the private file path, creating or truncating it.
func WriteFile(path string, data []byte) error {
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// CopyMode is the mode of a private copy of a file whose mode is m: read and write for the
// user, executable for the user when m is executable for anyone, nothing for others.
func CopyMode(m fs.FileMode) fs.FileMode {
	if m.Perm()&0o111 != 0 {
		return 0o700
	}
	return FileMode
}

// WriteFileAtomic replaces the private file path with data through a private temporary file
// in the same folder and a rename, so that readers, and a process killed while writing, never
// see half a file.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp") // 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err = errors.Join(err, tmp.Close()); err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}
