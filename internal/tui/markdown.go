package tui

import (
	"strings"

	"massgen/internal/mdterm"
)

// docMargin is the indentation of the final answer's blocks under its title.
const docMargin = 2

// renderMarkdown renders the final answer, sanitised, for a window w cells wide: in a column
// four cells narrower than the window (but at least 20 wide), with a margin of docMargin on
// either side. It does not fail; the error is the shape Model.renderMD takes.
func renderMarkdown(md string, w int) (string, error) {
	lines := strings.Split(mdterm.Render(sanitize(md), max(w-4, 20)-2*docMargin), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = strings.Repeat(" ", docMargin) + l
		}
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n") + "\n", nil
}
