//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"syscall"
)

// linkCount is the number of hard links of the file info describes.
func linkCount(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// noDevice reports an open refused for the file's kind (ENXIO).
func noDevice(err error) bool { return errors.Is(err, syscall.ENXIO) }
