package filetool

// Line diffs for compare_files and compare_directories: Myers' O(ND) algorithm on the lines
// left after trimming the common beginning and end, rendered as a unified diff (GNU style,
// three lines of context) into a bounded buffer.

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of a line diff.
const (
	diffContextLines = 3
	maxDiffEdits     = 1000  // edit distance beyond which the changed part is shown as one block
	maxDiffLines     = 20000 // changed lines (both sides) beyond which the same happens
	maxDiffLineLen   = 1000  // longer lines are clipped in the output
)

// diffResult is a rendered diff. removed and added count every changed line, even those past
// the output limit.
type diffResult struct {
	text           string
	removed, added int
	coarse         bool // the changed part was too large for a line-by-line diff
	truncated      bool // text stopped at the limit
}

// unifiedDiff renders the line differences of a and b as a unified diff labelled name1 and
// name2, in at most about limit bytes.
func unifiedDiff(name1, name2 string, a, b []byte, limit int) diffResult {
	la, lb := splitLines(string(a)), splitLines(string(b))
	blocks, exact := diffBlocks(la, lb)
	res := diffResult{coarse: !exact}
	for _, bl := range blocks {
		if !bl.eq {
			res.removed += bl.na
			res.added += bl.nb
		}
	}
	w := &capWriter{limit: limit}
	w.raw("--- " + name1 + "\n+++ " + name2 + "\n")
	renderHunks(w, la, lb, blocks)
	res.text, res.truncated = w.b.String(), w.full
	return res
}

// splitLines splits s after each line break; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// block is a run of equal lines (eq: a[a:a+na] == b[b:b+nb], na == nb) or a change that
// replaces a[a:a+na] by b[b:b+nb]. Blocks alternate between the two kinds.
type block struct {
	eq     bool
	a, b   int
	na, nb int
}

// addLines appends n equal (kind ' '), removed ('-') or added ('+') lines starting at a and b.
func addLines(blocks []block, kind byte, a, b, n int) []block {
	if n == 0 {
		return blocks
	}
	eq := kind == ' '
	if len(blocks) == 0 || blocks[len(blocks)-1].eq != eq {
		blocks = append(blocks, block{eq: eq, a: a, b: b})
	}
	last := &blocks[len(blocks)-1]
	switch kind {
	case ' ':
		last.na += n
		last.nb += n
	case '-':
		last.na += n
	default:
		last.nb += n
	}
	return blocks
}

// diffBlocks returns the blocks turning a into b; exact is false when the changed middle was
// too large and is given as one replaced block.
func diffBlocks(a, b []string) ([]block, bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	blocks := addLines(nil, ' ', 0, 0, pre)
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	edits, exact := myers(ma, mb)
	if !exact {
		edits = []edit{{'-', 0, 0, len(ma)}, {'+', len(ma), 0, len(mb)}}
	}
	for _, e := range edits {
		blocks = addLines(blocks, e.kind, pre+e.a, pre+e.b, e.n)
	}
	return addLines(blocks, ' ', len(a)-suf, len(b)-suf, suf), exact
}

// edit is n lines of one kind (' ', '-', '+') at positions a and b.
type edit struct {
	kind byte
	a, b int
	n    int
}

// myers finds a shortest edit script from a to b, or reports false when it would take more
// than maxDiffEdits edits or the inputs are too long.
func myers(a, b []string) ([]edit, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return []edit{{'-', 0, 0, n}, {'+', n, 0, m}}, true
	}
	if n+m > maxDiffLines {
		return nil, false
	}
	limit := min(n+m, maxDiffEdits)
	off := limit + 1
	v := make([]int32, 2*limit+3)
	var trace [][]int32 // trace[d-1]: v after step d-1, for k in [-(d-1), d-1]
	for d := 0; d <= limit; d++ {
		if d > 0 {
			trace = append(trace, slices.Clone(v[off-d+1:off+d]))
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				return backtrack(n, m, trace, d), true
			}
		}
	}
	return nil, false
}

// backtrack walks the trace of myers back from (n, m) and returns the edits in order.
func backtrack(n, m int, trace [][]int32, depth int) []edit {
	var rev []edit
	push := func(kind byte, a, b int) {
		if l := len(rev) - 1; l >= 0 && rev[l].kind == kind {
			rev[l].a, rev[l].b, rev[l].n = a, b, rev[l].n+1
			return
		}
		rev = append(rev, edit{kind, a, b, 1})
	}
	x, y := n, m
	for d := depth; d > 0; d-- {
		snap := trace[d-1]
		at := func(k int) int { return int(snap[k+d-1]) }
		k := x - y
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			push(' ', x-1, y-1)
			x, y = x-1, y-1
		}
		if x == px {
			push('+', x, y-1)
		} else {
			push('-', x-1, y)
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		push(' ', x-1, y-1)
		x, y = x-1, y-1
	}
	slices.Reverse(rev)
	return rev
}

// renderHunks writes the hunks of blocks: changes with up to three lines of context, joined
// when fewer than seven equal lines separate them.
func renderHunks(w *capWriter, a, b []string, blocks []block) {
	for i := 0; i < len(blocks) && !w.full; {
		if blocks[i].eq {
			i++
			continue
		}
		first, last := i, i
		for last+2 < len(blocks) && blocks[last+1].na <= 2*diffContextLines {
			last += 2
		}
		lead, trail := 0, 0
		if first > 0 {
			lead = min(diffContextLines, blocks[first-1].na)
		}
		if last+1 < len(blocks) {
			trail = min(diffContextLines, blocks[last+1].na)
		}
		a0, b0 := blocks[first].a-lead, blocks[first].b-lead
		a1 := blocks[last].a + blocks[last].na + trail
		b1 := blocks[last].b + blocks[last].nb + trail
		w.raw(fmt.Sprintf("@@ -%s +%s @@\n", hunkRange(a0, a1-a0), hunkRange(b0, b1-b0)))
		w.lines(' ', a[a0:blocks[first].a])
		for _, bl := range blocks[first : last+1] {
			if bl.eq {
				w.lines(' ', a[bl.a:bl.a+bl.na])
				continue
			}
			w.lines('-', a[bl.a:bl.a+bl.na])
			w.lines('+', b[bl.b:bl.b+bl.nb])
		}
		end := blocks[last].a + blocks[last].na
		w.lines(' ', a[end:end+trail])
		i = last + 1
	}
}

// hunkRange formats the 0-based start and count of a hunk side as diff does: an empty range
// names the line before it, and a count of one is left out.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// capWriter collects text up to a limit; after the first write that does not fit it drops
// everything.
type capWriter struct {
	b     strings.Builder
	limit int
	full  bool
}

func (w *capWriter) raw(s string) bool {
	if w.full || w.b.Len()+len(s) > w.limit {
		w.full = true
		return false
	}
	w.b.WriteString(s)
	return true
}

func (w *capWriter) lines(prefix byte, lines []string) {
	for _, l := range lines {
		text, nl := strings.CutSuffix(l, "\n")
		if len(text) > maxDiffLineLen {
			cut := maxDiffLineLen
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + fmt.Sprintf(" [... line clipped, %d bytes in all]", len(text))
		}
		s := string(prefix) + text + "\n"
		if !nl {
			s += "\\ No newline at end of file\n"
		}
		if !w.raw(s) {
			return
		}
	}
}
