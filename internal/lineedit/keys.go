// Package lineedit is the interactive prompt's line editor: a small raw-mode editor with
// history, in the style of linenoise. The key handling is a pure function of the bytes the
// terminal sends (Decoder, Editor), so it is tested without a terminal; Terminal wires it to
// one (unix only; elsewhere Supported is false and the caller reads plain lines).
package lineedit

import "unicode/utf8"

// Kind is what a key does.
type Kind int

// Keys the editor knows. Everything else a terminal can send is decoded and dropped.
const (
	KeyRune       Kind = iota // Rune is printable text
	KeyEnter                  // CR or LF
	KeyBackspace              // DEL or Ctrl-H
	KeyDelete                 // the Delete key
	KeyLeft                   // ← or Ctrl-B
	KeyRight                  // → or Ctrl-F
	KeyWordLeft               // Ctrl-← or Alt-b
	KeyWordRight              // Ctrl-→ or Alt-f
	KeyUp                     // ↑ or Ctrl-P
	KeyDown                   // ↓ or Ctrl-N
	KeyHome                   // Home or Ctrl-A
	KeyEnd                    // End or Ctrl-E
	KeyKillEnd                // Ctrl-K
	KeyKillStart              // Ctrl-U
	KeyKillWord               // Ctrl-W or Alt-Backspace
	KeyClear                  // Ctrl-L
	KeyInterrupt              // Ctrl-C
	KeyEOF                    // Ctrl-D
	KeyPasteStart             // bracketed paste begins (CSI 200~)
	KeyPasteEnd               // bracketed paste ends (CSI 201~)
)

// Key is one decoded key press.
type Key struct {
	Kind Kind
	Rune rune // for KeyRune
}

// maxPending bounds an unfinished escape sequence: a longer one is dropped, whatever it is.
const maxPending = 64

// Decoder turns the bytes a terminal sends into keys. Sequences may be split across Feed
// calls; Flush drops an unfinished one (a lone Esc the user pressed).
type Decoder struct {
	pending []byte
	paste   bool // inside a bracketed paste: newlines are text
	lastCR  bool // the previous pasted byte was CR (CR LF is one line break)
}

// Feed decodes p, calling emit for each complete key.
func (d *Decoder) Feed(p []byte, emit func(Key)) {
	d.pending = append(d.pending, p...)
	for len(d.pending) > 0 {
		n, k, ok := d.next(d.pending)
		if n == 0 { // unfinished: wait for more bytes
			if len(d.pending) > maxPending {
				d.pending = d.pending[:0]
			}
			return
		}
		d.pending = d.pending[n:]
		if ok {
			emit(k)
		}
	}
	d.pending = d.pending[:0]
}

// Pending reports whether an unfinished sequence waits for more bytes.
func (d *Decoder) Pending() bool { return len(d.pending) > 0 }

// Flush drops an unfinished sequence.
func (d *Decoder) Flush() { d.pending = d.pending[:0] }

// next decodes the key at the start of b: the bytes it used (0: unfinished), the key, and
// whether there is a key at all (false for sequences the editor ignores).
func (d *Decoder) next(b []byte) (int, Key, bool) {
	c := b[0]
	if d.paste && c != 0x1b {
		return d.pasted(b)
	}
	switch {
	case c == 0x1b:
		return d.escape(b)
	case c == '\r' || c == '\n':
		return 1, Key{Kind: KeyEnter}, true
	case c == 0x7f || c == 0x08:
		return 1, Key{Kind: KeyBackspace}, true
	case c == '\t':
		return 1, Key{Kind: KeyRune, Rune: ' '}, true
	case c < 0x20:
		k, ok := controls[c]
		return 1, Key{Kind: k}, ok
	case c < utf8.RuneSelf:
		return 1, Key{Kind: KeyRune, Rune: rune(c)}, true
	}
	if !utf8.FullRune(b) {
		return 0, Key{}, false
	}
	r, n := utf8.DecodeRune(b)
	return n, Key{Kind: KeyRune, Rune: r}, printable(r)
}

var controls = map[byte]Kind{
	0x01: KeyHome, 0x02: KeyLeft, 0x03: KeyInterrupt, 0x04: KeyEOF, 0x05: KeyEnd, 0x06: KeyRight,
	0x0b: KeyKillEnd, 0x0c: KeyClear, 0x0e: KeyDown, 0x10: KeyUp, 0x15: KeyKillStart, 0x17: KeyKillWord,
}

