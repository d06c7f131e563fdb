package runlog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTable_Golden(t *testing.T) {
	golden(t, "table.golden", []byte(FormatTable(session().events)))
}

func TestTable_Widths(t *testing.T) {
	lines := strings.Split(FormatTable(session().events), "\n")
	width := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "|") {
			continue
		}
		n := len([]rune(l))
		if width == 0 {
			width = n
		}
		if n != width {
			t.Errorf("line is %d runes wide, want %d: %q", n, width, l)
		}
	}
}

func TestTable_Empty(t *testing.T) {
	if got := FormatTable(nil); got != "" {
		t.Errorf("table of no events = %q", got)
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		in   string
		w    int
		want []string
	}{
		{"", 5, nil},
		{"a b c", 5, []string{"a b c"}},
		{"hello world", 5, []string{"hello", "world"}},
		{"abcdefghij k", 4, []string{"abcd", "efgh", "ij k"}},
		{"line\none\ttab", 20, []string{"line one tab"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, wrap(tt.in, tt.w)); diff != "" {
			t.Errorf("wrap(%q, %d) (-want +got):\n%s", tt.in, tt.w, diff)
		}
	}
}
