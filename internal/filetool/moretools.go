package filetool

// The file tools MassGen's filesystem and workspace-tools servers add to the basic ones:
// create_directory, move_file and read_multiple_files here, compare_files and
// compare_directories in compare.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// Caps of read_multiple_files.
const (
	maxReadMany      = 20        // paths per call
	maxReadManyBytes = 512 << 10 // text returned by one call, all files together
)

// extraTools are the tools after delete_file in Tools. where describes every root, short
// names the workspace.
func (a *files) extraTools(where, short string) tool.Set {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	boolean := func(desc string) map[string]any { return map[string]any{"type": "boolean", "description": desc} }
	writable := " Writable: your workspace (and, for the final presentation only, context paths marked writable)."
	return tool.Set{
		{Spec: tool.Spec("create_directory", "Create a directory and any missing parent directories; an existing directory is left as it is."+writable+short,
			map[string]any{"path": str("Directory to create.")}, "path"), Run: a.createDirectory},
		{Spec: tool.Spec("move_file", "Move or rename a file or directory. destination is the new path itself, not a folder to move into; missing parent directories are created. An existing destination file is replaced only with overwrite=true; an existing directory never is. As with delete_file, a file can be moved only after you read or created it."+writable+short,
			map[string]any{
				"source": str("File or directory to move."), "destination": str("Its new path."),
				"overwrite": boolean("Replace an existing destination file (default false)."),
			}, "source", "destination"), Run: a.moveFile},
		{Spec: tool.Spec("read_multiple_files", fmt.Sprintf("Read up to %d text files in one call, each as read_file does; each file comes under a header with its path, and a file that cannot be read shows its error without failing the others (%d KiB in all).", maxReadMany, maxReadManyBytes>>10)+where,
			map[string]any{"paths": map[string]any{"type": "array", "items": str("A file to read."), "description": fmt.Sprintf("Files to read (1 to %d).", maxReadMany)}}, "paths"),
			Run: a.readMultipleFiles},
		{Spec: tool.Spec("compare_files", "Compare two text files line by line: returns a unified diff, or says they are identical. Binary files are compared by size and SHA-256 only."+short,
			map[string]any{"path1": str("First file (the - side of the diff)."), "path2": str("Second file (the + side).")}, "path1", "path2"),
			Run: a.compareFiles},
		{Spec: tool.Spec("compare_directories", "Compare two directory trees: lists what is only in the first, only in the second, and files that differ (by size, then content), e.g. another agent's shared snapshot under "+a.ws.SnapshotsDir()+"/<label> against your workspace. .git, node_modules and similar folders are not descended into."+short,
			map[string]any{
				"path1": str("First directory."), "path2": str("Second directory."),
				"show_content_diff": boolean("Also show unified diffs of the differing text files (default false)."),
			}, "path1", "path2"),
			Run: a.compareDirectories},
	}
}

func (a *files) createDirectory(_ context.Context, args string) tool.Result {
	var in struct {
		Path string `json:"path"`
	}
	if r, ok := tool.Decode(args, &in, `{"path": "src/utils"}`); !ok {
		return r
	}
	t, err := a.check(in.Path, workspace.Write)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	if info, err := t.Root().Lstat(t.Rel()); err == nil {
		if info.IsDir() {
			return tool.Result{Content: fmt.Sprintf("%s already exists as a directory; nothing to do.", t.Abs())}
		}
		return tool.Errorf(fmt.Sprintf("%s already exists and is a file, not a directory; choose another path (or delete the file first with delete_file)", tool.Quote(in.Path)))
	}
	if err := workspace.MkdirAll(t.Root(), t.Rel(), t.Own()); err != nil {
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
			return tool.Errorf(fmt.Sprintf("cannot create %s: one of its parents is a file, not a directory", tool.Quote(in.Path)))
		}
		return fail(t, err)
	}
	a.ws.Touch(t.Abs())
	return tool.Result{Content: fmt.Sprintf("Created directory %s.", t.Abs())}
}

