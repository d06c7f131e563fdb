package filetool

// compare_files and compare_directories. Both only read; neither counts as reading a file for
// read-before-delete, since neither shows a whole file.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// Caps of compare_files.
const (
	maxDiffInput  = 4 << 20  // larger files are compared by size and hash only
	maxDiffOutput = 64 << 10 // diff text returned by compare_files
)

// compareLimits bound one compare_directories call.
type compareLimits struct {
	entries int   // entries walked in each tree
	bytes   int64 // file content read, both trees together
	output  int   // bytes of the result
}

var defaultCompareLimits = compareLimits{entries: 10000, bytes: 256 << 20, output: 128 << 10}

// fileSum is what compare_files learns of a file in one pass.
type fileSum struct {
	size   int64
	sum    [sha256.Size]byte
	data   []byte // the content, when whole
	whole  bool   // the file is at most the keep size given to summarize
	binary bool   // a NUL byte in the first 8000 bytes
}

// summarize reads the file name in r through once, keeping at most keep bytes of it.
func summarize(ctx context.Context, r *os.Root, name string, flags int, keep int) (fileSum, error) {
	f, err := workspace.OpenRegular(r, name, flags)
	if err != nil {
		return fileSum{}, err
	}
	defer f.Close()
	s := fileSum{whole: true}
	h := sha256.New()
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return fileSum{}, err
		}
		n, err := f.Read(buf)
		chunk := buf[:n]
		if s.size < 8000 && bytes.IndexByte(chunk[:min(n, 8000-int(s.size))], 0) >= 0 {
			s.binary = true
		}
		h.Write(chunk)
		s.size += int64(n)
		if s.whole && len(s.data)+n > keep {
			s.whole, s.data = false, nil
		} else if s.whole {
			s.data = append(s.data, chunk...)
		}
		if err == io.EOF {
			break
		} else if err != nil {
			return fileSum{}, err
		}
	}
	h.Sum(s.sum[:0])
	return s, nil
}

// compareFail is fail with a hint for the compare tools.
func compareFail(t workspace.Target, err error, other string) tool.Result {
	if errors.Is(err, workspace.ErrIsDir) {
		return tool.Errorf(fmt.Sprintf("%s is a directory; %s", tool.Quote(t.Raw()), other))
	}
	return fail(t, err)
}

func (a *files) compareFiles(ctx context.Context, args string) tool.Result {
	var in struct {
		Path1 string `json:"path1"`
		Path2 string `json:"path2"`
	}
	if r, ok := tool.Decode(args, &in, `{"path1": "app.py", "path2": "/.../snapshots/agent2/app.py"}`); !ok {
		return r
	}
	t1, err := a.check(in.Path1, workspace.Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	t2, err := a.check(in.Path2, workspace.Read)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	const other = "compare_files compares two files (use compare_directories for directories)"
	s1, err := summarize(ctx, t1.Root(), t1.Rel(), t1.Flags(), maxDiffInput)
	if err != nil {
		return compareFail(t1, err, other)
	}
	s2, err := summarize(ctx, t2.Root(), t2.Rel(), t2.Flags(), maxDiffInput)
	if err != nil {
		return compareFail(t2, err, other)
	}
	if s1.size == s2.size && s1.sum == s2.sum {
		return tool.Result{Content: fmt.Sprintf("%s and %s are identical (%d bytes).", t1.Abs(), t2.Abs(), s1.size)}
	}
	if why := noLineDiff(t1.Abs(), t2.Abs(), s1, s2); why != "" {
		return tool.Result{Content: fmt.Sprintf("%s and %s differ (%s, so only their sizes and SHA-256 are compared):\n  %s: %d bytes, sha256 %x\n  %s: %d bytes, sha256 %x",
			t1.Abs(), t2.Abs(), why, t1.Abs(), s1.size, s1.sum, t2.Abs(), s2.size, s2.sum)}
	}
	d := unifiedDiff(t1.Abs(), t2.Abs(), s1.data, s2.data, maxDiffOutput)
	return tool.Result{Content: diffSummary(t1.Abs(), t2.Abs(), d) + d.text + diffNotes(d, "compare smaller files, or read the rest with read_file")}
}

// noLineDiff says why two files get no line diff, or "".
func noLineDiff(abs1, abs2 string, s1, s2 fileSum) string {
	switch {
	case s1.binary || s2.binary || binaryRefusal(abs1) != "" || binaryRefusal(abs2) != "":
		return "binary content"
	case !s1.whole || !s2.whole:
		return fmt.Sprintf("larger than %d MiB, too large for a line diff", maxDiffInput>>20)
	}
	return ""
}

func diffSummary(abs1, abs2 string, d diffResult) string {
	return fmt.Sprintf("%s and %s differ: %s removed, %d added.\n", abs1, abs2, nounCount(d.removed, "line"), d.added)
}

// nounCount is "1 line", "2 lines".
func nounCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// byteSize is n in MiB or KiB when it is a whole number of them, else in bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func diffNotes(d diffResult, hint string) string {
	var notes string
	if d.coarse {
		notes += "[the changed part is too large for a line-by-line diff and is shown as one replaced block]\n"
	}
	if d.truncated {
		notes += fmt.Sprintf("[diff truncated at the output limit; %s]\n", hint)
	}
	return notes
}

