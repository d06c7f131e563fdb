// Package termtext makes text that models and servers wrote safe to show on a terminal. Every
// place that prints such text for a person (the live view, --no-display output, massgen replay,
// --automation lines, massgen.log) goes through Clean, so no model can retitle the terminal
// (OSC 0/2), clear it (CSI 2J), move the cursor over earlier output, write the clipboard
// (OSC 52), plant hyperlinks (OSC 8) or send any other control sequence, nor reorder what a
// person reads with Unicode's bidirectional overrides ("Trojan Source").
package termtext

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Clean returns s without terminal control: escape sequences are removed whole (CSI, OSC
// ended by BEL or ST, DCS, APC, PM and SOS strings, two-byte ESC sequences, and their 8-bit
// C1 forms), C1 control characters (U+0080 to U+009F) and C0 ones other than newline and tab
// are dropped, CR LF becomes LF and a lone CR is dropped (it would let text overwrite its own
// line), the bidirectional embedding, override and isolate controls (U+202A to U+202E, U+2066
// to U+2069) are dropped, and invalid UTF-8 becomes U+FFFD. Clean text is returned as is.
func Clean(s string) string {
	if clean(s) {
		return s
	}
	if needsParse(s) {
		// The parser takes a sequence whole, parameters included, so "\x1b]0;title\a" leaves
		// nothing behind. C1 introducers written as UTF-8 characters are given their 7-bit
		// form first, so their strings go whole too.
		s = stripLines(c1.Replace(s))
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || bidiControl(r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// c1 maps the C1 controls that open or close a sequence to their 7-bit ESC forms.
var c1 = strings.NewReplacer(
	"\u0090", "\x1bP", // DCS
	"\u0098", "\x1bX", // SOS
	"\u009b", "\x1b[", // CSI
	"\u009c", "\x1b\\", // ST
	"\u009d", "\x1b]", // OSC
	"\u009e", "\x1b^", // PM
	"\u009f", "\x1b_", // APC
)

// needsParse reports whether s holds anything that may open a sequence: ESC, a C1 character,
// or a raw 8-bit C1 byte outside any character.
func needsParse(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b, r >= 0x80 && r <= 0x9f:
			return true
		case r == utf8.RuneError && n == 1 && s[i] >= 0x80 && s[i] <= 0x9f:
			return true
		}
		i += n
	}
	return false
}

// stripLines removes the sequences of each line on its own, so one left open (an OSC without
// its BEL) takes the rest of its line, never the newline and the lines after it.
func stripLines(s string) string {
	if !strings.Contains(s, "\n") {
		return ansi.Strip(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if needsParse(l) {
			lines[i] = ansi.Strip(l)
		}
	}
	return strings.Join(lines, "\n")
}

// clean reports whether s needs no change: valid UTF-8 with no control character but newline
// and tab.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r <= 0x9f || bidiControl(r) {
			return false
		}
		i += n
	}
	return true
}

// Writer cleans every Write on its way to the terminal or file beneath. Each Write is cleaned
// on its own: a sequence split across two writes loses its introducer in the first, and what
// is left of it in the second is plain text.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes Clean(p) and reports all of p as written, so callers such as fmt see no short
// write when control bytes were dropped.
func (w *Writer) Write(p []byte) (int, error) {
	s := string(p)
	if c := Clean(s); c != s {
		if _, err := io.WriteString(w.w, c); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return w.w.Write(p)
}

// bidiControl reports whether r embeds, overrides or isolates text direction, which lets a
// line show its characters in an order other than the one they have. The marks LRM and RLM
// only hint at a direction and stay.
func bidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
