package filetool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// noDescend reports whether list_directory, search_files and compare_directories leave a
// directory of this name unexpanded.
func noDescend(name string) bool {
	switch name {
	case ".git", "node_modules", ".venv", "venv", "__pycache__", ".massgen", ".pytest_cache", ".mypy_cache", ".ruff_cache":
		return true
	}
	return false
}

// hiddenNote tells the model that n entries were left out, without naming them.
func hiddenNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n[%s not shown: massgen's private folders, files that may hold secrets, or paths your permission rules keep from you]", entryCount(n))
}

// holdsHidden refuses to verb (delete, workspace.Move) the tree at raw as a whole when it holds n
// concealed entries: the walk that checks the tree never saw them, and the removal or rename
// would take them along. "" when n is 0.
func holdsHidden(raw string, n int, verb, Verb string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s holds %s hidden from agents (massgen's private folders, files that may hold secrets, or paths your permission rules keep from you); it cannot be %s as a whole. %s the other entries one by one",
		tool.Quote(raw), entryCount(n), verb, Verb)
}

func (a *files) listDirectory(ctx context.Context, args string) tool.Result {
	var in struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if r, ok := tool.Decode(args, &in, `{"path": "."}`); !ok {
		return r
	}
	if in.Path == "" {
		in.Path = "."
	}
	t, err := a.check(in.Path, workspace.Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	info, err := t.Root().Stat(t.Rel())
	if err != nil {
		return fail(t, err)
	}
	switch {
	case !info.IsDir() && !info.Mode().IsRegular():
		return tool.Errorf(workspace.Special(info.Mode()).Message(in.Path))
	case !info.IsDir():
		return tool.Result{Content: fmt.Sprintf("%s is a file of %d bytes (read it with read_file).", t.Abs(), info.Size())}
	}
	var lines []string
	full := false
	hidden, err := a.ws.Walk(ctx, t, func(within string, d fs.DirEntry) error {
		if within == "" {
			return nil
		}
		if len(lines) == maxList {
			full = true
			return fs.SkipAll
		}
		switch {
		case d.IsDir() && in.Recursive && noDescend(d.Name()):
			lines = append(lines, within+"/ (not expanded)")
			return fs.SkipDir
		case d.IsDir():
			lines = append(lines, within+"/")
			if !in.Recursive {
				return fs.SkipDir
			}
		case d.Type()&fs.ModeSymlink != 0:
			link, _ := t.Root().Readlink(filepath.Join(t.Rel(), within))
			lines = append(lines, within+" -> "+link)
		case d.Type().IsRegular():
			size := int64(0)
			if fi, err := d.Info(); err == nil {
				size = fi.Size()
			}
			lines = append(lines, fmt.Sprintf("%s (%d bytes)", within, size))
		default:
			lines = append(lines, within+" (special file)")
		}
		return nil
	})
	if err != nil {
		return fail(t, err)
	}
	if len(lines) == 0 {
		return tool.Result{Content: fmt.Sprintf("%s is empty.", t.Abs()) + hiddenNote(hidden)}
	}
	out := fmt.Sprintf("%s:\n%s", t.Abs(), strings.Join(lines, "\n"))
	if full {
		out += fmt.Sprintf("\n[listing stopped at %d entries; list a subdirectory to see more]", maxList)
	}
	return tool.Result{Content: out + hiddenNote(hidden)}
}

func (a *files) searchFiles(ctx context.Context, args string) tool.Result {
	var in struct {
		Pattern         string `json:"pattern"`
		Path            string `json:"path"`
		Regex           bool   `json:"regex"`
		CaseInsensitive bool   `json:"case_insensitive"`
		MaxResults      int    `json:"max_results"`
	}
	if r, ok := tool.Decode(args, &in, `{"pattern": "TODO", "path": "."}`); !ok {
		return r
	}
	if in.Pattern == "" {
		return tool.Errorf(`pattern is empty; send {"pattern": "text to find"}`)
	}
	match := func(s string) bool { return strings.Contains(s, in.Pattern) }
	if in.Regex || in.CaseInsensitive {
		expr := in.Pattern
		if !in.Regex {
			expr = regexp.QuoteMeta(expr)
		}
		if in.CaseInsensitive {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return tool.Errorf(fmt.Sprintf("pattern is not a valid RE2 regular expression: %v", err))
		}
		match = re.MatchString
	}
	limit := in.MaxResults
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, maxSearch)
	if in.Path == "" {
		in.Path = "."
	}
	t, err := a.check(in.Path, workspace.Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	if info, err := t.Root().Stat(t.Rel()); err != nil {
		return fail(t, err)
	} else if !info.IsDir() && !info.Mode().IsRegular() {
		return tool.Errorf(workspace.Special(info.Mode()).Message(in.Path))
	}
	var hits []string
	skipped := 0
	hidden, err := a.ws.Walk(ctx, t, func(within string, d fs.DirEntry) error {
		if d.IsDir() {
			if within != "" && noDescend(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || binaryRefusal(d.Name()) != "" {
			return nil
		}
		if len(hits) >= limit {
			return fs.SkipAll
		}
		name := within
		if name == "" {
			name = filepath.Base(t.Abs())
		}
		if !searchFile(t, within, name, match, limit, &hits) {
			skipped++
		}
		return nil
	})
	if err != nil {
		return fail(t, err)
	}
	if len(hits) == 0 {
		return tool.Result{Content: fmt.Sprintf("No matches for %q under %s.", in.Pattern, t.Abs()) + hiddenNote(hidden)}
	}
	out := fmt.Sprintf("Matches under %s:\n%s", t.Abs(), strings.Join(hits, "\n"))
	if len(hits) >= limit {
		out += fmt.Sprintf("\n[stopped at %d matches; narrow the path or the pattern]", limit)
	}
	if skipped > 0 {
		out += fmt.Sprintf("\n[%d binary, unreadable or files over %d MiB were not searched]", skipped, maxSearchIn>>20)
	}
	return tool.Result{Content: out + hiddenNote(hidden)}
}

// searchFile appends the matching lines of one file; it reports false for a file it skipped.
func searchFile(t workspace.Target, within, name string, match func(string) bool, limit int, hits *[]string) bool {
	f, err := workspace.OpenRegular(t.Root(), filepath.Join(t.Rel(), filepath.FromSlash(within)), 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Size() > maxSearchIn {
		return false
	}
	br := bufio.NewReader(f)
	if head, _ := br.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan() && len(*hits) < limit; n++ {
		if line := sc.Text(); match(line) {
			if len(line) > 300 {
				line = line[:300] + "..."
			}
			*hits = append(*hits, fmt.Sprintf("%s:%d: %s", name, n, line))
		}
	}
	return true
}

func (a *files) copyFile(ctx context.Context, args string) tool.Result {
	var in struct {
		Source      string `json:"source"`
		Destination string `json:"destination"`
		Overwrite   bool   `json:"overwrite"`
	}
	if r, ok := tool.Decode(args, &in, `{"source": "/.../snapshots/agent1/app.py", "destination": "app.py"}`); !ok {
		return r
	}
	if in.Destination == "" {
		return tool.Errorf("destination is empty; give the path of the copy (relative to your workspace " + a.ws.Dir() + ")")
	}
	src, err := a.check(in.Source, workspace.Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	dst, err := a.check(in.Destination, workspace.Write)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	info, err := src.Root().Stat(src.Rel())
	if err != nil {
		return fail(src, err)
	}
	if !info.IsDir() && !info.Mode().IsRegular() {
		return tool.Errorf(workspace.Special(info.Mode()).Message(in.Source))
	}
	from, to := a.ws.Tree(src), a.ws.Tree(dst)
	// A destination in a part of the source the copy never enters (the workspace under a
	// project's .massgen) cannot make the copy copy itself.
	if info.IsDir() && workspace.Within(src.Abs(), dst.Abs()) && !from.Concealed(dst.Abs()) {
		return tool.Errorf(fmt.Sprintf("destination %s is inside the source directory %s; copy somewhere else", tool.Quote(in.Destination), tool.Quote(in.Source)))
	}
	if _, err := dst.Root().Lstat(dst.Rel()); err == nil && !in.Overwrite {
		return tool.Errorf(fmt.Sprintf("%s already exists; set overwrite to true to replace it, or choose another destination", tool.Quote(in.Destination)))
	}
	if err := workspace.MkdirAll(dst.Root(), filepath.Dir(dst.Rel()), dst.Own()); err != nil {
		return fail(dst, err)
	}
	var created []string
	visit := func(w string, dir bool) error {
		old := filepath.Join(src.Abs(), filepath.FromSlash(w))
		if w != "" && from.Concealed(old) || !from.Readable(old) {
			return workspace.ErrConcealed
		}
		abs := filepath.Join(dst.Abs(), filepath.FromSlash(w))
		if err := to.Allow(abs, workspace.Write); err != nil {
			return err
		}
		if err := to.Ruled(abs, true); err != nil {
			return err
		}
		if len(created) == maxCopy {
			return fmt.Errorf("copy stopped after %d entries; copy smaller parts", maxCopy)
		}
		created = append(created, abs)
		return nil
	}
	st, err := workspace.CopyTree(ctx, src.Root(), src.Rel(), dst.Root(), dst.Rel(), dst.Own(), visit)
	for _, p := range created {
		a.ws.Touch(p)
	}
	if err != nil {
		var pe *fs.PathError
		var rf *workspace.RefusedFile
		switch {
		case errors.As(err, &rf):
			return tool.Errorf(rf.Message(in.Destination))
		case errors.As(err, &pe):
			return fail(dst, err)
		}
		return tool.Errorf(fmt.Sprintf("copy stopped: %v (%d files copied)", err, st.Files))
	}
	msg := fmt.Sprintf("Copied %s to %s", src.Abs(), dst.Abs())
	if info.IsDir() {
		msg += fmt.Sprintf(" (%d files, %d bytes)", st.Files, st.Bytes)
	}
	if st.Skipped > 0 {
		msg += fmt.Sprintf("; skipped %d links or special files", st.Skipped)
	}
	if st.Hidden > 0 {
		msg += fmt.Sprintf("; left out %s hidden from agents (massgen's private folders, or files that may hold secrets)", entryCount(st.Hidden))
	}
	return tool.Result{Content: msg + "."}
}

func (a *files) deleteFile(ctx context.Context, args string) tool.Result {
	var in struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if r, ok := tool.Decode(args, &in, `{"path": "old.txt"}`); !ok {
		return r
	}
	t, err := a.check(in.Path, workspace.Remove)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	info, err := t.Root().Lstat(t.Rel())
	if err != nil {
		return fail(t, err)
	}
	if !info.IsDir() {
		if info.Mode().IsRegular() && !a.ws.Touched(t.Abs()) && !exemptFromReadBeforeDelete(t.Abs()) {
			return tool.Errorf(fmt.Sprintf("%s was not read or created by you; read it first (read_file), then delete it. Files are deleted only after they have been looked at", tool.Quote(in.Path)))
		}
		if err := t.Root().Remove(t.Rel()); err != nil {
			return fail(t, err)
		}
		return tool.Result{Content: fmt.Sprintf("Deleted %s.", t.Abs())}
	}
	if msg := a.holdsOthers(t, "deleted", "Delete"); msg != "" {
		return tool.Errorf(msg)
	}
	var unread []string
	entries := 0
	tree := a.ws.Tree(t)
	hidden, err := a.ws.Walk(ctx, t, func(w string, d fs.DirEntry) error {
		if w == "" {
			return nil
		}
		entries++
		abs := filepath.Join(t.Abs(), filepath.FromSlash(w))
		if err := tree.Allow(abs, workspace.Remove); err != nil {
			return err
		}
		if err := tree.Ruled(abs, true); err != nil {
			return err
		}
		if d.Type().IsRegular() && !a.ws.Touched(abs) && !exemptFromReadBeforeDelete(abs) {
			unread = append(unread, w)
		}
		return nil
	})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fail(t, err)
		}
		return tool.Errorf(fmt.Sprintf("cannot delete %s: %v", tool.Quote(in.Path), err))
	}
	if msg := holdsHidden(in.Path, hidden, "deleted", "Delete"); msg != "" {
		return tool.Errorf(msg)
	}
	if entries > 0 && !in.Recursive {
		return tool.Errorf(fmt.Sprintf("%s is a directory that is not empty (%d entries); set recursive to true to delete it with everything in it", tool.Quote(in.Path), entries))
	}
	if msg := unreadMessage(in.Path, unread, "delete"); msg != "" {
		return tool.Errorf(msg)
	}
	if err := t.Root().RemoveAll(t.Rel()); err != nil {
		return fail(t, err)
	}
	return tool.Result{Content: fmt.Sprintf("Deleted directory %s (%d entries).", t.Abs(), entries)}
}

// entryCount is "1 entry", "2 entries".
func entryCount(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