func (a *files) moveFile(ctx context.Context, args string) tool.Result {
	var in struct {
		Source      string `json:"source"`
		Destination string `json:"destination"`
		Overwrite   bool   `json:"overwrite"`
	}
	if r, ok := tool.Decode(args, &in, `{"source": "draft.md", "destination": "docs/final.md"}`); !ok {
		return r
	}
	if in.Destination == "" {
		return tool.Errorf("destination is empty; give the new path (relative to your workspace " + a.ws.Dir() + ")")
	}
	src, err := a.check(in.Source, workspace.Move)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	dst, err := a.check(in.Destination, workspace.Write)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	info, err := src.Root().Lstat(src.Rel())
	if err != nil {
		return fail(src, err)
	}
	isDir := info.IsDir()
	// A rename would not open it, but a pipe or socket moved over a file's name is the trap
	// the file tools refuse everywhere else; delete_file removes one.
	if m := info.Mode(); !isDir && !m.IsRegular() && m&fs.ModeSymlink == 0 {
		return tool.Errorf(workspace.Special(m).Message(in.Source))
	}
	switch {
	case src.Abs() == dst.Abs():
		return tool.Errorf(fmt.Sprintf("source and destination are the same path (%s); give a different destination", src.Abs()))
	case isDir && workspace.Within(src.Abs(), dst.Abs()):
		return tool.Errorf(fmt.Sprintf("destination %s is inside the directory being moved, %s; a directory cannot be moved into itself", tool.Quote(in.Destination), tool.Quote(in.Source)))
	}
	if old, err := dst.Root().Lstat(dst.Rel()); err == nil {
		// A link moved onto its own target (or one name of a file onto another) would leave
		// a link to itself, or nothing, where the content was.
		srcFile, serr := src.Root().Stat(src.Rel())
		dstFile, derr := dst.Root().Stat(dst.Rel())
		if serr == nil && derr == nil && os.SameFile(srcFile, dstFile) {
			return tool.Errorf(fmt.Sprintf("%s and %s are the same file; nothing to move", tool.Quote(in.Source), tool.Quote(in.Destination)))
		}
		switch m := old.Mode(); {
		case !old.IsDir() && !m.IsRegular() && m&fs.ModeSymlink == 0:
			return tool.Errorf(workspace.Special(m).Message(in.Destination))
		case old.IsDir():
			return tool.Errorf(fmt.Sprintf("%s is an existing directory and is never replaced by a move. To move into it, name the full new path (e.g. %s); to replace it, delete it first with delete_file",
				tool.Quote(in.Destination), tool.Quote(filepath.Join(in.Destination, filepath.Base(src.Abs())))))
		case isDir:
			return tool.Errorf(fmt.Sprintf("%s is an existing file and %s a directory; a directory cannot replace a file. Choose another destination", tool.Quote(in.Destination), tool.Quote(in.Source)))
		case !in.Overwrite:
			return tool.Errorf(fmt.Sprintf("%s already exists; set overwrite to true to replace it, or choose another destination", tool.Quote(in.Destination)))
		}
	}
	var moved []string // paths below the source, slash-separated ("" for the source itself)
	if isDir {
		if msg := a.checkMoveTree(ctx, src, dst, &moved); msg != "" {
			return tool.Errorf(msg)
		}
	} else {
		if info.Mode().IsRegular() && !a.ws.Touched(src.Abs()) && !exemptFromReadBeforeDelete(src.Abs()) {
			return tool.Errorf(fmt.Sprintf("%s was not read or created by you; read it first (read_file), then move it. Files are moved or deleted only after they have been looked at", tool.Quote(in.Source)))
		}
		moved = []string{""}
	}
	if err := workspace.MkdirAll(dst.Root(), filepath.Dir(dst.Rel()), dst.Own()); err != nil {
		return fail(dst, err)
	}
	how := ""
	err = errCrossRoot
	if src.Root() == dst.Root() {
		err = src.Root().Rename(src.Rel(), dst.Rel())
	}
	if errors.Is(err, errCrossRoot) || errors.Is(err, syscall.EXDEV) {
		if r, ok := a.copyThenDelete(ctx, src, dst, info, in.Source, in.Destination); !ok {
			return r
		}
		err, how = nil, " (copied, then the original removed: they are in different directory trees)"
	}
	if err != nil {
		var le *os.LinkError
		switch {
		case strings.Contains(err.Error(), "escapes"):
			return tool.Errorf(fmt.Sprintf("moving %s to %s leads outside what you can access (a symbolic link changed while it was being used); refused", tool.Quote(in.Source), tool.Quote(in.Destination)))
		case errors.As(err, &le):
			return tool.Errorf(fmt.Sprintf("cannot move %s to %s: %v", tool.Quote(in.Source), tool.Quote(in.Destination), le.Err))
		}
		return fail(src, err)
	}
	a.ws.Moved(src.Abs(), dst.Abs(), moved)
	if isDir {
		return tool.Result{Content: fmt.Sprintf("Moved directory %s to %s (%d entries)%s.", src.Abs(), dst.Abs(), len(moved)-1, how)}
	}
	return tool.Result{Content: fmt.Sprintf("Moved %s to %s%s.", src.Abs(), dst.Abs(), how)}
}

