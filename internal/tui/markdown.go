package tui

import (
	"reflect"
	"regexp"
	"slices"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"charm.land/lipgloss/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

// renderMarkdown renders the final answer for a window w cells wide: glamour with
// agnosticStyle, then list items re-flowed (hangItems).
func renderMarkdown(md string, w int) (string, error) {
	r, err := glamour.NewTermRenderer(glamour.WithStyles(agnosticStyle()), glamour.WithWordWrap(max(w-4, 20)))
	if err != nil {
		return "", err
	}
	out, err := r.Render(sanitize(md))
	if err != nil {
		return "", err
	}
	return strings.Trim(hangItems(out, docMargin), "\n") + "\n", nil
}

// agnosticStyle is glamour's dark style without its 256-colour palette, so the answer reads
// the same on dark and light terminals: bold, italics, rules and bullets, and inline code in
// the terminal's own cyan. Markdown's markup itself is not shown: headings lose their #s and
// inline code its backticks.
func agnosticStyle() ansi.StyleConfig {
	cfg := styles.DarkStyleConfig
	stripColors(reflect.ValueOf(&cfg).Elem())
	cfg.Code.Prefix, cfg.Code.Suffix = "", ""
	cfg.Code.Color = ptr("6")
	for _, h := range []*ansi.StyleBlock{&cfg.H1, &cfg.H2, &cfg.H3, &cfg.H4, &cfg.H5, &cfg.H6} {
		h.Prefix, h.Suffix = "", ""
	}
	cfg.H1.Underline = ptr(true)
	return cfg
}

// docMargin is the indentation of the document's blocks in agnosticStyle: where top-level
// list items start.
var docMargin = func() int {
	if m := agnosticStyle().Document.Margin; m != nil {
		return int(*m)
	}
	return 0
}()

func ptr[T any](v T) *T { return &v }

// stripColors clears every Color and BackgroundColor field and the Chroma theme of a style
// struct, recursing into nested structs but not through pointers, which may be shared.
func stripColors(v reflect.Value) {
	t := v.Type()
	for i := range v.NumField() {
		f := v.Field(i)
		switch name := t.Field(i).Name; {
		case name == "Color" || name == "BackgroundColor" || name == "Chroma":
			f.SetZero()
		case name == "Theme" && f.Kind() == reflect.String:
			f.SetString("")
		case f.Kind() == reflect.Struct:
			stripColors(f)
		}
	}
}

// itemStart matches the start of a rendered list item: its indentation and its marker (the
// bullet, the number or the task box agnosticStyle gives it).
var itemStart = regexp.MustCompile(`^( *)(• |\d{1,9}\. |\[[ x✓]\] )`)

// hangItems re-flows the list items of glamour's output. Glamour keeps the line breaks of the
// source inside an item (a Markdown soft break, which should read as a space) and wraps each
// of its lines on its own, so an item reads as ragged lines, and it starts wrapped lines under
// the bullet instead of under the text. Here an item's lines are joined and wrapped again to
// the same width, the wrapped lines indented under the item's text (a hanging indent). An
// item is a line with a marker; its lines are those that follow at the marker's indentation,
// up to a blank line or the next item. Items start at margin (the document's) or nested under
// one, so code blocks and tables (indented further, or framed) are left alone.
func hangItems(out string, margin int) string {
	lines := strings.Split(out, "\n")
	res := make([]string, 0, len(lines))
	var open []int // indentations of the items of the list being read, outermost first
	for i := 0; i < len(lines); {
		plain := xansi.Strip(lines[i])
		m := itemStart.FindStringSubmatch(plain)
		indent := -1
		if m != nil {
			indent = len(m[1])
		}
		nested := len(open) > 0 && (indent > open[len(open)-1] || slices.Contains(open, indent))
		if m == nil || (indent != margin && !nested) {
			if body := strings.TrimLeft(plain, " "); body != "" && len(plain)-len(body) <= margin {
				open = nil // a paragraph at the margin ends the list
			}
			res = append(res, lines[i])
			i++
			continue
		}
		for len(open) > 0 && open[len(open)-1] > indent {
			open = open[:len(open)-1]
		}
		if len(open) == 0 || open[len(open)-1] != indent {
			open = append(open, indent)
		}
		hang := indent + xansi.StringWidth(m[2])
		total := xansi.StringWidth(lines[i])
		text := []string{strings.TrimRight(xansi.TruncateLeft(lines[i], hang, ""), " ")}
		j := i + 1
		for ; j < len(lines); j++ {
			p := xansi.Strip(lines[j])
			body := strings.TrimLeft(p, " ")
			if body == "" || len(p)-len(body) != indent || itemStart.MatchString(p) {
				break
			}
			text = append(text, strings.TrimSpace(xansi.TruncateLeft(lines[j], indent, "")))
		}
		width := max(total-hang, 10)
		wrapped := strings.Split(lipgloss.Wrap(strings.Join(text, " "), width, ""), "\n")
		head := xansi.Cut(lines[i], 0, hang)
		for k, l := range wrapped {
			l = strings.TrimRight(l, " ")
			if k == 0 {
				l = head + l
			} else {
				l = strings.Repeat(" ", hang) + l
			}
			if n := xansi.StringWidth(l); n < total {
				l += strings.Repeat(" ", total-n)
			}
			res = append(res, l)
		}
		i = j
	}
	return strings.Join(res, "\n")
}