func (a *files) compareDirectories(ctx context.Context, args string) tool.Result {
	return a.compareDirs(ctx, args, defaultCompareLimits)
}

// treeEntry is one entry of a compared tree.
type treeEntry struct {
	kind   byte // 'd' directory, 'f' regular file, 'l' symbolic link, 's' special file
	size   int64
	opaque bool // a directory not descended into
}

func (a *files) compareDirs(ctx context.Context, args string, lim compareLimits) tool.Result {
	var in struct {
		Path1           string `json:"path1"`
		Path2           string `json:"path2"`
		ShowContentDiff bool   `json:"show_content_diff"`
	}
	if r, ok := tool.Decode(args, &in, `{"path1": "/.../snapshots/agent2", "path2": "."}`); !ok {
		return r
	}
	var ts [2]workspace.Target
	var trees [2]map[string]treeEntry
	var cut [2]bool
	for i, raw := range []string{in.Path1, in.Path2} {
		t, err := a.check(raw, workspace.Read)
		if err != nil {
			return tool.Errorf(err.Error())
		}
		info, err := t.Root().Stat(t.Rel())
		if err != nil {
			return fail(t, err)
		}
		switch {
		case !info.IsDir() && !info.Mode().IsRegular():
			return tool.Errorf(workspace.Special(info.Mode()).Message(raw))
		case !info.IsDir():
			return tool.Errorf(fmt.Sprintf("%s is a file; compare_directories compares two directories (use compare_files for files)", tool.Quote(raw)))
		}
		ts[i] = t
		if trees[i], cut[i], err = a.treeEntries(ctx, t, lim.entries); err != nil {
			return fail(t, err)
		}
	}
	c := dirComparison{a: a, ts: ts, lim: lim, ctx: ctx}
	if err := c.compare(trees); err != nil {
		return fail(ts[0], err)
	}
	w := &capWriter{limit: lim.output}
	w.raw(fmt.Sprintf("Comparing 1 = %s with 2 = %s:\n", ts[0].Abs(), ts[1].Abs()))
	if len(c.only[0])+len(c.only[1])+len(c.differ) == 0 {
		w.raw(fmt.Sprintf("No differences: %s identical.\n", nounCount(c.identical, "file")))
	}
	omitted := 0
	for _, s := range []struct {
		title string
		items []string
	}{{"Only in 1", c.only[0]}, {"Only in 2", c.only[1]}, {"Differing", c.differ}, {"Not compared", c.skipped}} {
		if len(s.items) == 0 {
			continue
		}
		w.raw(fmt.Sprintf("%s (%d):\n", s.title, len(s.items)))
		for i, it := range s.items {
			if !w.raw("  " + it + "\n") {
				omitted += len(s.items) - i
				break
			}
		}
	}
	if len(c.only[0])+len(c.only[1])+len(c.differ) > 0 {
		w.raw(fmt.Sprintf("%s identical.\n", nounCount(c.identical, "file")))
	}
	if in.ShowContentDiff && len(c.diffable) > 0 {
		omitted += c.contentDiffs(w)
	}
	out := w.b.String()
	for i, full := range cut {
		if full {
			out += fmt.Sprintf("[stopped after %d entries in %d: the comparison is partial; compare subdirectories]\n", lim.entries, i+1)
		}
	}
	if w.full {
		out += fmt.Sprintf("[output limit of %s reached: %d more entries or diffs not shown; compare subdirectories, or single files with compare_files]\n",
			byteSize(int64(lim.output)), omitted)
	}
	return tool.Result{Content: strings.TrimSuffix(out, "\n")}
}

