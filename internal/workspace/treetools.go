package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"massgen/internal/tool"
)

// noDescend are directories list_directory and search_files do not walk into.
var noDescend = map[string]bool{
	".git": true, "node_modules": true, ".venv": true, "venv": true, "__pycache__": true,
	".massgen": true, ".pytest_cache": true, ".mypy_cache": true, ".ruff_cache": true,
}

// walk visits t and what lies below it that the agent may see, through t's root; within is
// slash-separated and relative to t ("" for t itself). An entry a direct access would refuse
// as concealed (view.conceal) or the permission rules keep from reading (PathRules) is left
// out, such a folder not entered; walk returns how many entries it left out.
func (a *Agent) walk(ctx context.Context, t target, fn func(within string, d fs.DirEntry) error) (int, error) {
	grants, _ := a.grants()
	v := a.viewOf(grants)
	rules := a.pathRules()
	hidden := 0
	err := walkRoot(ctx, t.g.root, t.rel, func(_, w string, d fs.DirEntry) error {
		if w != "" {
			abs := filepath.Join(t.abs, filepath.FromSlash(w))
			if _, ok := v.conceal(t.g, abs); ok || !readable(rules, abs, t.named) {
				hidden++
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		return fn(w, d)
	})
	return hidden, err
}

// hiddenNote tells the model that n entries were left out, without naming them.
func hiddenNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n[%s not shown: massgen's private folders, files that may hold secrets, or paths your permission rules keep from you]", entryCount(n))
}

// holdsHidden refuses to verb (delete, Move) the tree at raw as a whole when it holds n
// concealed entries: the walk that checks the tree never saw them, and the removal or rename
// would take them along. "" when n is 0.
func holdsHidden(raw string, n int, verb, Verb string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s holds %s hidden from agents (massgen's private folders, files that may hold secrets, or paths your permission rules keep from you); it cannot be %s as a whole. %s the other entries one by one",
		tool.Quote(raw), entryCount(n), verb, Verb)
}

// walkRoot visits rel and everything below it in root, stopping when ctx is done. fn gets each
// entry's path in root and its slash-separated path relative to rel ("" for rel itself).
func walkRoot(ctx context.Context, root *os.Root, rel string, fn func(p, within string, d fs.DirEntry) error) error {
	start := filepath.ToSlash(rel)
	return fs.WalkDir(root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		within := p
		switch {
		case p == start:
			within = ""
		case start != ".":
			within = strings.TrimPrefix(p, start+"/")
		}
		return fn(p, within, d)
	})
}

func (a *Agent) listDirectory(ctx context.Context, args string) tool.Result {
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
	t, err := a.check(in.Path, Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	info, err := t.g.root.Stat(t.rel)
	if err != nil {
		return fail(t, err)
	}
	switch {
	case !info.IsDir() && !info.Mode().IsRegular():
		return tool.Errorf(special(info.Mode()).message(in.Path))
	case !info.IsDir():
		return tool.Result{Content: fmt.Sprintf("%s is a file of %d bytes (read it with read_file).", t.abs, info.Size())}
	}
	var lines []string
	full := false
	hidden, err := a.walk(ctx, t, func(within string, d fs.DirEntry) error {
		if within == "" {
			return nil
		}
		if len(lines) == maxList {
			full = true
			return fs.SkipAll
		}
		switch {
		case d.IsDir() && in.Recursive && noDescend[d.Name()]:
			lines = append(lines, within+"/ (not expanded)")
			return fs.SkipDir
		case d.IsDir():
			lines = append(lines, within+"/")
			if !in.Recursive {
				return fs.SkipDir
			}
		case d.Type()&fs.ModeSymlink != 0:
			link, _ := t.g.root.Readlink(filepath.Join(t.rel, within))
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
		return tool.Result{Content: fmt.Sprintf("%s is empty.", t.abs) + hiddenNote(hidden)}
	}
	out := fmt.Sprintf("%s:\n%s", t.abs, strings.Join(lines, "\n"))
	if full {
		out += fmt.Sprintf("\n[listing stopped at %d entries; list a subdirectory to see more]", maxList)
	}
	return tool.Result{Content: out + hiddenNote(hidden)}
}

func (a *Agent) searchFiles(ctx context.Context, args string) tool.Result {
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
	t, err := a.check(in.Path, Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	if info, err := t.g.root.Stat(t.rel); err != nil {
		return fail(t, err)
	} else if !info.IsDir() && !info.Mode().IsRegular() {
		return tool.Errorf(special(info.Mode()).message(in.Path))
	}
	var hits []string
	skipped := 0
	hidden, err := a.walk(ctx, t, func(within string, d fs.DirEntry) error {
		if d.IsDir() {
			if within != "" && noDescend[d.Name()] {
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
			name = filepath.Base(t.abs)
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
		return tool.Result{Content: fmt.Sprintf("No matches for %q under %s.", in.Pattern, t.abs) + hiddenNote(hidden)}
	}
	out := fmt.Sprintf("Matches under %s:\n%s", t.abs, strings.Join(hits, "\n"))
	if len(hits) >= limit {
		out += fmt.Sprintf("\n[stopped at %d matches; narrow the path or the pattern]", limit)
	}
	if skipped > 0 {
		out += fmt.Sprintf("\n[%d binary, unreadable or files over %d MiB were not searched]", skipped, maxSearchIn>>20)
	}
	return tool.Result{Content: out + hiddenNote(hidden)}
}

// searchFile appends the matching lines of one file; it reports false for a file it skipped.
func searchFile(t target, within, name string, match func(string) bool, limit int, hits *[]string) bool {
	f, err := openRegular(t.g.root, filepath.Join(t.rel, filepath.FromSlash(within)), 0)
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

func (a *Agent) copyFile(ctx context.Context, args string) tool.Result {
	var in struct {
		Source      string `json:"source"`
		Destination string `json:"destination"`
		Overwrite   bool   `json:"overwrite"`
	}
	if r, ok := tool.Decode(args, &in, `{"source": "/.../snapshots/agent1/app.py", "destination": "app.py"}`); !ok {
		return r
	}
	if in.Destination == "" {
		return tool.Errorf("destination is empty; give the path of the copy (relative to your workspace " + a.dir + ")")
	}
	src, err := a.check(in.Source, Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	dst, err := a.check(in.Destination, Write)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	info, err := src.g.root.Stat(src.rel)
	if err != nil {
		return fail(src, err)
	}
	if !info.IsDir() && !info.Mode().IsRegular() {
		return tool.Errorf(special(info.Mode()).message(in.Source))
	}
	grants, _ := a.grants()
	v := a.viewOf(grants)
	// A destination in a part of the source the copy never enters (the workspace under a
	// project's .massgen) cannot make the copy copy itself.
	if _, skipped := v.conceal(src.g, dst.abs); info.IsDir() && Within(src.abs, dst.abs) && !skipped {
		return tool.Errorf(fmt.Sprintf("destination %s is inside the source directory %s; copy somewhere else", tool.Quote(in.Destination), tool.Quote(in.Source)))
	}
	if _, err := dst.g.root.Lstat(dst.rel); err == nil && !in.Overwrite {
		return tool.Errorf(fmt.Sprintf("%s already exists; set overwrite to true to replace it, or choose another destination", tool.Quote(in.Destination)))
	}
	if err := mkdirAll(dst.g.root, filepath.Dir(dst.rel), dst.g.own()); err != nil {
		return fail(dst, err)
	}
	var created []string
	rules := a.pathRules()
	visit := func(w string, dir bool) error {
		from := filepath.Join(src.abs, filepath.FromSlash(w))
		if _, ok := v.conceal(src.g, from); ok && w != "" || !readable(rules, from, src.named) {
			return errConcealed
		}
		abs := filepath.Join(dst.abs, filepath.FromSlash(w))
		_, final := a.grants()
		if err := a.allow(dst.g, abs, Write, final, abs); err != nil {
			return err
		}
		if err := ruled(rules, true, abs, dst.named, abs); err != nil {
			return err
		}
		if len(created) == maxCopy {
			return fmt.Errorf("copy stopped after %d entries; copy smaller parts", maxCopy)
		}
		created = append(created, abs)
		return nil
	}
	st, err := copyTree(ctx, src.g.root, src.rel, dst.g.root, dst.rel, dst.g.own(), visit)
	for _, p := range created {
		a.touch(p)
	}
	if err != nil {
		var pe *fs.PathError
		var rf *refusedFile
		switch {
		case errors.As(err, &rf):
			return tool.Errorf(rf.message(in.Destination))
		case errors.As(err, &pe):
			return fail(dst, err)
		}
		return tool.Errorf(fmt.Sprintf("copy stopped: %v (%d files copied)", err, st.files))
	}
	msg := fmt.Sprintf("Copied %s to %s", src.abs, dst.abs)
	if info.IsDir() {
		msg += fmt.Sprintf(" (%d files, %d bytes)", st.files, st.bytes)
	}
	if st.skipped > 0 {
		msg += fmt.Sprintf("; skipped %d links or special files", st.skipped)
	}
	if st.hidden > 0 {
		msg += fmt.Sprintf("; left out %s hidden from agents (massgen's private folders, or files that may hold secrets)", entryCount(st.hidden))
	}
	return tool.Result{Content: msg + "."}
}

func (a *Agent) deleteFile(ctx context.Context, args string) tool.Result {
	var in struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if r, ok := tool.Decode(args, &in, `{"path": "old.txt"}`); !ok {
		return r
	}
	t, err := a.check(in.Path, Remove)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	info, err := t.g.root.Lstat(t.rel)
	if err != nil {
		return fail(t, err)
	}
	if !info.IsDir() {
		if info.Mode().IsRegular() && !a.wasTouched(t.abs) && !exemptFromReadBeforeDelete(t.abs) {
			return tool.Errorf(fmt.Sprintf("%s was not read or created by you; read it first (read_file), then delete it. Files are deleted only after they have been looked at", tool.Quote(in.Path)))
		}
		if err := t.g.root.Remove(t.rel); err != nil {
			return fail(t, err)
		}
		return tool.Result{Content: fmt.Sprintf("Deleted %s.", t.abs)}
	}
	if msg := a.holdsOthers(t, "deleted", "Delete"); msg != "" {
		return tool.Errorf(msg)
	}
	var unread []string
	entries := 0
	_, final := a.grants()
	rules := a.pathRules()
	hidden, err := a.walk(ctx, t, func(w string, d fs.DirEntry) error {
		if w == "" {
			return nil
		}
		entries++
		abs := filepath.Join(t.abs, filepath.FromSlash(w))
		if err := a.allow(t.g, abs, Remove, final, abs); err != nil {
			return err
		}
		if err := ruled(rules, true, abs, t.named, abs); err != nil {
			return err
		}
		if d.Type().IsRegular() && !a.wasTouched(abs) && !exemptFromReadBeforeDelete(abs) {
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
	if err := t.g.root.RemoveAll(t.rel); err != nil {
		return fail(t, err)
	}
	return tool.Result{Content: fmt.Sprintf("Deleted directory %s (%d entries).", t.abs, entries)}
}

// entryCount is "1 entry", "2 entries".
func entryCount(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
