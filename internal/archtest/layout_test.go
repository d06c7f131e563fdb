package archtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// entry is one line of README.md's layout block: a path and the sub-folders its description
// names ("openai/, chat/").
type entry struct {
	path string
	subs []string
}

// TestReadmeLayout keeps README.md's "## Layout" block true: it lists every folder under
// internal/ and nothing that is not there, and the sub-folders it names exist.
func TestReadmeLayout(t *testing.T) {
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := layoutEntries(t, string(readme))
	listed := map[string]bool{}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.path)); err != nil {
			t.Errorf("README.md's layout lists %s, which does not exist", e.path)
		}
		for _, sub := range e.subs {
			if fi, err := os.Stat(filepath.Join(root, e.path, sub)); err != nil || !fi.IsDir() {
				t.Errorf("README.md's layout names %s under %s, which is not a folder there", sub, e.path)
			}
		}
		if rest, ok := strings.CutPrefix(strings.TrimSuffix(e.path, "/"), "internal/"); ok && !strings.Contains(rest, "/") {
			listed[rest] = true
		}
	}
	dirs, err := os.ReadDir(filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !listed[d.Name()] {
			t.Errorf("internal/%s/ is not in README.md's layout: add a line for it", d.Name())
		}
	}
}

// layoutEntries reads the first code block after "## Layout". A line that starts with a path
// is an entry; an indented line goes on describing the entry above it.
func layoutEntries(t *testing.T, readme string) []entry {
	t.Helper()
	_, after, ok := strings.Cut(readme, "\n## Layout\n")
	if !ok {
		t.Fatal(`README.md has no "## Layout" section`)
	}
	_, block, ok := strings.Cut(after, "```\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal(`README.md's "## Layout" section has no code block`)
	}
	var out []entry
	for line := range strings.SplitSeq(block, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		words := strings.Fields(line)
		if !strings.HasPrefix(line, " ") {
			out = append(out, entry{path: words[0]})
			words = words[1:]
		}
		if len(out) == 0 {
			t.Fatalf("README.md's layout block starts with an indented line: %q", line)
		}
		last := &out[len(out)-1]
		for _, w := range words {
			w = strings.TrimRight(w, ",;:.")
			if strings.HasSuffix(w, "/") && w != "/" && !strings.Contains(strings.TrimSuffix(w, "/"), "/") && !slices.Contains(last.subs, w) {
				last.subs = append(last.subs, w)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("README.md's layout block lists nothing")
	}
	return out
}
