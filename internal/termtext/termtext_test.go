package termtext

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// attacks are control sequences a model can write into its answer, and what must be left.
var attacks = []struct{ name, in, want string }{
	{"retitle with OSC 0", "a\x1b]0;pwned\x07b", "ab"},
	{"retitle with OSC 2 ended by ST", "a\x1b]2;pwned\x1b\\b", "ab"},
	{"clear the screen", "a\x1b[2Jb", "ab"},
	{"cursor home and erase line", "a\x1b[H\x1b[2Kb", "ab"},
	{"cursor up over earlier output", "ok\x1b[3A\x1b[1Gfake", "okfake"},
	{"clipboard write with OSC 52", "a\x1b]52;c;SGVsbG8=\x07b", "ab"},
	{"hyperlink with OSC 8", "a\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\b", "aclickb"},
	{"colours", "\x1b[31mred\x1b[0m", "red"},
	{"8-bit CSI byte", "a\x9b2Jb", "ab"},
	{"8-bit CSI as a UTF-8 character", "a\u009b2Jb", "ab"},
	{"8-bit OSC as a UTF-8 character", "a\u009d0;pwned\u009cb", "ab"},
	{"DCS string", "a\x1bP+q544e\x1b\\b", "ab"},
	{"APC string", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
	{"PM and SOS strings", "a\x1b^pm\x1b\\b\x1bXsos\x1b\\c", "abc"},
	{"reset terminal (ESC c)", "a\x1bcb", "ab"},
	{"charset switch", "a\x1b(0b", "ab"},
	{"bell, backspace and other C0", "a\a\b\x00\x0e\x7fb", "ab"},
	{"lone CR overwrites the line", "safe\rEVIL", "safeEVIL"},
	{"CR LF", "one\r\ntwo\r\n", "one\ntwo\n"},
	{"C1 characters", "a\u0085\u0084b", "ab"},
	{"invalid UTF-8", "a\xff\xfeb", "a\uFFFD\uFFFDb"},
	{"bidi override reorders a line", "ok \u202eevil\u202c \u2067x\u2069 done", "ok evil x done"},
	{"bidi marks stay", "a\u200eb\u200fc", "a\u200eb\u200fc"},
	{"newline and tab stay", "x\ty\nz", "x\ty\nz"},
	{"unicode stays", "日本語 😀 é €", "日本語 😀 é €"},
	{"unterminated OSC swallows the rest of its line only", "a\x1b]0;pwned\nnext line\n", "a\nnext line\n"},
	{"clean text", "plain text.", "plain text."},
}

func TestClean(t *testing.T) {
	for _, tc := range attacks {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in); got != tc.want {
				t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	n, err := fmt.Fprintf(w, "title %s end\n", "\x1b]0;pwned\x07")
	if err != nil || n != len("title \x1b]0;pwned\x07 end\n") {
		t.Errorf("Fprintf = %d, %v: a dropped byte must not look like a short write", n, err)
	}
	// A sequence split across writes loses its ESC; the rest is harmless text.
	fmt.Fprint(w, "a\x1b")
	fmt.Fprint(w, "[2Jb")
	if got := b.String(); got != "title  end\na[2Jb" {
		t.Errorf("got %q", got)
	}
}

// safe reports what in out a terminal could take as control, or "".
func unsafe(out string) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8"
	}
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || bidiControl(r) {
			return fmt.Sprintf("%U", r)
		}
	}
	return ""
}

// FuzzClean: whatever a model writes, Clean's output holds no ESC, no C1 control (raw 0x9B
// included) and no C0 control other than newline and tab, is valid UTF-8, and clean text comes
// back unchanged.
func FuzzClean(f *testing.F) {
	for _, tc := range attacks {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s)
		if why := unsafe(out); why != "" {
			t.Fatalf("Clean(%q) = %q holds %s", s, out, why)
		}
		// A raw 0x9B byte would be invalid UTF-8 (unsafe says so); inside a character such
		// as Ǜ (C7 9B) it is no CSI.
		if strings.IndexByte(out, 0x1b) >= 0 {
			t.Fatalf("Clean(%q) = %q holds ESC", s, out)
		}
		if unsafe(s) == "" && out != s {
			t.Fatalf("Clean changed clean text %q to %q", s, out)
		}
		if Clean(out) != out {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
	})
}
