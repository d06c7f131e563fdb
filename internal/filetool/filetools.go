// Package filetool is the file tools an agent works with in its workspace, the shared
// snapshots and its context paths: read_file, write_file, edit_file, list_directory,
// search_files, copy_file, delete_file, create_directory, move_file, read_multiple_files,
// compare_files and compare_directories, and ReadBytes and WriteNew for the media tools.
//
// Every path goes through workspace.Agent.Resolve, and every entry of a tree through
// workspace.Agent.Walk and workspace.Agent.Tree, so the access rules live in one place
// (package workspace); files are then used through the os.Root the path was checked in, so a
// link swapped in after the check cannot lead outside.
package filetool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// Output caps of the file tools.
const (
	maxRead     = 256 << 10 // bytes returned by read_file
	maxEdit     = 16 << 20  // files edit_file will rewrite
	maxList     = 1000      // entries listed by list_directory
	maxCopy     = 10000     // entries copied by one copy_file
	maxSearch   = 1000      // matches returned by search_files
	maxSearchIn = 4 << 20   // files larger than this are not searched
)

// Tools returns the file tools confined to what ws holds: read_file, write_file, edit_file,
// list_directory, search_files, copy_file and delete_file, then MassGen's create_directory,
// move_file, read_multiple_files, compare_files and compare_directories (moretools.go,
// compare.go). Their descriptions name the agent's directories, so call it after
// SetContextPaths. Permissions are checked on every call, so GrantFinal and RevokeFinal take
// effect without rebuilding the tools.
func Tools(ws *workspace.Agent) tool.Set { return (&files{ws: ws}).tools() }

// files is the file tools of one agent.
type files struct {
	ws *workspace.Agent
	// afterCheck, when set by a test, runs between the permission check and the file
	// operation, to swap files in as an attacker would.
	afterCheck func(abs string)
}

// check resolves raw for acc (workspace.Agent.Resolve).
func (a *files) check(raw string, acc workspace.Access) (workspace.Target, error) {
	t, err := a.ws.Resolve(raw, acc)
	if err == nil && a.afterCheck != nil {
		a.afterCheck(t.Abs())
	}
	return t, err
}

func (a *files) tools() tool.Set {
	where := " " + a.ws.Holdings()
	short := " Relative paths resolve in your workspace " + a.ws.Dir() + "."
	// What the tools refuse everywhere, said once where a model would otherwise find out by
	// trial (secrets.go, special_files.go).
	seen := " Regular files and directories only (pipes, sockets and devices are refused); inside context paths, massgen's folders and files that commonly hold secrets (.env, .git/config, private keys, credentials) are hidden unless a context path names the file."
	inPlace := " A file with other hard links is not changed in place."
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	boolean := func(desc string) map[string]any { return map[string]any{"type": "boolean", "description": desc} }
	integer := func(desc string) map[string]any { return map[string]any{"type": "integer", "description": desc} }
	set := tool.Set{
		{Spec: tool.Spec("read_file", "Read a text file (at most 256 KiB per call; use start_line to continue). Images, audio, video, archives, office documents and PDFs are refused."+seen+where,
			map[string]any{
				"path": str("File to read."), "start_line": integer("First line to return, from 1 (default 1)."),
				"max_lines": integer("Number of lines to return (default: as many as fit)."),
			}, "path"), Run: a.readFile},
		{Spec: tool.Spec("write_file", "Create or overwrite a text file with content; missing parent directories are created. Writable: your workspace (and, for the final presentation only, context paths marked writable)."+inPlace+short,
			map[string]any{"path": str("File to write."), "content": str("The complete new content.")}, "path", "content"), Run: a.writeFile},
		{Spec: tool.Spec("edit_file", "Replace old_string with new_string in a file. old_string must occur exactly once, matching the file exactly (spaces and line breaks included)."+inPlace+short,
			map[string]any{"path": str("File to edit."), "old_string": str("Exact text to replace."), "new_string": str("Replacement text.")},
			"path", "old_string", "new_string"), Run: a.editFile},
		{Spec: tool.Spec("list_directory", "List a directory: subdirectories end with /, files show their size, links their target (at most 1000 entries); hidden entries are counted, not named."+seen+where,
			map[string]any{"path": str("Directory to list (default: your workspace)."), "recursive": boolean("List everything below, not just the top level.")}),
			Run: a.listDirectory},
		{Spec: tool.Spec("search_files", "Search the contents of text files under a directory for a substring (or a regular expression) and return file:line: text for each matching line."+short,
			map[string]any{
				"pattern": str("Text to look for."), "path": str("Directory or file to search (default: your workspace)."),
				"regex": boolean("Treat pattern as an RE2 regular expression."), "case_insensitive": boolean("Ignore case."),
				"max_results": integer("Most matching lines to return (default 100, at most 1000)."),
			}, "pattern"), Run: a.searchFiles},
		{Spec: tool.Spec("copy_file", "Copy a file or a whole directory, e.g. from another agent's shared snapshot into your workspace. Missing parent directories are created."+short,
			map[string]any{
				"source": str("File or directory to copy."), "destination": str("Path of the copy."),
				"overwrite": boolean("Replace an existing destination (default false)."),
			}, "source", "destination"), Run: a.copyFile},
		{Spec: tool.Spec("delete_file", "Delete a file, or a directory with recursive=true. A file can be deleted only after you read or created it."+short,
			map[string]any{"path": str("File or directory to delete."), "recursive": boolean("Delete a non-empty directory and everything in it.")}, "path"),
			Run: a.deleteFile},
	}
	return append(set, a.extraTools(where, short)...)
}