// errCrossRoot: source and destination are in different grants, so one rename cannot move it.
var errCrossRoot = errors.New("source and destination are in different roots")

// checkMoveTree checks every entry below the directory src for delete rights (read-before-
// delete included) and its new place below dst for write rights, and collects the entries.
// It returns a message for the model, or "".
func (a *files) checkMoveTree(ctx context.Context, src, dst workspace.Target, moved *[]string) string {
	if msg := a.holdsOthers(src, "moved", "Move"); msg != "" {
		return msg
	}
	from, to := a.ws.Tree(src), a.ws.Tree(dst)
	var unread []string
	hidden, err := a.ws.Walk(ctx, src, func(w string, d fs.DirEntry) error {
		if len(*moved) > maxCopy {
			return fmt.Errorf("it holds more than %d entries; move smaller parts", maxCopy)
		}
		*moved = append(*moved, w)
		if w == "" {
			return nil
		}
		old := filepath.Join(src.Abs(), filepath.FromSlash(w))
		if err := from.Allow(old, workspace.Move); err != nil {
			return err
		}
		neu := filepath.Join(dst.Abs(), filepath.FromSlash(w))
		if err := to.Allow(neu, workspace.Write); err != nil {
			return err
		}
		if err := errors.Join(from.Ruled(old, true), to.Ruled(neu, true)); err != nil {
			return err
		}
		if d.Type().IsRegular() && !a.ws.Touched(old) && !exemptFromReadBeforeDelete(old) {
			unread = append(unread, w)
		}
		return nil
	})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fail(src, err).Content
		}
		return fmt.Sprintf("cannot move %s: %v", tool.Quote(src.Raw()), err)
	}
	if msg := holdsHidden(src.Raw(), hidden, "moved", "Move"); msg != "" {
		return msg
	}
	return unreadMessage(src.Raw(), unread, "move")
}

// holdsOthers says why the directory t cannot be moved or deleted as a whole: it holds
// another grant (a nested context path, with its own rights) or massgen's hidden trees. verb
// is "moved" or "deleted", and Verb the imperative for the advice. "" means it can.
func (a *files) holdsOthers(t workspace.Target, verb, Verb string) string {
	other, private := a.ws.Encloses(t)
	switch {
	case other != "":
		return fmt.Sprintf("%s holds %s, which you access separately; it cannot be %s. %s the other entries one by one", tool.Quote(t.Raw()), other, verb, Verb)
	case private:
		return fmt.Sprintf("%s holds massgen's private files (other agents' workspaces or logs); it cannot be %s. %s the other entries one by one", tool.Quote(t.Raw()), verb, Verb)
	}
	return ""
}

// unreadMessage refuses to verb a tree holding files the agent has not read or created (the
// paths, relative to raw); "" when there are none.
func unreadMessage(raw string, unread []string, verb string) string {
	if len(unread) == 0 {
		return ""
	}
	more := ""
	if len(unread) > 5 {
		more = fmt.Sprintf(" and %d more", len(unread)-5)
		unread = unread[:5]
	}
	return fmt.Sprintf("%s holds files you have not read or created: %s%s. Read them first (read_file), or %s only what you made",
		tool.Quote(raw), strings.Join(unread, ", "), more, verb)
}

