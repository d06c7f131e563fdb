// Package frontmatter splits a Markdown file into its YAML front matter (between two ---
// lines at its top) and its body, as skills (SKILL.md) and memory files are written.
package frontmatter

import (
	"bytes"
	"errors"
	"strings"

	"github.com/goccy/go-yaml"
)

// ErrNone is returned by Split for a text that does not start with a --- line.
var ErrNone = errors.New("no YAML front matter: start it with a --- line")

// Split returns text's front matter decoded into meta (a pointer, as yaml.Unmarshal takes),
// and the body after the closing --- line. A byte order mark and CRLF line ends are accepted.
func Split(text []byte, meta any) (body string, err error) {
	s := strings.ReplaceAll(string(bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))), "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return "", ErrNone
	}
	front, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return "", errors.New("the front matter never ends: close it with a --- line")
	}
	if err := yaml.Unmarshal([]byte(front), meta); err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
		return "", errors.New("the front matter is not valid YAML: " + line)
	}
	_, body, _ = strings.Cut(body, "\n") // the rest of the closing line
	return body, nil
}