// fail turns a file-system error on t into a message for the model.
func fail(t workspace.Target, err error) tool.Result {
	var pe *fs.PathError
	var rf *workspace.RefusedFile
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf(fmt.Sprintf("%s does not exist (resolved to %s); list_directory shows what is there", tool.Quote(t.Raw()), t.Abs()))
	case errors.Is(err, workspace.ErrIsDir):
		return tool.Errorf(fmt.Sprintf("%s is a directory; use list_directory to see what it holds", tool.Quote(t.Raw())))
	case errors.As(err, &rf):
		return tool.Errorf(rf.Message(t.Raw()))
	case errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes"):
		return tool.Errorf(fmt.Sprintf("%s leads outside what you can access (a symbolic link changed while it was being opened); refused", tool.Quote(t.Raw())))
	}
	return tool.Errorf(fmt.Sprintf("%s: %v", tool.Quote(t.Raw()), workspace.UnwrapPath(err)))
}

func (a *files) readFile(_ context.Context, args string) tool.Result {
	var in struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		MaxLines  int    `json:"max_lines"`
	}
	if r, ok := tool.Decode(args, &in, `{"path": "notes.md"}`); !ok {
		return r
	}
	if msg := binaryRefusal(in.Path); msg != "" {
		return tool.Errorf(msg)
	}
	t, err := a.check(in.Path, workspace.Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	if msg := binaryRefusal(t.Abs()); msg != "" {
		return tool.Errorf(msg)
	}
	f, err := workspace.OpenRegular(t.Root(), t.Rel(), t.Flags())
	if err != nil {
		return fail(t, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
		return tool.Errorf(fmt.Sprintf("%s looks like a binary file (it contains NUL bytes); read_file reads text only", tool.Quote(in.Path)))
	}
	start := max(in.StartLine, 1)
	var out []byte
	line, note := 1, ""
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && line >= start {
			if room := maxRead - len(out); len(chunk) > room {
				out = append(out, chunk[:room]...)
				note = fmt.Sprintf("[truncated: the %d KiB limit was reached in line %d; continue with start_line=%d]", maxRead>>10, line, line)
				break
			}
			out = append(out, chunk...)
		}
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			line++
		}
		if err == io.EOF {
			break
		} else if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return fail(t, err)
		}
		if in.MaxLines > 0 && line >= start+in.MaxLines {
			if _, err := br.Peek(1); err == nil {
				note = fmt.Sprintf("[more lines follow; continue with start_line=%d]", line)
			}
			break
		}
	}
	a.ws.Touch(t.Abs())
	switch {
	case len(out) == 0 && start > 1:
		return tool.Result{Content: fmt.Sprintf("(%s has only %d lines)", tool.Quote(in.Path), line-1)}
	case len(out) == 0:
		return tool.Result{Content: "(empty file)"}
	case note != "":
		return tool.Result{Content: string(out) + "\n" + note}
	}
	return tool.Result{Content: string(out)}
}