// pasted decodes one key of a bracketed paste: line breaks and tabs become spaces, so a
// pasted paragraph is one question, never one question per line.
func (d *Decoder) pasted(b []byte) (int, Key, bool) {
	c := b[0]
	cr := d.lastCR
	d.lastCR = c == '\r'
	switch {
	case c == '\n' && cr:
		return 1, Key{}, false
	case c == '\r' || c == '\n' || c == '\t':
		return 1, Key{Kind: KeyRune, Rune: ' '}, true
	case c < 0x20 || c == 0x7f:
		return 1, Key{}, false
	case c < utf8.RuneSelf:
		return 1, Key{Kind: KeyRune, Rune: rune(c)}, true
	}
	if !utf8.FullRune(b) {
		d.lastCR = cr
		return 0, Key{}, false
	}
	r, n := utf8.DecodeRune(b)
	return n, Key{Kind: KeyRune, Rune: r}, printable(r)
}

// escape decodes a sequence starting with ESC: CSI (ESC [), SS3 (ESC O) or Alt+key.
func (d *Decoder) escape(b []byte) (int, Key, bool) {
	if len(b) < 2 {
		return 0, Key{}, false
	}
	switch b[1] {
	case '[':
		return d.csi(b)
	case 'O':
		if len(b) < 3 {
			return 0, Key{}, false
		}
		k, ok := ss3[b[2]]
		return 3, Key{Kind: k}, ok
	case 'b':
		return 2, Key{Kind: KeyWordLeft}, true
	case 'f':
		return 2, Key{Kind: KeyWordRight}, true
	case 0x7f, 0x08:
		return 2, Key{Kind: KeyKillWord}, true
	case 0x1b: // Esc Esc: the first is a lone Esc
		return 1, Key{}, false
	}
	if b[1] >= utf8.RuneSelf { // Alt+non-ASCII: drop the whole rune
		if !utf8.FullRune(b[1:]) {
			return 0, Key{}, false
		}
		_, n := utf8.DecodeRune(b[1:])
		return 1 + n, Key{}, false
	}
	return 2, Key{}, false
}

var ss3 = map[byte]Kind{'A': KeyUp, 'B': KeyDown, 'C': KeyRight, 'D': KeyLeft, 'H': KeyHome, 'F': KeyEnd}

// csi decodes ESC [ params intermediates final.
func (d *Decoder) csi(b []byte) (int, Key, bool) {
	i := 2
	for i < len(b) && b[i] >= 0x30 && b[i] <= 0x3f {
		i++
	}
	params := string(b[2:i])
	for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
		i++
	}
	if i >= len(b) {
		return 0, Key{}, false
	}
	final := b[i]
	n := i + 1
	if final < 0x40 || final > 0x7e { // not a CSI after all: drop the introducer
		return 2, Key{}, false
	}
	// Modifiers arrive as "1;5" (Ctrl) or "1;3" (Alt).
	word := params == "1;5" || params == "1;3" || params == "5" || params == "3"
	switch final {
	case 'A':
		return n, Key{Kind: KeyUp}, true
	case 'B':
		return n, Key{Kind: KeyDown}, true
	case 'C':
		if word {
			return n, Key{Kind: KeyWordRight}, true
		}
		return n, Key{Kind: KeyRight}, true
	case 'D':
		if word {
			return n, Key{Kind: KeyWordLeft}, true
		}
		return n, Key{Kind: KeyLeft}, true
	case 'H':
		return n, Key{Kind: KeyHome}, true
	case 'F':
		return n, Key{Kind: KeyEnd}, true
	case '~':
		switch params {
		case "1", "7":
			return n, Key{Kind: KeyHome}, true
		case "4", "8":
			return n, Key{Kind: KeyEnd}, true
		case "3":
			return n, Key{Kind: KeyDelete}, true
		case "200":
			d.paste, d.lastCR = true, false
			return n, Key{Kind: KeyPasteStart}, true
		case "201":
			d.paste = false
			return n, Key{Kind: KeyPasteEnd}, true
		}
	}
	return n, Key{}, false
}

// printable reports whether r may go into the line: no control characters (C0, DEL, C1), no
// bidirectional overrides, nothing that would drive the terminal when the line is drawn.
func printable(r rune) bool {
	switch {
	case r == utf8.RuneError, r < 0x20, r >= 0x7f && r < 0xa0:
		return false
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return false
	}
	return true
}