// treeEntries lists the tree at t, at most limit entries (full reports that it stopped),
// leaving out what the agent may not see (workspace.Agent.Walk) and not descending into noDescend
// directories.
func (a *files) treeEntries(ctx context.Context, t workspace.Target, limit int) (map[string]treeEntry, bool, error) {
	m := map[string]treeEntry{}
	full := false
	_, err := a.ws.Walk(ctx, t, func(w string, d fs.DirEntry) error {
		if w == "" {
			return nil
		}
		if len(m) == limit {
			full = true
			return fs.SkipAll
		}
		var e treeEntry
		switch {
		case d.IsDir():
			e.kind, e.opaque = 'd', noDescend(d.Name())
			if e.opaque {
				m[w] = e
				return fs.SkipDir
			}
		case d.Type().IsRegular():
			e.kind = 'f'
			if fi, err := d.Info(); err == nil {
				e.size = fi.Size()
			}
		case d.Type()&fs.ModeSymlink != 0:
			e.kind = 'l'
		default:
			e.kind = 's'
		}
		m[w] = e
		return nil
	})
	return m, full, err
}

// dirComparison collects the result of compare_directories.
type dirComparison struct {
	a         *files
	ts        [2]workspace.Target
	lim       compareLimits
	ctx       context.Context
	read      int64 // bytes of content read
	only      [2][]string
	differ    []string
	skipped   []string
	diffable  []diffable // differing regular files, for show_content_diff
	identical int
}

func (c *dirComparison) name(i int, w string) string {
	return filepath.Join(c.ts[i].Rel(), filepath.FromSlash(w))
}

