package mdterm

import (
	"html"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// style is a set of SGR attributes.
type style uint8

const (
	styleBold style = 1 << iota
	styleItalic
	styleUnderline
	styleStrike
	styleCode // the terminal's own cyan
)

// span is a run of text in one style. Text holds no newline; a hard line break is a span of
// its own.
type span struct {
	text  string
	style style
	hard  bool // a hard line break
}

// token is a piece of a paragraph's inline source, before emphasis is resolved.
type token struct {
	kind     tokenKind
	text     string  // text, code: the text; delim: the delimiter characters
	children []token // link: its text
	url      string  // link, autolink

	// delim only.
	orig, n           int     // the run's length as written, and what is left of it unmatched
	canOpen, canClose bool    // CommonMark's left- and right-flanking rules
	closes, opens     []style // the emphasis the run ends and starts once matched
}

type tokenKind int

const (
	tokText tokenKind = iota
	tokCode
	tokDelim
	tokLink
	tokAutolink
	tokBreak
)

// parseInline turns a paragraph's source into styled spans: emphasis, code spans, links,
// autolinks, escapes, entities and line breaks (a soft break becomes a space).
func parseInline(src string) []span {
	return flatten(emphasis(tokenize(src)), 0, nil)
}

func withStyle(spans []span, st style) []span {
	for i := range spans {
		spans[i].style |= st
	}
	return spans
}

func tokenize(s string) []token {
	ticks := &tickRuns{s: s}
	var toks []token
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			toks = append(toks, token{kind: tokText, text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			flush()
			toks = append(toks, token{kind: tokBreak})
			i += 2
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			text.WriteByte(s[i+1])
			i += 2
		case c == '\n':
			t := text.String()
			trimmed := strings.TrimRight(t, " ")
			text.Reset()
			text.WriteString(trimmed)
			if len(t)-len(trimmed) >= 2 {
				flush()
				toks = append(toks, token{kind: tokBreak})
			} else {
				text.WriteByte(' ')
			}
			i++
		case c == '`':
			n := runOf(s[i:], '`')
			if end := ticks.closer(i+n, n); end >= 0 {
				flush()
				toks = append(toks, token{kind: tokCode, text: codeText(s[i+n : end])})
				i = end + n
				continue
			}
			text.WriteString(s[i : i+n])
			i += n
		case c == '*' || c == '_' || (c == '~' && runOf(s[i:], '~') == 2):
			flush()
			n := runOf(s[i:], c)
			open, close := flanking(s, i, i+n, c)
			toks = append(toks, token{kind: tokDelim, text: s[i : i+n], orig: n, n: n, canOpen: open, canClose: close})
			i += n
		case c == '[' || (c == '!' && i+1 < len(s) && s[i+1] == '['):
			start := i
			if c == '!' {
				start++
			}
			if label, url, end, ok := link(s, start, ticks); ok {
				flush()
				toks = append(toks, token{kind: tokLink, children: emphasis(tokenize(label)), url: url})
				i = end
				continue
			}
			text.WriteByte(c)
			i++
		case c == '<':
			if url, end, ok := autolink(s, i); ok {
				flush()
				toks = append(toks, token{kind: tokAutolink, url: url})
				i = end
				continue
			}
			if end := lineBreakTag(s, i); end > 0 {
				flush()
				toks = append(toks, token{kind: tokBreak})
				i = end
				continue
			}
			text.WriteByte(c)
			i++
		case c == '&':
			if end := strings.IndexByte(s[i:], ';'); end > 1 && end < 33 {
				ent := s[i : i+end+1]
				if u := html.UnescapeString(ent); u != ent {
					text.WriteString(u)
					i += end + 1
					continue
				}
			}
			text.WriteByte(c)
			i++
		default:
			text.WriteByte(c)
			i++
		}
	}
	flush()
	return toks
}

// tickRuns indexes the backtick runs of one text by length, so that finding a span's closer
// is a lookup: scanning ahead from every opener made a model's "`a`a`a..." (or any text with
// many unmatched backticks) quadratic.
type tickRuns struct {
	s     string
	built bool
	at    map[int][]int // run length -> where runs of exactly that length start, ascending
}

// closer finds the run of exactly n backticks at or after from that closes a code span; -1 if
// there is none.
func (t *tickRuns) closer(from, n int) int {
	if !t.built {
		t.built, t.at = true, map[int][]int{}
		for i := 0; i < len(t.s); {
			j := strings.IndexByte(t.s[i:], '`')
			if j < 0 {
				break
			}
			i += j
			m := runOf(t.s[i:], '`')
			t.at[m] = append(t.at[m], i)
			i += m
		}
	}
	runs := t.at[n]
	if k, _ := slices.BinarySearch(runs, from); k < len(runs) {
		return runs[k]
	}
	return -1
}

// codeText is a code span's content: line breaks read as spaces, and one space is taken off
// each end when both have one (so "“ `x` “" shows `x`).
func codeText(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		s = s[1 : len(s)-1]
	}
	return s
}

