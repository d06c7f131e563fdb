package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// answerMD is a final answer as models write it: list items with line breaks inside (soft
// breaks), a nested list, inline code, headings, a table and a code block whose lines look
// like list items.
const answerMD = "**Paris** is the capital of France.\n\n" +
	"- It lies on the Seine, in the north of the country.\n" +
	"- It has been the seat of government for most of French history; Versailles was the\n" +
	"  royal seat from 1682 to 1789.\n" +
	"- It is France's largest city: about 2.1 million people in the city proper and over\n" +
	"  12 million in the metropolitan area.\n" +
	"  1. Run `go test ./...` before each commit, and read every failure message carefully before changing code.\n" +
	"  2. Keep going.\n\n" +
	"## A table\n\n| city | people |\n|---|---|\n| Paris | 2.1M |\n\n" +
	"### Steps\n\n```\n1. not a list item, but code\n2. nor this, which stays exactly as it is written here in the code block\n```\n\n" +
	"A paragraph with a soft\nbreak.\n"

// TestMarkdown_Golden renders the answer at 80 and 160 columns: soft breaks inside list items
// read as spaces, wrapped item lines hang under the item's text, headings have no #s and inline
// code no backticks, code blocks are left as written.
func TestMarkdown_Golden(t *testing.T) {
	for _, w := range []int{80, 160} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			out, err := renderMarkdown(answerMD, w)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(ansi.Strip(out), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimRight(l, " ")
				if n := ansi.StringWidth(l); n > w {
					t.Errorf("line %d is %d cells wide, over %d: %q", i, n, w, l)
				}
			}
			text := strings.Join(lines, "\n")
			golden(t, fmt.Sprintf("markdown_%d.golden", w), text)
			for _, bad := range []string{"##", "`", "Versailles was the\n"} {
				if strings.Contains(text, bad) {
					t.Errorf("rendered answer holds %q:\n%s", bad, text)
				}
			}
			for _, want := range []string{"\n    1. not a list item, but code\n", "\n    2. nor this, which stays exactly as it is written"} {
				if !strings.Contains(text, want) {
					t.Errorf("code block changed: lacks %q:\n%s", want, text)
				}
			}
		})
	}
	// At 80 columns the long items wrap, under their text.
	out, _ := renderMarkdown(answerMD, 80)
	text := ansi.Strip(out)
	for _, want := range []string{"  • It has been the seat of government for most of French history;\n    Versailles was the royal seat from 1682 to 1789.\n",
		"    1. Run go test ./... before each commit, and read every failure\n       message carefully before changing code.\n"} {
		if !strings.Contains(trimLines(text), want) {
			t.Errorf("no hanging indent: lacks %q:\n%s", want, text)
		}
	}
}

func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
