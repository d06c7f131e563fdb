package workspace

// The file tools open regular files only. A command can put a named pipe, a socket or a
// device where a file was: opening a pipe for writing blocks until a reader comes, so a tool
// would hang the run. Every open goes through OpenRegular or OpenWrite, which open without
// blocking and decide on the descriptor itself (fstat), so nothing can be swapped in between
// a check and the open.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"massgen/internal/tool"
)

// ErrIsDir: OpenRegular or OpenWrite was given a directory.
var ErrIsDir = errors.New("is a directory")

var (
	errNotRegular = errors.New("is not a regular file")
	errHardLinked = errors.New("has other hard links")
)

// RefusedFile is a file the tools will not open. inside, when set, is the slash-separated
// entry of a copied tree it was met at.
type RefusedFile struct {
	what   string // "is a named pipe (FIFO), not a regular file"
	advice string
	kind   error // errNotRegular or errHardLinked
	inside string
}

func (e *RefusedFile) Error() string { return e.what + "; " + e.advice }
func (e *RefusedFile) Unwrap() error { return e.kind }

// Message is the refusal for the model, naming raw, the path the tool was given.
func (e *RefusedFile) Message(raw string) string {
	if e.inside != "" {
		return fmt.Sprintf("stopped at %s inside %s: it %s", tool.Quote(e.inside), tool.Quote(raw), e.Error())
	}
	return fmt.Sprintf("%s %s", tool.Quote(raw), e.Error())
}

// Special describes a file of mode m that is neither regular nor a directory.
func Special(m fs.FileMode) *RefusedFile {
	kind := "a special file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a Unix socket"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a block device"
	}
	return &RefusedFile{
		what:   "is " + kind + ", not a regular file",
		advice: "file tools read and write regular files only (delete_file removes it)",
		kind:   errNotRegular,
	}
}

func hardLinked(n uint64) *RefusedFile {
	return &RefusedFile{
		what:   fmt.Sprintf("has %d hard links", n),
		advice: "writing to it would change the file under its other names too, and those may lie outside what you can access. Write a new file instead (delete this name first, or choose another)",
		kind:   errHardLinked,
	}
}

// openError turns a failed open of name into a refusal when the reason is the file's kind:
// a socket, or a pipe opened for writing without a reader, fails with ENXIO.
func openError(r *os.Root, name string, err error) error {
	if !noDevice(err) {
		return err
	}
	if info, lerr := r.Lstat(name); lerr == nil && !info.Mode().IsRegular() && !info.IsDir() {
		return Special(info.Mode())
	}
	return err
}

// checkOpened refuses a descriptor that is not a regular file.
func checkOpened(f *os.File) (fs.FileInfo, error) {
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case info.IsDir():
		return nil, ErrIsDir
	case !info.Mode().IsRegular():
		return nil, Special(info.Mode())
	}
	return info, nil
}

// OpenRegular opens name under r for reading, refusing directories and special files.
func OpenRegular(r *os.Root, name string, flags int) (*os.File, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|oNonBlock|flags, 0)
	if err != nil {
		return nil, openError(r, name, err)
	}
	if _, err := checkOpened(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// OpenWrite opens name under r to replace its content (created with perm when flags hold
// os.O_CREATE), refusing special files and files with other hard links: those may be the
// inode of a file outside every grant, linked in by a command. The file is truncated only
// after the checks, on the descriptor they were made on.
func OpenWrite(r *os.Root, name string, flags int, perm fs.FileMode) (*os.File, error) {
	f, err := r.OpenFile(name, os.O_WRONLY|oNonBlock|flags, perm)
	if err != nil {
		return nil, openError(r, name, err)
	}
	info, err := checkOpened(f)
	if err == nil {
		if n := linkCount(info); n > 1 {
			err = hardLinked(n)
		}
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// NoFollow is the open flag that refuses a symbolic link as the last component of a name
// (none where the system has no such flag): entries met in a walk are opened with it.
const NoFollow = oNoFollow