func (a *files) writeFile(_ context.Context, args string) tool.Result {
	var in struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if r, ok := tool.Decode(args, &in, `{"path": "notes.md", "content": "..."}`); !ok {
		return r
	}
	if in.Content == nil {
		return tool.Errorf(`content is missing; send {"path": "...", "content": "..."} (content may be "")`)
	}
	t, err := a.check(in.Path, workspace.Write)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	if err := workspace.MkdirAll(t.Root(), filepath.Dir(t.Rel()), t.Own()); err != nil {
		return fail(t, err)
	}
	if err := writeThrough(t, []byte(*in.Content), os.O_CREATE); err != nil {
		return fail(t, err)
	}
	a.ws.Touch(t.Abs())
	return tool.Result{Content: fmt.Sprintf("Wrote %d bytes to %s.", len(*in.Content), t.Abs())}
}

// writeThrough replaces the content of t through its root; special files and files with
// other hard links are refused (workspace.OpenWrite).
func writeThrough(t workspace.Target, data []byte, flags int) error {
	f, err := workspace.OpenWrite(t.Root(), t.Rel(), t.Flags()|flags, workspace.NewFileMode(t.Own()))
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

func (a *files) editFile(_ context.Context, args string) tool.Result {
	var in struct {
		Path      string `json:"path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	if r, ok := tool.Decode(args, &in, `{"path": "main.go", "old_string": "...", "new_string": "..."}`); !ok {
		return r
	}
	if in.OldString == "" {
		return tool.Errorf("old_string is empty; copy the exact text to replace from read_file (use write_file to replace a whole file)")
	}
	t, err := a.check(in.Path, workspace.Write)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	f, err := workspace.OpenRegular(t.Root(), t.Rel(), t.Flags())
	if err != nil {
		return fail(t, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEdit+1))
	_ = f.Close()
	if err != nil {
		return fail(t, err)
	}
	if len(data) > maxEdit {
		return tool.Errorf(fmt.Sprintf("%s is larger than %d MiB; edit_file does not rewrite files that large", tool.Quote(in.Path), maxEdit>>20))
	}
	text := string(data)
	switch n := strings.Count(text, in.OldString); n {
	case 0:
		return tool.Errorf(fmt.Sprintf("old_string was not found in %s. It must match the file exactly, spaces and line breaks included; read the file and copy the text", tool.Quote(in.Path)))
	case 1:
	default:
		return tool.Errorf(fmt.Sprintf("old_string occurs %d times in %s; it must occur exactly once. Include more of the surrounding lines to make it unique", n, tool.Quote(in.Path)))
	}
	i := strings.Index(text, in.OldString)
	text = text[:i] + in.NewString + text[i+len(in.OldString):]
	if err := writeThrough(t, []byte(text), 0); err != nil {
		return fail(t, err)
	}
	a.ws.Touch(t.Abs())
	return tool.Result{Content: fmt.Sprintf("Replaced 1 occurrence in %s (line %d).", t.Abs(), strings.Count(text[:i], "\n")+1)}
}

// binaryKinds maps extensions read_file refuses to what they are, built on first use.
var binaryKinds = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for kind, exts := range map[string]string{
		"an image":             ".jpg .jpeg .png .gif .bmp .ico .svg .webp .tiff .tif .heic .avif",
		"a video":              ".mp4 .avi .mov .mkv .flv .wmv .webm .m4v .mpg .mpeg .3gp",
		"an audio file":        ".mp3 .wav .ogg .flac .aac .m4a .wma .opus .aiff",
		"an archive":           ".zip .tar .gz .tgz .bz2 .xz .7z .rar .zst .jar .war",
		"a binary":             ".exe .dll .so .dylib .bin .o .a .obj .pyc .pyo .class .wasm .dat .db .sqlite",
		"an office document":   ".doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .rtf",
		"a PDF":                ".pdf",
		"a font or disk image": ".ttf .otf .woff .woff2 .iso .dmg .img",
	} {
		for e := range strings.FieldsSeq(exts) {
			m[e] = kind
		}
	}
	return m
})

// binaryRefusal returns why read_file refuses the path by its extension, or "".
func binaryRefusal(p string) string {
	ext := strings.ToLower(filepath.Ext(p))
	if kind, ok := binaryKinds()[ext]; ok {
		return fmt.Sprintf("%s is %s (%s); read_file reads text files only. Work with it by name (copy_file, or a command if you have execute_command)", tool.Quote(p), kind, ext)
	}
	return ""
}
