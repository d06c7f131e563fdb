package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestWrapLines(t *testing.T) {
	cases := []struct {
		in   string
		w    int
		want []string
	}{
		{"", 10, nil},
		{"hello world", 20, []string{"hello world"}},
		{"hello world", 5, []string{"hello", "world"}},
		{"hello   world", 13, []string{"hello   world"}},
		{"hello   world", 12, []string{"hello", "world"}},
		{"  indented text here", 12, []string{"  indented", "text here"}},
		{"a\n\nb\n", 5, []string{"a", "", "b"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"go 世界世界 ok", 4, []string{"go", "世界", "世界", "ok"}},
		{"tab\there", 20, []string{"tab    here"}},
		{"x \x1b[31mred\x1b[0m", 20, []string{"x red"}},
		// A raw 8-bit CSI byte (no ESC) is a control sequence to some terminals.
		{"a\x9b2Jb", 20, []string{"ab"}},
	}
	for _, c := range cases {
		if got := wrapLines(c.in, c.w); !slices.Equal(got, c.want) {
			t.Errorf("wrapLines(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

// TestWrapLines_Properties: no line is wider than w and no word is lost, for many widths.
func TestWrapLines_Properties(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; 素早い茶色の狐 supercalifragilisticexpialidocious.\n", 5)
	for w := 1; w < 60; w++ {
		lines := wrapLines(text, w)
		for _, l := range lines {
			if ansi.StringWidth(l) > w && ansi.StringWidth(l) > 2 {
				t.Fatalf("w=%d: line %q is %d cells", w, l, ansi.StringWidth(l))
			}
		}
		got := strings.Join(strings.Fields(strings.Join(lines, "")), "")
		want := strings.Join(strings.Fields(text), "")
		if got != want {
			t.Fatalf("w=%d: text changed:\n%q\n%q", w, got, want)
		}
	}
}

// naturalText is deterministic text of paragraphs of random words, the last one long.
func naturalText(paragraphs, lastWords int) string {
	vocab := strings.Fields("Spend the first week on the language itself: types, slices, maps, interfaces and errors as values; then goroutines, channels, context.Context, errgroup and a small HTTP service.")
	var b strings.Builder
	x := uint32(1)
	for p := range paragraphs + 1 {
		words := 20 + int(x>>24)%300
		if p == paragraphs {
			words = lastWords
		}
		for range words {
			x = x*1664525 + 1013904223 // a fixed pseudo-random walk through the words
			b.WriteString(vocab[x>>16%uint32(len(vocab))] + " ")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestTailLines: the tail of a long text wraps exactly like the whole text.
func TestTailLines(t *testing.T) {
	for _, text := range []string{naturalText(100, 50), naturalText(100, 2000), naturalText(0, 100) + "\n\n"} {
		for w := 8; w < 120; w += 7 {
			all := wrapLines(text, w)
			for _, n := range []int{1, 5, 30} {
				if got, want := tailLines(text, w, n), last(all, n); !slices.Equal(got, want) {
					t.Errorf("w=%d n=%d: tail %q, want %q", w, n, got, want)
				}
			}
		}
	}
}

// TestTailLines_HugeParagraph: past paragraphCap the lines still fit and are the newest text.
func TestTailLines_HugeParagraph(t *testing.T) {
	text := naturalText(0, 10_000) + "THE END"
	for w := 8; w < 120; w += 7 {
		lines := tailLines(text, w, 20)
		if len(lines) != 20 || !strings.HasSuffix(lines[19], "THE END") {
			t.Fatalf("w=%d: %d lines, last %q", w, len(lines), lines[len(lines)-1])
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > w {
				t.Fatalf("w=%d: line %q too wide", w, l)
			}
		}
	}
}
