package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"massgen/internal/config"
	"massgen/internal/lazy"
)

// atRef is an @path reference in a question (MassGen v0.1.36 syntax): @src/main.py,
// @docs/, @"a file.txt", and @path:w for a path the final presenter may write.
type atRef struct {
	Text  string // as written, @ and :w included
	Path  string
	Write bool
}

// emailInText is MassGen's rule for what is an e-mail address, never a reference: word
// characters, dots and dashes around an @, and a dot and two letters or more after it.
var emailInText = lazy.Regexp(`\b[\w.-]+@[\w.-]+\.[a-zA-Z]{2,}\b`)

// parseAtRefs finds the references in q as MassGen's prompt parser does: an @ not preceded by
// a backslash and not inside an e-mail address, then a quoted path or the shortest run of
// characters other than space, @, : and " that is followed by the end, a space, one of
// ,;!?)}]>: or a sentence-ending period; then an optional :w. So "@a.py." ends at "a.py",
// and "mAP@0.5:0.95" would be the reference "0.5" (--no-parse-at-references is for such text).
func parseAtRefs(q string) []atRef {
	rs := []rune(q)
	inEmail := make([]bool, len(rs))
	for _, m := range emailInText().FindAllStringIndex(q, -1) {
		start, end := len([]rune(q[:m[0]])), len([]rune(q[:m[1]]))
		for k := start; k < end; k++ {
			inEmail[k] = true
		}
	}
	ends := func(k int) bool {
		if k >= len(rs) {
			return true
		}
		c := rs[k]
		return unicode.IsSpace(c) || strings.ContainsRune(",;!?)}]>:", c) || (c == '.' && (k+1 >= len(rs) || unicode.IsSpace(rs[k+1])))
	}
	suffix := func(k int) (int, bool) {
		if k+1 < len(rs) && rs[k] == ':' && rs[k+1] == 'w' && ends(k+2) {
			return k + 2, true
		}
		return k, false
	}
	var refs []atRef
	for i := 0; i < len(rs); i++ {
		if rs[i] != '@' || (i > 0 && rs[i-1] == '\\') || inEmail[i] {
			continue
		}
		start := i + 1
		if start < len(rs) && rs[start] == '"' {
			closing := start + 1
			for closing < len(rs) && rs[closing] != '"' {
				closing++
			}
			if closing < len(rs) && closing > start+1 {
				end, write := suffix(closing + 1)
				if write || ends(end) {
					refs = append(refs, atRef{Text: string(rs[i:end]), Path: string(rs[start+1 : closing]), Write: write})
					i = end - 1
				}
			}
			continue
		}
		for j := start + 1; j <= len(rs); j++ {
			if c := rs[j-1]; unicode.IsSpace(c) || c == '@' || c == ':' || c == '"' {
				break
			}
			end, write := suffix(j)
			if write || ends(j) {
				refs = append(refs, atRef{Text: string(rs[i:end]), Path: string(rs[start:j]), Write: write})
				i = end - 1
				break
			}
		}
	}
	return refs
}

// resolveAtRefs turns references into context paths: ~ is the home folder, a relative path is
// taken from dir, a trailing slash is dropped. Every reference must exist; the error names
// each one that does not.
func resolveAtRefs(refs []atRef, dir, home string) ([]config.ContextPath, error) {
	var out []config.ContextPath
	var missing []string
	index := map[string]int{}
	for _, r := range refs {
		p := r.Path
		if len(p) > 1 {
			p = strings.TrimRight(p, "/")
		}
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home == "" {
				missing = append(missing, fmt.Sprintf("%s (no home folder to expand ~ in)", r.Text))
				continue
			}
			p = home + p[1:]
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, fmt.Sprintf("%s (%s does not exist)", r.Text, p))
			continue
		}
		if k, dup := index[p]; dup {
			out[k].Write = out[k].Write || r.Write
			continue
		}
		index[p] = len(out)
		out = append(out, config.ContextPath{Path: p, Write: r.Write})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the question refers to files that do not exist: %s. An @path shares a file or folder with the agents: fix the path, write \\@ for a literal @, or pass --no-parse-at-references",
			strings.Join(missing, "; "))
	}
	return out, nil
}

// mergeContextPaths adds paths to the config's own: a path already there keeps its entry, made
// writable if the new one is (as MassGen does for @path:w).
func mergeContextPaths(have, add []config.ContextPath) []config.ContextPath {
	out := append([]config.ContextPath(nil), have...)
	for _, a := range add {
		found := false
		for k := range out {
			if samePath(out[k].Path, a.Path) {
				out[k].Write = out[k].Write || a.Write
				found = true
				break
			}
		}
		if !found {
			out = append(out, a)
		}
	}
	return out
}

// samePath (sessions.go) compares paths as absolute ones.

// unescapeAt turns \@ into @: the escape keeps an @ out of the references, and the agents
// read the question as meant.
func unescapeAt(q string) string { return strings.ReplaceAll(q, `\@`, "@") }