func (c *dirComparison) compare(trees [2]map[string]treeEntry) error {
	keys := make([]string, 0, len(trees[0])+len(trees[1]))
	for _, m := range trees {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	oneSided := map[string]bool{} // directories whose contents are listed no further
	kinds := map[byte]string{'d': "directory", 'f': "file", 'l': "symbolic link", 's': "special file"}
	for _, k := range keys {
		if underAny(k, oneSided) {
			continue
		}
		x, in1 := trees[0][k]
		y, in2 := trees[1][k]
		switch {
		case !in1 || !in2:
			i, e := 0, x
			if !in1 {
				i, e = 1, y
			}
			c.only[i] = append(c.only[i], entryLabel(k, e))
			if e.kind == 'd' {
				oneSided[k] = true
			}
		case x.kind != y.kind:
			c.differ = append(c.differ, fmt.Sprintf("%s (%s in 1, %s in 2)", k, kinds[x.kind], kinds[y.kind]))
			oneSided[k] = true
		case x.kind == 'd':
			if x.opaque || y.opaque {
				c.skipped = append(c.skipped, k+"/ (not descended into)")
			}
		case x.kind == 's':
			c.skipped = append(c.skipped, k+" (special file)")
		case x.kind == 'l':
			l1, err1 := c.ts[0].Root().Readlink(c.name(0, k))
			l2, err2 := c.ts[1].Root().Readlink(c.name(1, k))
			switch {
			case err1 != nil || err2 != nil:
				c.skipped = append(c.skipped, k+" (link changed while compared)")
			case l1 != l2:
				c.differ = append(c.differ, fmt.Sprintf("%s (links to %q in 1, %q in 2)", k, l1, l2))
			default:
				c.identical++
			}
		case x.size != y.size:
			c.differ = append(c.differ, fmt.Sprintf("%s (%d bytes in 1, %d bytes in 2)", k, x.size, y.size))
			c.diffable = append(c.diffable, diffable{k, x.size + y.size})
		case c.read+2*x.size > c.lim.bytes:
			c.skipped = append(c.skipped, fmt.Sprintf("%s (not read: the %s reading limit was reached)", k, byteSize(c.lim.bytes)))
		default:
			c.read += 2 * x.size
			same, err := sameContent(c.ctx, c.ts[0].Root(), c.name(0, k), c.ts[1].Root(), c.name(1, k))
			switch {
			case c.ctx.Err() != nil:
				return c.ctx.Err()
			case err != nil:
				c.skipped = append(c.skipped, fmt.Sprintf("%s (%v)", k, workspace.UnwrapPath(err)))
			case same:
				c.identical++
			default:
				c.differ = append(c.differ, fmt.Sprintf("%s (same size, different content)", k))
				c.diffable = append(c.diffable, diffable{k, 2 * x.size})
			}
		}
	}
	return nil
}

// contentDiffs writes the diffs of the differing files while the output and reading limits
// allow, and returns how many it left out.
func (c *dirComparison) contentDiffs(w *capWriter) int {
	if c.lim.output-w.b.Len() >= 300 {
		w.raw("Content differences:\n")
	}
	for i, df := range c.diffable {
		k := df.name
		room := c.lim.output - w.b.Len()
		if w.full || room < 200 || c.ctx.Err() != nil {
			w.full = true
			return len(c.diffable) - i
		}
		if df.size > 2*maxDiffInput {
			w.raw(fmt.Sprintf("%s: no diff (larger than %d MiB, too large for a line diff)\n", k, maxDiffInput>>20))
			continue
		}
		if c.read+df.size > c.lim.bytes {
			w.raw(fmt.Sprintf("%s: not shown (the %s reading limit was reached)\n", k, byteSize(c.lim.bytes)))
			continue
		}
		var s [2]fileSum
		var err error
		for j := range s {
			if s[j], err = summarize(c.ctx, c.ts[j].Root(), c.name(j, k), workspace.NoFollow, maxDiffInput); err != nil {
				break
			}
			c.read += s[j].size
		}
		abs1 := filepath.Join(c.ts[0].Abs(), filepath.FromSlash(k))
		abs2 := filepath.Join(c.ts[1].Abs(), filepath.FromSlash(k))
		switch {
		case err != nil:
			w.raw(fmt.Sprintf("%s: not shown (%v)\n", k, workspace.UnwrapPath(err)))
		case noLineDiff(abs1, abs2, s[0], s[1]) != "":
			w.raw(fmt.Sprintf("%s: no diff (%s): sha256 %x in 1, %x in 2\n", k, noLineDiff(abs1, abs2, s[0], s[1]), s[0].sum, s[1].sum))
		default:
			d := unifiedDiff(abs1, abs2, s[0].data, s[1].data, room-100)
			w.raw(d.text)
			if d.truncated {
				w.full = true
				return len(c.diffable) - i - 1
			}
			w.raw(diffNotes(d, ""))
		}
	}
	return 0
}

// diffable is a differing file pair: its slash-separated path and both sizes together.
type diffable struct {
	name string
	size int64
}

// underAny reports whether a parent directory of the slash-separated k is in dirs.
func underAny(k string, dirs map[string]bool) bool {
	for p := path.Dir(k); p != "." && p != "/"; p = path.Dir(p) {
		if dirs[p] {
			return true
		}
	}
	return false
}

func entryLabel(k string, e treeEntry) string {
	switch e.kind {
	case 'd':
		return k + "/"
	case 'f':
		return fmt.Sprintf("%s (%s)", k, nounCount(int(e.size), "byte"))
	case 'l':
		return k + " (symbolic link)"
	}
	return k + " (special file)"
}

// sameContent compares two regular files byte by byte.
func sameContent(ctx context.Context, r1 *os.Root, n1 string, r2 *os.Root, n2 string) (bool, error) {
	f1, err := workspace.OpenRegular(r1, n1, workspace.NoFollow)
	if err != nil {
		return false, err
	}
	defer f1.Close()
	f2, err := workspace.OpenRegular(r2, n2, workspace.NoFollow)
	if err != nil {
		return false, err
	}
	defer f2.Close()
	b1, b2 := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		k1, e1 := io.ReadFull(f1, b1)
		k2, e2 := io.ReadFull(f2, b2)
		if !bytes.Equal(b1[:k1], b2[:k2]) {
			return false, nil
		}
		end1 := e1 == io.EOF || e1 == io.ErrUnexpectedEOF
		end2 := e2 == io.EOF || e2 == io.ErrUnexpectedEOF
		switch {
		case end1 || end2:
			return end1 && end2, nil
		case e1 != nil:
			return false, e1
		case e2 != nil:
			return false, e2
		}
	}
}
