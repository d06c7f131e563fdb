package filetool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// ReadBytes reads the regular file at raw (relative to ws's workspace, or absolute) when the
// agent may read it now, with the same confinement as read_file: after symlinks, inside what
// it holds, secrets hidden. A file larger than max bytes is refused before it is read. Errors
// are written for the model. It is for tools that send a file elsewhere (the media tools), so
// the file counts as read, as read_file's do.
func ReadBytes(ws *workspace.Agent, raw string, max int64) (abs string, data []byte, err error) {
	a := &files{ws: ws}
	t, err := a.check(raw, workspace.Read)
	if err != nil {
		return "", nil, err
	}
	f, err := workspace.OpenRegular(t.Root(), t.Rel(), t.Flags())
	if err != nil {
		return t.Abs(), nil, errors.New(fail(t, err).Content)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		return t.Abs(), nil, fmt.Errorf("%s is %s; the limit is %s", tool.Quote(raw), sizeText(st.Size()), sizeText(max))
	}
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	switch {
	case err != nil:
		return t.Abs(), nil, errors.New(fail(t, err).Content)
	case int64(len(data)) > max: // it grew while being read
		return t.Abs(), nil, fmt.Errorf("%s is larger than the limit of %s", tool.Quote(raw), sizeText(max))
	}
	a.ws.Touch(t.Abs())
	return t.Abs(), data, nil
}

// WriteNew creates the file at raw with data when the agent of ws may write there now, with the
// same confinement as write_file; missing parent directories are created. An existing file
// is not replaced: the caller picks another name.
func WriteNew(ws *workspace.Agent, raw string, data []byte) (abs string, err error) {
	a := &files{ws: ws}
	t, err := a.check(raw, workspace.Write)
	if err != nil {
		return "", err
	}
	if err := workspace.MkdirAll(t.Root(), filepath.Dir(t.Rel()), t.Own()); err != nil {
		return t.Abs(), errors.New(fail(t, err).Content)
	}
	if err := writeThrough(t, data, os.O_CREATE|os.O_EXCL); err != nil {
		if errors.Is(err, os.ErrExist) {
			return t.Abs(), fmt.Errorf("%s already exists", tool.Quote(raw))
		}
		return t.Abs(), errors.New(fail(t, err).Content)
	}
	a.ws.Touch(t.Abs())
	return t.Abs(), nil
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
