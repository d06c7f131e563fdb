package mdterm

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

type align int

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

// table is a GFM table: a header row, a delimiter row that sets each column's alignment, and
// body rows, each cell its inline source.
type table struct {
	header []string
	aligns []align
	rows   [][]string
}

// isTable reports whether lines[i] is a table's header row: a row with pipes followed by a
// delimiter row of as many cells.
func isTable(lines []string, i int) bool {
	if i+1 >= len(lines) || !strings.Contains(lines[i], "|") || indentOf(lines[i]) >= 4 {
		return false
	}
	aligns, ok := delimiterRow(lines[i+1])
	return ok && len(aligns) == len(cells(lines[i]))
}

func parseTable(lines []string, i int) (*block, int) {
	t := &table{header: cells(lines[i])}
	t.aligns, _ = delimiterRow(lines[i+1])
	for i += 2; i < len(lines) && !isBlank(lines[i]) && strings.Contains(lines[i], "|") && !interruptsTable(lines[i]); i++ {
		row := cells(lines[i])
		row = slices.Grow(row, len(t.header))[:len(t.header)]
		t.rows = append(t.rows, row)
	}
	return &block{kind: kindTable, table: t}, i
}

// interruptsTable reports whether l starts a block rather than continuing a table.
func interruptsTable(l string) bool {
	return indentOf(l) < 4 && (isFence(l) || isHeading(l) || isQuote(l))
}

// cells splits a table row at its unescaped pipes; "\|" is a pipe inside a cell.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var out []string
	start := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			out = append(out, cell(row[start:i]))
			start = i + 1
		}
	}
	return append(out, cell(row[start:]))
}

func cell(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), `\|`, "|") }

// delimiterRow reads a row like "|:---|:-:|--:|" into alignments; ok is false if l is not one.
func delimiterRow(l string) ([]align, bool) {
	if !strings.Contains(l, "-") || indentOf(l) >= 4 {
		return nil, false
	}
	cs := cells(l)
	if len(cs) == 1 && !strings.Contains(l, "|") {
		return nil, false
	}
	aligns := make([]align, len(cs))
	for k, c := range cs {
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		dashes := strings.Trim(c, ":")
		if dashes == "" || strings.Trim(dashes, "-") != "" {
			return nil, false
		}
		switch {
		case left && right:
			aligns[k] = alignCenter
		case right:
			aligns[k] = alignRight
		}
	}
	return aligns, true
}

// renderTable lays a table out in width cells: columns as wide as their widest cell if they
// fit, else narrowed (the widest first) and their cells wrapped; columns are separated by " │ "
// and the header, in bold, by a rule.
func renderTable(t *table, width int) []string {
	const sep = " │ "
	n := len(t.header)
	head := make([][]span, n)
	for c, src := range t.header {
		head[c] = withStyle(parseInline(src), styleBold)
	}
	body := make([][][]span, len(t.rows))
	natural := make([]int, n)
	for c := range n {
		natural[c] = max(lineWidth(head[c]), 1)
	}
	for r, row := range t.rows {
		body[r] = make([][]span, n)
		for c, src := range row {
			body[r][c] = parseInline(src)
			natural[c] = max(natural[c], lineWidth(body[r][c]))
		}
	}
	widths := fit(natural, width-len(sep)*(n-1))
	out := renderRow(head, widths, t.aligns, sep)
	rule := make([]string, n)
	for c, w := range widths {
		rule[c] = strings.Repeat("─", w)
	}
	out = append(out, strings.Join(rule, "─┼─"))
	for _, row := range body {
		out = append(out, renderRow(row, widths, t.aligns, sep)...)
	}
	return out
}

// lineWidth is the width of spans laid out on one line.
func lineWidth(spans []span) int {
	n := 0
	for _, l := range layout(spans, 1<<30) {
		n = max(n, ansi.StringWidth(l))
	}
	return n
}

// fit shares avail cells among columns that want natural cells: every column gets what it
// wants if all fit; otherwise the narrowest are served first and the rest split what is left
// evenly. No column is narrower than one cell.
func fit(natural []int, avail int) []int {
	widths := slices.Clone(natural)
	total := 0
	for _, w := range natural {
		total += w
	}
	if total <= avail {
		return widths
	}
	order := make([]int, len(natural))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return natural[a] - natural[b] })
	left := avail
	for k, c := range order {
		share := left / (len(order) - k)
		widths[c] = max(min(natural[c], share), 1)
		left -= widths[c]
	}
	return widths
}

// renderRow wraps each cell to its column and pads it to the column's width.
func renderRow(row [][]span, widths []int, aligns []align, sep string) []string {
	cols := make([][]string, len(row))
	height := 1
	for c, spans := range row {
		cols[c] = layout(spans, widths[c])
		height = max(height, len(cols[c]))
	}
	out := make([]string, height)
	for l := range height {
		parts := make([]string, len(row))
		for c := range row {
			text := ""
			if l < len(cols[c]) {
				text = cols[c][l]
			}
			parts[c] = pad(text, widths[c], aligns[c])
		}
		out[l] = strings.TrimRight(strings.Join(parts, sep), " ")
	}
	return out
}

func pad(s string, w int, a align) string {
	gap := max(w-ansi.StringWidth(s), 0)
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + s
	case alignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}
