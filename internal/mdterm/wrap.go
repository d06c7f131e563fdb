package mdterm

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

const sgrReset = "\x1b[m"

// word is text between spaces or line breaks, in one or more styles ("**bold**, " is two
// pieces).
type word struct {
	pieces []span
	width  int
	gap    style // the style of the space before the word, so underlines run on through it
	breaks int   // hard line breaks before the word
}

// layout wraps spans to lines of at most width cells, breaking at spaces (runs of spaces
// read as one) and at hard breaks, and cutting words wider than a line. Each line is a
// string with its own SGR sequences, closed at its end.
func layout(spans []span, width int) []string {
	var out []string
	var line []span
	lw := 0
	newline := func() {
		out = append(out, sgr(line))
		line, lw = nil, 0
	}
	for k, w := range words(spans) {
		if k > 0 {
			for range w.breaks {
				newline()
			}
		}
		switch {
		case lw > 0 && w.breaks == 0 && lw+1+w.width <= width:
			line = append(line, span{text: " ", style: w.gap})
			line = append(line, w.pieces...)
			lw += 1 + w.width
			continue
		case lw > 0:
			newline()
		}
		if w.width <= width {
			line, lw = append(line, w.pieces...), w.width
			continue
		}
		chunks := splitSpans(w.pieces, width)
		for _, c := range chunks[:len(chunks)-1] {
			line = c
			newline()
		}
		line = chunks[len(chunks)-1]
		lw = spansWidth(line)
	}
	if len(line) > 0 || len(out) == 0 {
		newline()
	}
	return out
}

func words(spans []span) []word {
	var out []word
	var cur word
	var gap style
	breaks := 0
	end := func() {
		if len(cur.pieces) > 0 {
			out = append(out, cur)
			cur = word{}
		}
	}
	for _, s := range spans {
		if s.hard {
			end()
			breaks++
			continue
		}
		for t := s.text; t != ""; {
			i := strings.IndexByte(t, ' ')
			if i == 0 {
				if len(cur.pieces) > 0 {
					end()
					gap = s.style
				}
				t = t[1:]
				continue
			}
			piece := t
			if i > 0 {
				piece, t = t[:i], t[i:]
			} else {
				t = ""
			}
			if len(cur.pieces) == 0 {
				cur.gap, cur.breaks, breaks = gap, breaks, 0
			}
			cur.pieces = append(cur.pieces, span{text: piece, style: s.style})
			cur.width += ansi.StringWidth(piece)
		}
	}
	end()
	return out
}

// splitSpans cuts pieces into lines of at most width cells, between grapheme clusters. A
// cluster wider than width gets a line to itself.
func splitSpans(pieces []span, width int) [][]span {
	var out [][]span
	var line []span
	lw := 0
	for _, p := range pieces {
		start := 0
		for i := 0; i < len(p.text); {
			cluster, cw := ansi.FirstGraphemeCluster(p.text[i:], ansi.GraphemeWidth)
			if len(cluster) == 0 {
				break
			}
			if lw+cw > width && lw > 0 {
				if i > start {
					line = append(line, span{text: p.text[start:i], style: p.style})
				}
				out = append(out, line)
				line, lw, start = nil, 0, i
			}
			lw += cw
			i += len(cluster)
		}
		if start < len(p.text) {
			line = append(line, span{text: p.text[start:], style: p.style})
		}
	}
	return append(out, line)
}

func spansWidth(spans []span) int {
	n := 0
	for _, s := range spans {
		n += ansi.StringWidth(s.text)
	}
	return n
}

// sgr writes spans as text with SGR sequences: each styled run opens its attributes and
// resets them at its end, so every line stands alone.
func sgr(spans []span) string {
	var b strings.Builder
	for i := 0; i < len(spans); {
		st := spans[i].style
		j := i
		for j < len(spans) && spans[j].style == st {
			j++
		}
		if st != 0 {
			b.WriteString(sgrOpen(st))
		}
		for _, s := range spans[i:j] {
			b.WriteString(s.text)
		}
		if st != 0 {
			b.WriteString(sgrReset)
		}
		i = j
	}
	return b.String()
}

func sgrOpen(st style) string {
	codes := make([]string, 0, 5)
	for _, a := range []struct {
		st   style
		code string
	}{{styleBold, "1"}, {styleItalic, "3"}, {styleUnderline, "4"}, {styleStrike, "9"}, {styleCode, "36"}} {
		if st&a.st != 0 {
			codes = append(codes, a.code)
		}
	}
	return "\x1b[" + strings.Join(codes, ";") + "m"
}
