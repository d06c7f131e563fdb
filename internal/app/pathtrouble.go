package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// pathTrouble says what is wrong with the path a file operation failed on, in a user's words
// rather than the system call's ("mkdir /proc/nope: no such file or directory" is "/proc/nope
// cannot be created in /proc").
func pathTrouble(err error) string {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	p := pe.Path
	switch {
	case errors.Is(pe.Err, syscall.ENOTDIR):
		if st, serr := os.Stat(p); serr == nil && !st.IsDir() {
			return p + " is a file, not a folder"
		}
		return "a file is in the way on the path " + p
	case errors.Is(pe.Err, fs.ErrNotExist) && (pe.Op == "mkdir" || pe.Op == "mkdirat"):
		return fmt.Sprintf("%s cannot be created in %s", p, filepath.Dir(p))
	case errors.Is(pe.Err, fs.ErrNotExist):
		return p + " does not exist"
	case errors.Is(pe.Err, fs.ErrPermission):
		return "no permission to write " + p
	case errors.Is(pe.Err, syscall.EROFS):
		return p + " is on a read-only file system"
	case errors.Is(pe.Err, syscall.ENOSPC):
		return "the disk holding " + p + " is full"
	}
	return fmt.Sprintf("%s: %v", p, pe.Err)
}
