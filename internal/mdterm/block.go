package mdterm

import "strings"

type blockKind int

const (
	kindParagraph blockKind = iota
	kindHeading
	kindCode
	kindRule
	kindQuote
	kindList
	kindTable
)

type task int

const (
	taskNone task = iota
	taskOpen
	taskDone
)

// block is one block of the document. Which fields are set depends on kind.
type block struct {
	kind     blockKind
	level    int      // heading: 1 to 6
	text     string   // paragraph, heading: the inline source, lines joined by "\n"
	lines    []string // code: its lines, as written
	children []*block // quote
	items    []item   // list
	ordered  bool     // list
	start    int      // ordered list: the first item's number
	loose    bool     // list: items or their blocks are separated by blank lines
	table    *table
}

type item struct {
	blocks []*block
	task   task
}

// parseBlocks splits lines into blocks, recursing into the lines of block quotes and list
// items. It follows CommonMark's block rules closely, with GFM tables and task items, and is
// lenient where models are sloppy: a list marker indented past its parent's marker nests in
// the parent item even if it does not reach the item's text.
func parseBlocks(lines []string) []*block {
	var out []*block
	for i := 0; i < len(lines); {
		line := lines[i]
		if isBlank(line) {
			i++
			continue
		}
		var b *block
		switch {
		case isFence(line):
			b, i = parseFenced(lines, i)
		case indentOf(line) >= 4:
			b, i = parseIndented(lines, i)
		case isHeading(line):
			level, text := atxHeading(line)
			b, i = &block{kind: kindHeading, level: level, text: text}, i+1
		case isRule(line):
			b, i = &block{kind: kindRule}, i+1
		case isQuote(line):
			b, i = parseQuote(lines, i)
		case isItem(line):
			b, i = parseList(lines, i)
		case isTable(lines, i):
			b, i = parseTable(lines, i)
		default:
			b, i = parseParagraph(lines, i)
		}
		out = append(out, b)
	}
	return out
}

// interrupts reports whether lines[i] starts a block that ends a paragraph before it.
func interrupts(lines []string, i int) bool {
	l := lines[i]
	if indentOf(l) >= 4 {
		return false
	}
	return isFence(l) || isHeading(l) || isRule(l) || isQuote(l) || isTable(lines, i) ||
		(isItem(l) && listMarker(l).content < len(l) && !isBlank(l[listMarker(l).content:]))
}

func parseParagraph(lines []string, i int) (*block, int) {
	text := []string{strings.TrimLeft(lines[i], " ")}
	for i++; i < len(lines) && !isBlank(lines[i]); i++ {
		if level := setextLevel(lines[i]); level > 0 {
			return &block{kind: kindHeading, level: level, text: strings.TrimRight(strings.Join(text, "\n"), " ")}, i + 1
		}
		if interrupts(lines, i) {
			break
		}
		text = append(text, strings.TrimLeft(lines[i], " "))
	}
	return &block{kind: kindParagraph, text: strings.TrimRight(strings.Join(text, "\n"), " ")}, i
}

func parseFenced(lines []string, i int) (*block, int) {
	open := lines[i]
	ind := indentOf(open)
	ch := open[ind]
	n := runOf(open[ind:], ch)
	var code []string
	closed := false
	for i++; i < len(lines) && !closed; i++ {
		l := lines[i]
		if li := indentOf(l); li < 4 && li < len(l) && runOf(l[li:], ch) >= n && isBlank(l[li+runOf(l[li:], ch):]) {
			closed = true
			continue
		}
		code = append(code, l[min(ind, indentOf(l)):])
	}
	if !closed {
		// Unclosed, the fence runs to the end; the blank lines there are not code.
		for len(code) > 0 && isBlank(code[len(code)-1]) {
			code = code[:len(code)-1]
		}
	}
	return &block{kind: kindCode, lines: code}, i
}

func parseIndented(lines []string, i int) (*block, int) {
	var code []string
	for ; i < len(lines) && (isBlank(lines[i]) || indentOf(lines[i]) >= 4); i++ {
		if isBlank(lines[i]) {
			code = append(code, "")
			continue
		}
		code = append(code, lines[i][4:])
	}
	for len(code) > 0 && code[len(code)-1] == "" {
		code = code[:len(code)-1]
	}
	return &block{kind: kindCode, lines: code}, i
}

// parseQuote takes the lines marked with ">" and the lazy lines that continue their paragraph.
func parseQuote(lines []string, i int) (*block, int) {
	var inner []string
	for ; i < len(lines); i++ {
		l := lines[i]
		if isQuote(l) {
			rest := strings.TrimLeft(l, " ")[1:]
			rest = strings.TrimPrefix(rest, " ")
			inner = append(inner, rest)
			continue
		}
		if isBlank(l) || len(inner) == 0 || isBlank(inner[len(inner)-1]) || interrupts(lines, i) {
			break
		}
		inner = append(inner, l)
	}
	return &block{kind: kindQuote, children: parseBlocks(inner)}, i
}

