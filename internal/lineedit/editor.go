package lineedit

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// Outcome is what a key did to the line being edited.
type Outcome int

// Outcomes of Editor.Handle.
const (
	Editing     Outcome = iota // keep reading keys
	Submitted                  // Enter: Line is the line
	Cleared                    // Ctrl-C on a line with text: the text is gone, the prompt stays
	Hinted                     // Ctrl-C on an empty line: one more leaves
	Interrupted                // a second Ctrl-C in a row on an empty line
	EndOfInput                 // Ctrl-D on an empty line
	ClearScreen                // Ctrl-L
)

// MaxLine is the most runes a line holds; typing beyond it is ignored.
const MaxLine = 1 << 18

// Editor is the line being edited and the history being browsed. It does no I/O: Handle
// applies a key, Render draws the line.
type Editor struct {
	buf   []rune
	pos   int // cursor, 0..len(buf)
	off   int // first rune on screen: long lines scroll sideways
	work  []string
	idx   int // entry of work shown; the last one is the new line
	hints int // Ctrl-C presses in a row on an empty line
}

// NewEditor starts an empty line; history (oldest first) is what ↑ browses. Edits to a
// recalled entry last until the line is submitted, and never change history.
func NewEditor(history []string) *Editor {
	work := make([]string, len(history)+1)
	copy(work, history)
	return &Editor{work: work, idx: len(history)}
}

// Line returns the line as edited so far.
func (e *Editor) Line() string { return string(e.buf) }

// Handle applies one key.
func (e *Editor) Handle(k Key) Outcome {
	if k.Kind != KeyInterrupt {
		e.hints = 0
	}
	switch k.Kind {
	case KeyRune:
		if len(e.buf) < MaxLine {
			e.buf = slices.Insert(e.buf, e.pos, k.Rune)
			e.pos++
		}
	case KeyEnter:
		return Submitted
	case KeyBackspace:
		if e.pos > 0 {
			e.buf = slices.Delete(e.buf, e.pos-1, e.pos)
			e.pos--
		}
	case KeyEOF:
		if len(e.buf) == 0 {
			return EndOfInput
		}
		fallthrough
	case KeyDelete:
		if e.pos < len(e.buf) {
			e.buf = slices.Delete(e.buf, e.pos, e.pos+1)
		}
	case KeyLeft:
		e.pos = max(e.pos-1, 0)
	case KeyRight:
		e.pos = min(e.pos+1, len(e.buf))
	case KeyHome:
		e.pos = 0
	case KeyEnd:
		e.pos = len(e.buf)
	case KeyWordLeft:
		e.pos = e.wordStart()
	case KeyWordRight:
		i := e.pos
		for i < len(e.buf) && unicode.IsSpace(e.buf[i]) {
			i++
		}
		for i < len(e.buf) && !unicode.IsSpace(e.buf[i]) {
			i++
		}
		e.pos = i
	case KeyUp:
		e.browse(e.idx - 1)
	case KeyDown:
		e.browse(e.idx + 1)
	case KeyKillEnd:
		e.buf = e.buf[:e.pos]
	case KeyKillStart:
		e.buf = append([]rune(nil), e.buf[e.pos:]...)
		e.pos, e.off = 0, 0
	case KeyKillWord:
		start := e.wordStart()
		e.buf = slices.Delete(e.buf, start, e.pos)
		e.pos = start
	case KeyClear:
		return ClearScreen
	case KeyInterrupt:
		if len(e.buf) > 0 {
			e.buf, e.pos, e.off, e.hints = nil, 0, 0, 0
			e.idx = len(e.work) - 1
			e.work[e.idx] = ""
			return Cleared
		}
		if e.hints > 0 {
			return Interrupted
		}
		e.hints = 1
		return Hinted
	}
	return Editing
}

// wordStart is where the word before the cursor starts (spaces before it skipped).
func (e *Editor) wordStart() int {
	i := e.pos
	for i > 0 && unicode.IsSpace(e.buf[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(e.buf[i-1]) {
		i--
	}
	return i
}

// browse shows history entry i, keeping the edits made to the one shown so far.
func (e *Editor) browse(i int) {
	if i < 0 || i >= len(e.work) || i == e.idx {
		return
	}
	e.work[e.idx] = string(e.buf)
	e.idx = i
	e.buf = []rune(e.work[i])
	e.pos, e.off = len(e.buf), 0
}

// Render returns what redraws the line on a terminal width columns wide: the prompt and as
// much of the line as fits beside it, scrolled so the cursor shows, the rest of the row
// cleared and the cursor in place. The last column stays free, so the terminal never wraps.
func (e *Editor) Render(prompt string, width int) string {
	pw := ansi.StringWidth(prompt)
	room := max(width-pw-1, 1)
	// Scroll just enough to show the cursor, walking back from it: O(room), whatever the
	// line's length.
	if e.pos < e.off {
		e.off = e.pos
	}
	w, first := 0, e.pos
	for first > e.off {
		rw := runeWidth(e.buf[first-1])
		if w+rw > room {
			break
		}
		w += rw
		first--
	}
	e.off = first
	var b strings.Builder
	b.WriteString("\r")
	b.WriteString(prompt)
	shown, cursor := 0, 0
	for i := e.off; i < len(e.buf); i++ {
		rw := runeWidth(e.buf[i])
		if shown+rw > room {
			break
		}
		if i < e.pos {
			cursor += rw
		}
		shown += rw
		b.WriteRune(e.buf[i])
	}
	b.WriteString("\x1b[K\r")
	if col := pw + cursor; col > 0 {
		b.WriteString("\x1b[" + strconv.Itoa(col) + "C")
	}
	return b.String()
}

// RenderFull returns the prompt and the whole line, for the row the submitted line leaves on
// the screen: the terminal wraps it, so nothing of a long question is hidden.
func (e *Editor) RenderFull(prompt string) string {
	return "\r" + prompt + string(e.buf) + "\x1b[K"
}

func runeWidth(r rune) int { return ansi.StringWidth(string(r)) }
