package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"massgen/internal/readmodel"
	"massgen/internal/termtext"
)

// sanitize makes model output safe and plain for the terminal: termtext.Clean removes escape
// sequences and control characters (the same cleaning as every other view), and tabs become
// four spaces. Clean text is returned as is.
func sanitize(s string) string {
	s = termtext.Clean(s)
	if strings.IndexByte(s, '\t') >= 0 {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return s
}

// wrapLines wraps text to lines of at most w cells, breaking at spaces and cutting words
// longer than a line. Model text is sanitised first. Trailing newlines are dropped; empty text
// gives no lines. Lines are substrings of the (sanitised) text, so wrapping allocates little.
func wrapLines(s string, w int) []string {
	s = strings.TrimRight(sanitize(s), "\n ")
	if s == "" || w < 1 {
		return nil
	}
	lines := make([]string, 0, len(s)/max(w, 1)+strings.Count(s, "\n")+1)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return wrapParagraph(s, w, lines)
		}
		lines = wrapParagraph(s[:i], w, lines)
		s = s[i+1:]
	}
}

// wrapParagraph appends the lines of one paragraph (text without newlines) wrapped to w cells.
// Spaces at a break are dropped; the paragraph's indentation is kept when it fits.
func wrapParagraph(p string, w int, lines []string) []string {
	if strings.TrimLeft(p, " ") == "" {
		return append(lines, "")
	}
	start, end, cw := 0, 0, 0 // the line being built is p[start:end], cw cells wide
	open := false             // the line holds at least one word
	for i := 0; i < len(p); {
		ws := i
		for ws < len(p) && p[ws] == ' ' {
			ws++
		}
		if ws == len(p) {
			break
		}
		we := ws
		for we < len(p) && p[we] != ' ' {
			we++
		}
		word, gap := p[ws:we], ws-i
		ww := width(word)
		switch {
		case open && cw+gap+ww <= w:
			end, cw = we, cw+gap+ww
		case ww <= w:
			if open {
				lines = append(lines, p[start:end])
			}
			start, end, cw = ws, we, ww
			if !open && i == 0 && gap+ww <= w { // keep the indentation
				start, cw = 0, gap+ww
			}
			open = true
		default: // a word longer than a line: cut it
			if open {
				lines = append(lines, p[start:end])
			}
			for width(word) > w {
				head := ansi.Truncate(word, w, "")
				if head == "" || !strings.HasPrefix(word, head) { // a grapheme wider than the line
					_, n := utf8.DecodeRuneInString(word)
					head = word[:n]
				}
				lines = append(lines, head)
				word = word[len(head):]
			}
			start, end, cw, open = we-len(word), we, width(word), word != ""
		}
		i = we
	}
	if open {
		lines = append(lines, p[start:end])
	}
	return lines
}

// width is the number of cells s takes; ASCII is counted without decoding.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// paragraphCap is the longest paragraph tailLines wraps from its start.
const paragraphCap = 16 << 10

// tailLines returns the last n lines of s wrapped to w cells, as wrapLines(s, w) would end. Only
// the tail of s that fills them is wrapped, from the start of its first paragraph, so the cost
// does not grow with the text. In a paragraph longer than paragraphCap, wrapping starts at a
// later point instead (a multiple of the window size, so it moves rarely while s grows); the
// lines are then a valid wrapping that may break differently from the whole text's.
func tailLines(s string, w, n int) []string {
	if n <= 0 || s == "" {
		return nil
	}
	for budget := max(2*n, 16)*(w+1) + 1; ; budget *= 2 {
		if len(s) <= budget {
			return last(wrapLines(s, w), n)
		}
		start := len(s) - budget
		partial := false
		if p := strings.LastIndexByte(s[:start], '\n') + 1; start-p <= paragraphCap {
			start = p
		} else {
			start, partial = start/budget*budget, true
			for start < len(s) && !utf8.RuneStart(s[start]) {
				start++
			}
		}
		lines := wrapLines(s[start:], w)
		if partial && len(lines) > 0 {
			lines = lines[1:] // it may start mid-word
		}
		if len(lines) >= n {
			return last(lines, n)
		}
	}
}

func last(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// pad right-pads plain s with spaces to w cells; it does not cut.
func pad(s string, w int) string {
	if n := width(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// fit cuts s (which may hold styles) to w cells with an ellipsis, then pads it with spaces to
// exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = ansi.StringWidth(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// clip cuts plain text s to w cells with one ellipsis at the end. A cut that lands just after
// an ellipsis, or after the space or bracket that follows one, adds no second: "writing
// new_answer…", not "writing new_answer… …".
func clip(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return ansi.Truncate(s, max(w, 0), "")
	}
	cut := ansi.Truncate(s, w-1, "")
	if trimmed := strings.TrimRight(cut, " ([{,;:·"); strings.HasSuffix(trimmed, "…") {
		return trimmed
	}
	return strings.TrimRight(cut, " ") + "…"
}

// oneLine folds whitespace so s fits on one line and cuts it to max cells.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(sanitize(s)), " ")
	if ansi.StringWidth(s) > max {
		s = ansi.Truncate(s, max, "…")
	}
	return s
}

// tokens formats a token count: 950, 12.3k, 4.5M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

// footerCost is the session's cost so far. A team with a model that has no price shows
// "unknown" from the start: $0.0000 before its first usage would pass for free.
func footerCost(s *readmodel.State) string {
	c := s.Cost()
	for _, a := range s.Agents {
		c.Known = c.Known && !a.Unpriced
	}
	return c.Short()
}

// byteSize formats a size for people: 950 B, 1.2 kB, 3.4 MB.
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}

// elapsed formats a duration for the footer: 12.3s, 4m05s, 1h02m.
func elapsed(d time.Duration) string {
	switch {
	case d < 0:
		return "0.0s"
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
