package mdterm

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"massgen/internal/termtext"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestRender_Golden renders each Markdown file in testdata at a narrow, a middling and a wide
// width and compares the text, styles stripped, with its golden file. No line may be wider
// than the width.
func TestRender_Golden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in testdata: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, w := range []int{20, 40, 80} {
				out := Render(string(src), w)
				fmt.Fprintf(&got, "=== width %d\n", w)
				for i, l := range strings.Split(out, "\n") {
					if n := ansi.StringWidth(l); n > w {
						t.Errorf("width %d: line %d is %d cells wide: %q", w, i, n, l)
					}
					if strings.HasSuffix(ansi.Strip(l), " ") {
						t.Errorf("width %d: line %d ends in a space: %q", w, i, l)
					}
					got.WriteString(ansi.Strip(l) + "\n")
				}
			}
			golden(t, filepath.Join("testdata", name+".golden"), got.String())
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run go test -update after checking):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestRender_Styles checks the SGR sequences each construct is given.
func TestRender_Styles(t *testing.T) {
	cases := []struct {
		md, want string
	}{
		{"**bold**", "\x1b[1mbold\x1b[m"},
		{"*it* and _it_", "\x1b[3mit\x1b[m and \x1b[3mit\x1b[m"},
		{"***both***", "\x1b[1;3mboth\x1b[m"},
		{"~~gone~~", "\x1b[9mgone\x1b[m"},
		{"run `go vet`", "run \x1b[36mgo vet\x1b[m"},
		{"**a `b` c**", "\x1b[1ma \x1b[m\x1b[1;36mb\x1b[m\x1b[1m c\x1b[m"},
		{"# Title words", "\x1b[1;4mTitle words\x1b[m"},
		{"## Sub", "\x1b[1mSub\x1b[m"},
		{"[Go](https://go.dev)", "Go (\x1b[4mhttps://go.dev\x1b[m)"},
		{"[https://go.dev](https://go.dev)", "https://go.dev"},
		{"<https://go.dev>", "\x1b[4mhttps://go.dev\x1b[m"},
		{"*a **b** c*", "\x1b[3ma \x1b[m\x1b[1;3mb\x1b[m\x1b[3m c\x1b[m"},
		{"**unclosed", "**unclosed"},
		{"snake_case_name", "snake_case_name"},
		{"~5 minutes", "~5 minutes"},
	}
	for _, c := range cases {
		if got := Render(c.md, 80); got != c.want {
			t.Errorf("Render(%q) = %q, want %q", c.md, got, c.want)
		}
	}
}

// TestRender_Blocks checks the plain layout of each kind of block at width 30.
func TestRender_Blocks(t *testing.T) {
	cases := []struct {
		name, md, want string
	}{
		{"soft break is a space", "one\ntwo", "one two"},
		{"hard break", "one  \ntwo", "one\ntwo"},
		{"bullets", "- a\n- b", "• a\n• b"},
		{"numbers", "2. a\n3. b", "2. a\n3. b"},
		{"tasks", "- [ ] a\n- [x] b", "[ ] a\n[✓] b"},
		{"hanging indent", "- aaaa bbbb cccc dddd eeee ffff gggg", "• aaaa bbbb cccc dddd eeee\n  ffff gggg"},
		{"nested", "- a\n  - b", "• a\n  • b"},
		{"loose", "- a\n\n- b", "• a\n\n• b"},
		{"rule", "---", strings.Repeat("─", 30)},
		{"quote", "> a\n> b", "│ a b"},
		{"fenced code", "```go\nx := 1\n```", "  x := 1"},
		{"indented code", "    x := 1", "  x := 1"},
		{"long code is cut, not wrapped at words", "```\n" + strings.Repeat("x", 35) + "\n```", "  " + strings.Repeat("x", 28) + "\n  xxxxxxx"},
		{"table", "| a | bb |\n|---|--:|\n| ccc | d |", "a   │ bb\n────┼───\nccc │  d"},
		{"paragraph then list", "Steps:\n- a", "Steps:\n\n• a"},
		{"headings apart", "# A\ntext", "A\n\ntext"},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ansi.Strip(Render(c.md, 30)); got != c.want {
				t.Errorf("Render(%q) =\n%s\nwant\n%s", c.md, got, c.want)
			}
		})
	}
}

// FuzzRender: any input, cleaned as the live view cleans model output, renders without
// panicking, and no line is wider than the width.
func FuzzRender(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.md"))
	for _, name := range files {
		if src, err := os.ReadFile(name); err == nil {
			f.Add(string(src), 20)
		}
	}
	for _, s := range []string{"**", "*a **b* c**", "[a](", "[[a](b)](c)", "> > - [ ] `x", "|a|\n|-|\n|b|c|", "1.\n2)", "<a@b.c>", "&#0;&#x110000;", "\t- a\n\t\t- b"} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, md string, w int) {
		w = w%200 + 1
		if w < 0 {
			w = -w
		}
		out := Render(termtext.Clean(md), w)
		for i, l := range strings.Split(out, "\n") {
			if n := ansi.StringWidth(l); n > max(w, MinWidth) {
				t.Errorf("width %d: line %d is %d cells wide: %q", w, i, n, l)
			}
		}
	})
}
