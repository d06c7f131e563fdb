package filetool

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiff_Golden(t *testing.T) {
	cases := []struct {
		name, a, b, want string
		removed, added   int
	}{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n",
			"--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", 1, 1},
		{"context is three lines", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"--- x\n+++ y\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n", 1, 1},
		{"far changes make two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
			"--- x\n+++ y\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n", 2, 2},
		{"near changes share a hunk", "1\n2\n3\n4\n5\n6\n7\n8\n", "one\n2\n3\n4\n5\n6\n7\neight\n",
			"--- x\n+++ y\n@@ -1,8 +1,8 @@\n-1\n+one\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+eight\n", 2, 2},
		{"insert into empty", "", "new\n", "--- x\n+++ y\n@@ -0,0 +1 @@\n+new\n", 0, 1},
		{"delete all", "a\nb\n", "", "--- x\n+++ y\n@@ -1,2 +0,0 @@\n-a\n-b\n", 2, 0},
		{"pure insertion", "a\nb\nc\nd\n", "a\nb\nnew\nc\nd\n", "--- x\n+++ y\n@@ -1,4 +1,5 @@\n a\n b\n+new\n c\n d\n", 0, 1},
		{"missing final newline", "a\nb", "a\nb\n",
			"--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", 1, 1},
		{"deletions before insertions", "keep\nold1\nold2\nkeep2\n", "keep\nnew1\nnew2\nkeep2\n",
			"--- x\n+++ y\n@@ -1,4 +1,4 @@\n keep\n-old1\n-old2\n+new1\n+new2\n keep2\n", 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := unifiedDiff("x", "y", []byte(c.a), []byte(c.b), 1<<20)
			if d.text != c.want {
				t.Errorf("diff =\n%s\nwant\n%s", d.text, c.want)
			}
			if d.removed != c.removed || d.added != c.added || d.coarse || d.truncated {
				t.Errorf("stats = %+v", d)
			}
		})
	}
}

// TestUnifiedDiff_RandomPatchesApply checks on random inputs that every diff, applied as a
// patch to the first text, gives the second, and that it is minimal (by an LCS table).
func TestUnifiedDiff_RandomPatchesApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(strconv.Itoa(rng.IntN(5)) + "\n")
		}
		if rng.IntN(4) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	for i := range 500 {
		a, b := gen(), gen()
		d := unifiedDiff("a", "b", []byte(a), []byte(b), 1<<20)
		got, err := applyPatch(a, d.text)
		if err != nil || got != b {
			t.Fatalf("case %d: patch does not apply (%v)\na=%q\nb=%q\ndiff:\n%s\ngot %q", i, err, a, b, d.text, got)
		}
		la, lb := splitLines(a), splitLines(b)
		if want := len(la) + len(lb) - 2*lcs(la, lb); d.removed+d.added != want {
			t.Fatalf("case %d: %d edits, minimum is %d\n%s", i, d.removed+d.added, want, d.text)
		}
	}
}

func TestUnifiedDiff_CoarseAndTruncated(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d := unifiedDiff("x", "y", []byte(a.String()), []byte(b.String()), 1<<20)
	if !d.coarse || d.removed != 3000 || d.added != 3000 {
		t.Errorf("coarse = %v, removed %d, added %d", d.coarse, d.removed, d.added)
	}
	if got, err := applyPatch(a.String(), d.text); err != nil || got != b.String() {
		t.Errorf("coarse patch does not apply: %v", err)
	}
	d = unifiedDiff("x", "y", []byte(a.String()), []byte(b.String()), 500)
	if !d.truncated || len(d.text) > 500 || !strings.HasPrefix(d.text, "--- x\n+++ y\n@@ -1,3000 +1,3000 @@\n-a0\n") {
		t.Errorf("truncated diff (%d bytes, truncated %v):\n%s", len(d.text), d.truncated, d.text)
	}
	long := strings.Repeat("é", 800) + "\n"
	d = unifiedDiff("x", "y", []byte(long), []byte("short\n"), 1<<20)
	if !strings.Contains(d.text, "[... line clipped, 1600 bytes in all]") || strings.Count(d.text, "é") != maxDiffLineLen/2 {
		t.Errorf("long line not clipped at a rune boundary:\n%s", d.text)
	}
}

// applyPatch applies a unified diff to a, checking the context and removed lines.
func applyPatch(a, patch string) (string, error) {
	src := splitLines(a)
	lines := splitLines(patch)
	var out []string
	pos := 0
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "@@ ") {
			return "", fmt.Errorf("line %d: want a hunk header, got %q", i, l)
		}
		var s1, c1, s2, c2 int
		r1, r2, _ := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(l, " @@\n"), "@@ -"), " +")
		parse := func(r string, s, c *int) {
			x, y, ok := strings.Cut(r, ",")
			*s, _ = strconv.Atoi(x)
			*c = 1
			if ok {
				*c, _ = strconv.Atoi(y)
			}
		}
		parse(r1, &s1, &c1)
		parse(r2, &s2, &c2)
		start := s1 - 1
		if c1 == 0 {
			start = s1
		}
		out = append(out, src[pos:start]...)
		pos = start
		if want := s2 - 1 + boolInt(c2 == 0); len(out) != want {
			return "", fmt.Errorf("line %d: hunk starts at line %d of the result, header says %d", i, len(out)+1, want+1)
		}
		n1, n2 := 0, 0
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "@@ ") {
			i++
			kind, body := lines[i][0], lines[i][1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			n1 += boolInt(kind != '+')
			n2 += boolInt(kind != '-')
			switch kind {
			case ' ', '-':
				if pos >= len(src) || src[pos] != body {
					return "", fmt.Errorf("line %d: %q does not match the source", i, body)
				}
				if kind == ' ' {
					out = append(out, body)
				}
				pos++
			case '+':
				out = append(out, body)
			default:
				return "", fmt.Errorf("line %d: unexpected %q", i, lines[i])
			}
		}
		if n1 != c1 || n2 != c2 {
			return "", fmt.Errorf("hunk %q holds %d and %d lines", l, n1, n2)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}