// flanking applies CommonMark's rules to the delimiter run s[i:j] of c: whether it can open
// and whether it can close emphasis.
func flanking(s string, i, j int, c byte) (bool, bool) {
	before, after := ' ', ' '
	if i > 0 {
		before, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	if j < len(s) {
		after, _ = utf8.DecodeRuneInString(s[j:])
	}
	left := !unicode.IsSpace(after) && (!isPunct(after) || unicode.IsSpace(before) || isPunct(before))
	right := !unicode.IsSpace(before) && (!isPunct(before) || unicode.IsSpace(after) || isPunct(after))
	if c == '_' {
		return left && (!right || isPunct(before)), right && (!left || isPunct(after))
	}
	return left, right
}

func isPunct(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }

func isASCIIPunct(c byte) bool {
	return c < utf8.RuneSelf && c > ' ' && c != 0x7f && !isDigit(c) && !unicode.IsLetter(rune(c))
}

// A link's text and destination are looked for this far ahead and no further: an unclosed
// "[" or "](" in a model's answer would otherwise make each of thousands of them scan to
// the end of the text.
const (
	maxLinkText = 4 << 10
	maxLinkURL  = 8 << 10
)

// link reads "[label](url "title")" at s[i]: the label's source, the url and where the link
// ends. Brackets nest; code spans and escapes inside the label are skipped over.
func link(s string, i int, ticks *tickRuns) (label, url string, end int, ok bool) {
	depth := 0
	j := i
	for limit := min(len(s), i+maxLinkText); j < limit; j++ {
		switch s[j] {
		case '\\':
			j++
		case '`':
			n := runOf(s[j:], '`')
			if e := ticks.closer(j+n, n); e >= 0 {
				j = e + n - 1
			} else {
				j += n - 1
			}
		case '[':
			depth++
		case ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if depth != 0 || j+1 >= len(s) || s[j+1] != '(' {
		return "", "", 0, false
	}
	label = s[i+1 : j]
	k := j + 2
	k += len(s[k:]) - len(strings.TrimLeft(s[k:], " \n"))
	if k < len(s) && s[k] == '<' {
		e := strings.IndexAny(s[k:], ">\n")
		if e < 0 || s[k+e] != '>' {
			return "", "", 0, false
		}
		url, k = s[k+1:k+e], k+e+1
	} else {
		start, parens := k, 0
		for limit := min(len(s), k+maxLinkURL); k < limit && s[k] > ' '; k++ {
			if s[k] == '\\' && k+1 < len(s) {
				k++
				continue
			}
			if s[k] == '(' {
				parens++
			}
			if s[k] == ')' {
				if parens == 0 {
					break
				}
				parens--
			}
		}
		url = s[start:k]
	}
	k += len(s[k:]) - len(strings.TrimLeft(s[k:], " \n"))
	if k < len(s) && (s[k] == '"' || s[k] == '\'' || s[k] == '(') {
		closer := s[k]
		if closer == '(' {
			closer = ')'
		}
		e := strings.IndexByte(s[k+1:], closer)
		if e < 0 {
			return "", "", 0, false
		}
		k += e + 2
		k += len(s[k:]) - len(strings.TrimLeft(s[k:], " \n"))
	}
	if k >= len(s) || s[k] != ')' {
		return "", "", 0, false
	}
	return label, unescape(url), k + 1, true
}

func unescape(s string) string {
	if !strings.ContainsAny(s, "\\&") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return html.UnescapeString(b.String())
}

// autolink reads "<scheme:...>" or "<name@host>" at s[i].
func autolink(s string, i int) (url string, end int, ok bool) {
	e := strings.IndexAny(s[i+1:], "<> \n")
	if e < 1 || s[i+1+e] != '>' {
		return "", 0, false
	}
	u := s[i+1 : i+1+e]
	if c := strings.IndexByte(u, ':'); c >= 2 && c <= 32 && isScheme(u[:c]) {
		return u, i + e + 2, true
	}
	if at := strings.IndexByte(u, '@'); at > 0 && at < len(u)-1 && strings.Contains(u[at:], ".") {
		return u, i + e + 2, true
	}
	return "", 0, false
}

func isScheme(s string) bool {
	for k := 0; k < len(s); k++ {
		c := s[k]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || k > 0 && (isDigit(c) || c == '+' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// lineBreakTag reads "<br>", "<br/>" or "<br />" at s[i], which models put in table cells;
// it returns where the tag ends, or 0.
func lineBreakTag(s string, i int) int {
	for _, tag := range []string{"<br>", "<br/>", "<br />"} {
		if len(s)-i >= len(tag) && strings.EqualFold(s[i:i+len(tag)], tag) {
			return i + len(tag)
		}
	}
	return 0
}
