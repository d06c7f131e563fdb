package rule

import (
	"slices"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true}, {"*", "a/b/c", true}, {"git push --force*", "git push --force origin main", true},
		{"git push --force*", "git push origin", false}, {"/etc/**", "/etc/passwd", true}, {"/etc/*", "/etc/ssl/certs", true},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"[ab]x", "bx", true}, {"[!ab]x", "bx", false}, {"[a-c]", "b", true},
		{"[]]", "]", true}, {"[", "[", true}, {"*.go", "main.go", true}, {"*.go", "main.golang", false},
		{"GIT*", "git status", false}, {"a*b*c", "aXbYbZc", true}, {"a*b*c", "aXbY", false}, {"日本*", "日本語", true},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, action, pattern, err string }{
		{"command(git push --force*)", "command", "git push --force*", ""},
		{"  read_url  ", "read_url", "*", ""},
		{"*(*secret*)", "*", "*secret*", ""},
		{"mcp(linear/*)", "mcp", "linear/*", ""},
		{"write_file()", "write_file", "", ""},
		{"command((x))", "command", "(x)", ""},
		{"shell(ls)", "", "", `unknown action "shell"`},
		{"command(ls", "", "", "no closing parenthesis"},
		{"(ls)", "", "", "does not start with an action"},
		{"", "", "", "empty"},
		{"read_file([abc)", "", "", "never closed"},
		{strings.Repeat("x", MaxLen+1), "", "", "at most"},
	} {
		r, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %+v, %v; want error %q", tc.in, r, err, tc.err)
			}
			continue
		}
		if err != nil || r.Action != tc.action || r.Pattern != tc.pattern {
			t.Errorf("Parse(%q) = %+v, %v", tc.in, r, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"command(git push*)", "read_url", "*(*)", "write_file([a-", "mcp(a/b)", "x(", "[", "(()"} {
		f.Add(s, "git push origin")
	}
	f.Fuzz(func(t *testing.T, rule, target string) {
		r, err := Parse(rule)
		if err != nil {
			return
		}
		if !slices.Contains(Actions, r.Action) {
			t.Fatalf("Parse(%q) kept action %q", rule, r.Action)
		}
		again, err := Parse(r.String())
		if err != nil || again.Action != r.Action || again.Pattern != r.Pattern {
			t.Fatalf("canonical form %q of %q reads back as %+v, %v", r.String(), rule, again, err)
		}
		_ = r.Matches(r.Action, target)
		if r.Pattern == "*" && !Match(r.Pattern, target) {
			t.Fatal("* did not match")
		}
	})
}
