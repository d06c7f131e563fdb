package lineedit

import (
	"strings"
	"testing"
)

// edit types input into a fresh editor and returns the line and the last outcome.
func edit(history []string, input string) (string, Outcome, *Editor) {
	e := NewEditor(history)
	out := Editing
	var d Decoder
	d.Feed([]byte(input), func(k Key) {
		if out == Editing || out == Cleared || out == Hinted || out == ClearScreen {
			out = e.Handle(k)
		}
	})
	return e.Line(), out, e
}

func TestEditor_Keys(t *testing.T) {
	const (
		left, right, home, end = "\x1b[D", "\x1b[C", "\x1b[H", "\x1b[F"
		up, down, del          = "\x1b[A", "\x1b[B", "\x1b[3~"
		ctrlA, ctrlE, ctrlK    = "\x01", "\x05", "\x0b"
		ctrlU, ctrlW, bs       = "\x15", "\x17", "\x7f"
	)
	history := []string{"first question", "second question"}
	tests := []struct {
		name, input, want string
		outcome           Outcome
	}{
		{"typing", "hello\r", "hello", Submitted},
		{"backspace", "helo" + bs + "lo\r", "hello", Submitted},
		{"backspace at start does nothing", home + bs + "x\r", "x", Submitted},
		{"left and insert", "hllo" + left + left + left + "e\r", "hello", Submitted},
		{"right past the end stays", "ab" + right + right + "c\r", "abc", Submitted},
		{"home and end", "bc" + home + "a" + end + "d\r", "abcd", Submitted},
		{"ctrl-a and ctrl-e", "bc" + ctrlA + "a" + ctrlE + "d\r", "abcd", Submitted},
		{"delete under the cursor", "abxc" + left + left + del + "\r", "abc", Submitted},
		{"ctrl-d deletes inside a line", "abxc" + left + left + "\x04\r", "abc", Submitted},
		{"ctrl-k kills to the end", "keep this" + left + left + left + left + ctrlK + "\r", "keep ", Submitted},
		{"ctrl-u kills to the start", "drop keep" + left + left + left + left + ctrlU + "\r", "keep", Submitted},
		{"ctrl-w kills the word before", "one two  " + ctrlW + "three\r", "one three", Submitted},
		{"word moves", "one two three" + "\x1b[1;5D\x1b[1;5D" + "X" + "\x1b[1;5C" + "Y\r", "one XtwoY three", Submitted},
		{"up recalls the newest", up + "\r", "second question", Submitted},
		{"up twice recalls older", up + up + "\r", "first question", Submitted},
		{"up past the oldest stays", up + up + up + "\r", "first question", Submitted},
		{"down returns to the new line", "draft" + up + down + "\r", "draft", Submitted},
		{"edits to a recalled entry survive browsing", up + " (edited)" + up + down + "\r", "second question (edited)", Submitted},
		{"ctrl-p and ctrl-n", "\x10\x10\x0e\r", "second question", Submitted},
		{"ctrl-c clears a line with text", "oops\x03", "", Cleared},
		{"ctrl-c then typing goes on", "oops\x03fine\r", "fine", Submitted},
		{"ctrl-c on an empty line hints", "\x03", "", Hinted},
		{"ctrl-c twice on an empty line interrupts", "\x03\x03", "", Interrupted},
		{"ctrl-c, key, ctrl-c does not", "\x03a" + bs + "\x03", "", Hinted},
		{"clearing then ctrl-c twice", "text\x03\x03\x03", "", Interrupted},
		{"ctrl-d on an empty line ends", "\x04", "", EndOfInput},
		{"ctrl-l", "ab\x0c", "ab", ClearScreen},
		{"pasted lines are one", "\x1b[200~line one\nline two\x1b[201~\r", "line one line two", Submitted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, out, _ := edit(history, tc.input)
			if got != tc.want || out != tc.outcome {
				t.Errorf("line %q outcome %d, want %q %d", got, out, tc.want, tc.outcome)
			}
		})
	}
}

func TestEditor_HistoryIsNotModified(t *testing.T) {
	history := []string{"a", "b"}
	edit(history, "\x1b[Axyz\x1b[A\r")
	if history[0] != "a" || history[1] != "b" {
		t.Errorf("history changed: %q", history)
	}
}

func TestEditor_MaxLine(t *testing.T) {
	e := NewEditor(nil)
	for range MaxLine + 10 {
		e.Handle(Key{Kind: KeyRune, Rune: 'x'})
	}
	if n := len([]rune(e.Line())); n != MaxLine {
		t.Errorf("line of %d runes, want %d", n, MaxLine)
	}
}

func TestEditor_Render(t *testing.T) {
	tests := []struct {
		name, input string
		width       int
		want        string
	}{
		{"short line, cursor at the end", "hello", 40, "\r> hello\x1b[K\r\x1b[7C"},
		{"cursor moved left", "hello\x1b[D\x1b[D", 40, "\r> hello\x1b[K\r\x1b[5C"},
		{"empty line", "", 40, "\r> \x1b[K\r\x1b[2C"},
		// 20 columns: prompt 2, one kept free, 17 for text; the end of a long line shows.
		{"long line scrolls to the cursor", "abcdefghijklmnopqrstuvwxyz", 20, "\r> jklmnopqrstuvwxyz\x1b[K\r\x1b[19C"},
		{"back to the start shows the start", "abcdefghijklmnopqrstuvwxyz\x01", 20, "\r> abcdefghijklmnopq\x1b[K\r\x1b[2C"},
		{"wide runes count twice", "日本語", 40, "\r> 日本語\x1b[K\r\x1b[8C"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, e := edit(nil, tc.input)
			if got := e.Render("> ", tc.width); got != tc.want {
				t.Errorf("Render = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEditor_RenderNeverExceedsTheWidth(t *testing.T) {
	_, _, e := edit(nil, strings.Repeat("wide 日本 ", 40)+"\x1b[1;5D\x1b[1;5D\x1b[D")
	for _, w := range []int{10, 20, 33, 80} {
		r := e.Render("User: ", w)
		text := strings.TrimPrefix(r[:strings.Index(r, "\x1b[K")], "\r")
		if got := runeWidthOf(text); got > w-1 {
			t.Errorf("width %d: drew %d columns: %q", w, got, text)
		}
	}
}

func runeWidthOf(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}
