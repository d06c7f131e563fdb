package workspace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"massgen/internal/tool"
)

// ReadBytes reads the regular file at raw (relative to the workspace, or absolute) when the
// agent may read it now, with the same confinement as read_file: after symlinks, inside what
// it holds, secrets hidden. A file larger than max bytes is refused before it is read. Errors
// are written for the model. It is for tools that send a file elsewhere (the media tools), so
// the file counts as read, as read_file's do.
func (a *Agent) ReadBytes(raw string, max int64) (abs string, data []byte, err error) {
	t, err := a.check(raw, Read)
	if err != nil {
		return "", nil, err
	}
	f, err := openRegular(t.g.root, t.rel, t.flags)
	if err != nil {
		return t.abs, nil, errors.New(fail(t, err).Content)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		return t.abs, nil, fmt.Errorf("%s is %s; the limit is %s", tool.Quote(raw), sizeText(st.Size()), sizeText(max))
	}
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	switch {
	case err != nil:
		return t.abs, nil, errors.New(fail(t, err).Content)
	case int64(len(data)) > max: // it grew while being read
		return t.abs, nil, fmt.Errorf("%s is larger than the limit of %s", tool.Quote(raw), sizeText(max))
	}
	a.touch(t.abs)
	return t.abs, data, nil
}

// WriteNew creates the file at raw with data when the agent may write there now, with the
// same confinement as write_file; missing parent directories are created. An existing file
// is not replaced: the caller picks another name.
func (a *Agent) WriteNew(raw string, data []byte) (abs string, err error) {
	t, err := a.check(raw, Write)
	if err != nil {
		return "", err
	}
	if err := mkdirAll(t.g.root, filepath.Dir(t.rel), t.g.own()); err != nil {
		return t.abs, errors.New(fail(t, err).Content)
	}
	if err := writeThrough(t, data, os.O_CREATE|os.O_EXCL); err != nil {
		if errors.Is(err, os.ErrExist) {
			return t.abs, fmt.Errorf("%s already exists", tool.Quote(raw))
		}
		return t.abs, errors.New(fail(t, err).Content)
	}
	a.touch(t.abs)
	return t.abs, nil
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
