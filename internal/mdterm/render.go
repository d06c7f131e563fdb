// Package mdterm renders Markdown as text for a terminal: the subset of CommonMark and GitHub
// Flavored Markdown that model answers use (headings, emphasis, inline and fenced code, lists
// with task boxes, block quotes, rules, links, tables), laid out to a width in terminal cells
// with plain SGR styles (bold, italics, underline, strikethrough and the terminal's own cyan),
// so it reads the same on dark and light terminals. The markup itself is not shown.
package mdterm

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// MinWidth is the narrowest layout Render makes; narrower widths are treated as MinWidth.
const MinWidth = 10

// Render lays out md for a terminal width cells wide and returns its lines joined by "\n",
// without a trailing newline. No line is wider than max(width, MinWidth) cells when md holds no
// control characters; Render does not remove them, so text from a model must be cleaned first
// (termtext.Clean). Render is pure and safe for concurrent use.
func Render(md string, width int) string {
	width = max(width, MinWidth)
	md = strings.ReplaceAll(md, "\r\n", "\n")
	md = strings.ReplaceAll(md, "\t", "    ")
	blocks := parseBlocks(strings.Split(md, "\n"))
	lines := renderBlocks(blocks, width, false)
	for i, l := range lines {
		// Deep nesting can leave a block less room than its narrowest layout; cut rather
		// than spill over the edge.
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "") + sgrReset
		}
	}
	return strings.Join(lines, "\n")
}

// renderBlocks lays out blocks in width cells. Blocks are separated by a blank line unless
// tight (the blocks of an item in a tight list).
func renderBlocks(blocks []*block, width int, tight bool) []string {
	var out []string
	for i, b := range blocks {
		if i > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, renderBlock(b, width)...)
	}
	return out
}

func renderBlock(b *block, width int) []string {
	switch b.kind {
	case kindHeading:
		st := styleBold
		if b.level == 1 {
			st |= styleUnderline
		}
		return layout(withStyle(parseInline(b.text), st), width)
	case kindParagraph:
		return layout(parseInline(b.text), width)
	case kindCode:
		return renderCode(b.lines, width)
	case kindRule:
		return []string{strings.Repeat("─", width)}
	case kindQuote:
		return indent(renderBlocks(b.children, max(width-2, 1), false), "│ ", "│ ")
	case kindList:
		return renderList(b, width)
	case kindTable:
		return renderTable(b.table, width)
	}
	return nil
}

// renderCode indents a code block by two cells and breaks lines too long for the width (at a
// space if it can, else inside a word), each piece indented alike; code is not re-flowed or
// highlighted.
func renderCode(lines []string, width int) []string {
	const margin = "  "
	w := max(width-len(margin), 1)
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "" {
			out = append(out, "")
			continue
		}
		for _, piece := range breakCode(l, w) {
			out = append(out, margin+piece)
		}
	}
	return out
}

// breakCode breaks a line of code into pieces of at most width cells: after its last space
// that fits (past its indentation), or else inside a word.
func breakCode(l string, width int) []string {
	var out []string
	for ansi.StringWidth(l) > width {
		head := splitSpans([]span{{text: l}}, width)[0][0].text
		cut := len(head)
		if sp := strings.LastIndexByte(head, ' '); sp > indentOf(head) && l[cut] != ' ' {
			cut = sp + 1
		}
		out = append(out, strings.TrimRight(l[:cut], " "))
		l = strings.TrimLeft(l[cut:], " ")
	}
	return append(out, l)
}

// renderList gives each item its marker (a bullet, its number or a task box) and lays its
// blocks out beside it, wrapped lines hanging under the item's text, not under the marker.
func renderList(b *block, width int) []string {
	var out []string
	for k, it := range b.items {
		if k > 0 && b.loose {
			out = append(out, "")
		}
		marker := "• "
		if b.ordered {
			marker = strconv.Itoa(b.start+k) + ". "
		}
		switch it.task {
		case taskOpen:
			marker = taskBox(b.ordered, marker, "[ ] ")
		case taskDone:
			marker = taskBox(b.ordered, marker, "[✓] ")
		}
		hang := strings.Repeat(" ", ansi.StringWidth(marker))
		lines := renderBlocks(it.blocks, max(width-len(hang), 1), !b.loose)
		if len(lines) == 0 {
			lines = []string{""}
		}
		out = append(out, indent(lines, marker, hang)...)
	}
	return out
}

// taskBox is the marker of a task item: the box in place of a bullet, after a number.
func taskBox(ordered bool, marker, box string) string {
	if ordered {
		return marker + box
	}
	return box
}

// indent prefixes the first line with first and the others with rest; blank lines keep only
// the prefix's non-space part, so they carry no trailing spaces.
func indent(lines []string, first, rest string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" {
			p = strings.TrimRight(p, " ")
		}
		out[i] = p + l
	}
	return out
}