// copyThenDelete moves src to dst where no rename can: it copies, and removes the source only
// when everything was copied. On failure it returns the Result to send and false.
func (a *files) copyThenDelete(ctx context.Context, src, dst workspace.Target, info fs.FileInfo, rawSrc, rawDst string) (tool.Result, bool) {
	if !info.IsDir() && !info.Mode().IsRegular() {
		return tool.Errorf(fmt.Sprintf("%s is a symbolic link or special file, which cannot be moved to another directory tree; recreate it there instead", tool.Quote(rawSrc))), false
	}
	_, statErr := dst.Root().Lstat(dst.Rel())
	fresh := statErr != nil
	st, err := workspace.CopyTree(ctx, src.Root(), src.Rel(), dst.Root(), dst.Rel(), dst.Own(), nil)
	if err == nil && st.Skipped > 0 {
		err = fmt.Errorf("%d symbolic links or special files in it cannot be moved to another directory tree", st.Skipped)
	}
	if err != nil {
		if fresh { // the destination is ours: take the partial copy away
			_ = dst.Root().RemoveAll(dst.Rel())
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fail(dst, err), false
		}
		return tool.Errorf(fmt.Sprintf("cannot move %s to %s: %v; nothing was moved", tool.Quote(rawSrc), tool.Quote(rawDst), err)), false
	}
	if err := src.Root().RemoveAll(src.Rel()); err != nil {
		return tool.Errorf(fmt.Sprintf("%s was copied to %s, but the original could not be removed (%v); both now exist", tool.Quote(rawSrc), dst.Abs(), workspace.UnwrapPath(err))), false
	}
	return tool.Result{}, true
}

func (a *files) readMultipleFiles(ctx context.Context, args string) tool.Result {
	var in struct {
		Paths []string `json:"paths"`
	}
	if r, ok := tool.Decode(args, &in, `{"paths": ["README.md", "src/main.py"]}`); !ok {
		return r
	}
	switch n := len(in.Paths); {
	case n == 0:
		return tool.Errorf(`paths is empty; send {"paths": ["a.md", "b.md"]} (use read_file for one file)`)
	case n > maxReadMany:
		return tool.Errorf(fmt.Sprintf("%d paths given; read_multiple_files reads at most %d per call. Split them into several calls", n, maxReadMany))
	}
	var b strings.Builder
	failed := 0
	for i, p := range in.Paths {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "=== %s ===\n", tool.Quote(p))
		room := maxReadManyBytes - b.Len()
		if err := ctx.Err(); err != nil {
			failed++
			b.WriteString("[not read: the call was cancelled]\n")
			continue
		}
		if room < 1<<10 {
			failed++
			fmt.Fprintf(&b, "[not read: the %d KiB limit of read_multiple_files was reached; read it with read_file]\n", maxReadManyBytes>>10)
			continue
		}
		arg, _ := json.Marshal(map[string]string{"path": p})
		r := a.readFile(ctx, string(arg))
		text := r.Content
		if r.IsError {
			failed++
			text = "Error: " + text
		}
		if len(text) > room {
			cut := strings.LastIndexByte(text[:room], '\n') + 1
			text = text[:cut] + fmt.Sprintf("[truncated: the %d KiB limit of read_multiple_files was reached after line %d; continue with read_file and start_line=%d]",
				maxReadManyBytes>>10, strings.Count(text[:cut], "\n"), strings.Count(text[:cut], "\n")+1)
		}
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
	}
	return tool.Result{Content: b.String(), IsError: failed == len(in.Paths)}
}

// exemptFromReadBeforeDelete are caches MassGen lets agents delete unread.
func exemptFromReadBeforeDelete(abs string) bool {
	if strings.HasSuffix(abs, ".pyc") {
		return true
	}
	for c := range strings.SplitSeq(abs, string(filepath.Separator)) {
		if c == "__pycache__" || c == ".pytest_cache" {
			return true
		}
	}
	return false
}