func parseList(lines []string, i int) (*block, int) {
	first := listMarker(lines[i])
	b := &block{kind: kindList, ordered: first.ordered, start: first.number}
	for i < len(lines) {
		m := listMarker(lines[i])
		if !isItem(lines[i]) || m.ordered != first.ordered || m.delim != first.delim || indentOf(lines[i]) >= 4 {
			break
		}
		var body []string
		if m.content < len(lines[i]) {
			body = append(body, lines[i][m.content:])
		} else {
			body = append(body, "")
		}
		for i++; i < len(lines); i++ {
			l := lines[i]
			ind := indentOf(l)
			switch {
			case isBlank(l):
				body = append(body, "")
				continue
			case ind >= m.content:
				body = append(body, l[m.content:])
				continue
			case ind > m.indent && isItem(l):
				body = append(body, l[min(ind, m.content):])
				continue
			case isItem(l):
				// A marker at or left of this one: the next item, of this list or an outer one.
			case body[len(body)-1] != "" && !interrupts(lines, i):
				body = append(body, strings.TrimLeft(l, " "))
				continue
			}
			break
		}
		trailing := 0
		for len(body) > 1 && body[len(body)-1] == "" {
			body, trailing = body[:len(body)-1], trailing+1
		}
		it := item{}
		it.task, body[0] = taskOf(body[0])
		it.blocks = parseBlocks(body)
		if len(it.blocks) > 1 && blankBetweenBlocks(body) {
			b.loose = true
		}
		if trailing > 0 && i < len(lines) && isItem(lines[i]) && sameList(listMarker(lines[i]), first) {
			b.loose = true
		}
		b.items = append(b.items, it)
	}
	return b, i
}

func sameList(m, first marker) bool {
	return m.ordered == first.ordered && m.delim == first.delim
}

// blankBetweenBlocks reports whether an item's lines hold a blank line outside fenced code
// and before text at the item's own level: what makes a list loose.
func blankBetweenBlocks(body []string) bool {
	fenced := false
	for k, l := range body {
		if isFence(l) && indentOf(l) == 0 {
			fenced = !fenced
		}
		if l == "" && !fenced && k+1 < len(body) && body[k+1] != "" && indentOf(body[k+1]) == 0 {
			return true
		}
	}
	return false
}

// taskOf takes a GFM task box ("[ ] ", "[x] ") off the start of an item's first line.
func taskOf(l string) (task, string) {
	if len(l) < 4 || l[0] != '[' || l[2] != ']' || l[3] != ' ' {
		return taskNone, l
	}
	switch l[1] {
	case ' ':
		return taskOpen, l[4:]
	case 'x', 'X':
		return taskDone, l[4:]
	}
	return taskNone, l
}

// marker is a list item's marker: where it starts, what it is, and where the item's text
// starts (the column its continuation lines are indented to).
type marker struct {
	indent  int
	ordered bool
	number  int
	delim   byte // '-', '+', '*', '.' or ')'
	content int
}

// listMarker reads the list marker at the start of l; its delim is 0 if there is none.
func listMarker(l string) marker {
	m := marker{indent: indentOf(l)}
	j := m.indent
	switch {
	case j < len(l) && (l[j] == '-' || l[j] == '+' || l[j] == '*'):
		m.delim = l[j]
		j++
	case j < len(l) && isDigit(l[j]):
		k := j
		for k < len(l) && k-j < 9 && isDigit(l[k]) {
			m.number = m.number*10 + int(l[k]-'0')
			k++
		}
		if k == len(l) || (l[k] != '.' && l[k] != ')') {
			return marker{}
		}
		m.ordered, m.delim = true, l[k]
		j = k + 1
	default:
		return marker{}
	}
	if j < len(l) && l[j] != ' ' {
		return marker{}
	}
	spaces := indentOf(l[j:])
	switch {
	case j+spaces == len(l):
		m.content = j + 1
	case spaces > 4:
		m.content = j + 1
	default:
		m.content = j + spaces
	}
	return m
}

func isItem(l string) bool {
	return listMarker(l).delim != 0 && indentOf(l) < 4 && !isRule(l)
}

func isBlank(l string) bool { return strings.TrimLeft(l, " ") == "" }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// runOf counts the bytes ch at the start of s.
func runOf(s string, ch byte) int {
	n := 0
	for n < len(s) && s[n] == ch {
		n++
	}
	return n
}

func isFence(l string) bool {
	ind := indentOf(l)
	if ind >= 4 || ind == len(l) || (l[ind] != '`' && l[ind] != '~') {
		return false
	}
	n := runOf(l[ind:], l[ind])
	return n >= 3 && (l[ind] == '~' || !strings.Contains(l[ind+n:], "`"))
}

func isHeading(l string) bool {
	level, _ := atxHeading(l)
	return level > 0
}

// atxHeading reads a "# Title" heading: its level (0 if l is none) and its text without the
// #s on either side.
func atxHeading(l string) (int, string) {
	ind := indentOf(l)
	if ind >= 4 {
		return 0, ""
	}
	n := runOf(l[ind:], '#')
	rest := l[ind+n:]
	if n < 1 || n > 6 || (rest != "" && rest[0] != ' ') {
		return 0, ""
	}
	text := strings.TrimSpace(rest)
	if t := strings.TrimRight(text, "#"); t == "" || strings.HasSuffix(t, " ") {
		text = strings.TrimSpace(t)
	}
	return n, text
}

// setextLevel is 1 for a line of =s, 2 for a line of -s (which underline the paragraph above
// them), 0 otherwise.
func setextLevel(l string) int {
	t := strings.TrimRight(l, " ")
	if indentOf(t) >= 4 || isBlank(t) {
		return 0
	}
	t = strings.TrimLeft(t, " ")
	switch n := runOf(t, t[0]); {
	case n == len(t) && t[0] == '=':
		return 1
	case n == len(t) && t[0] == '-':
		return 2
	}
	return 0
}

func isRule(l string) bool {
	if indentOf(l) >= 4 {
		return false
	}
	var ch byte
	n := 0
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case c == ' ':
		case (c == '-' || c == '*' || c == '_') && (ch == 0 || ch == c):
			ch = c
			n++
		default:
			return false
		}
	}
	return n >= 3
}

func isQuote(l string) bool {
	ind := indentOf(l)
	return ind < 4 && ind < len(l) && l[ind] == '>'
}
