package permission

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPathRefusal: deny wins, allow lets through, and an ask rule refuses only what the named
// path does not match (the gate already asked about that).
func TestPathRefusal(t *testing.T) {
	const ws = "/w/agent"
	p, err := NewPolicy(Config{Deny: []string{"read_file(proj/private/**)", "write_file(/etc/**)"},
		Allow: []string{"read_file(proj/ask/ok.txt)"}, Ask: []string{"read_file(proj/ask/**)"}}, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		write       bool
		abs, named  string
		wantRefusal bool
	}{
		{false, "/w/agent/proj/private/k", "/w/agent/proj", true},
		{false, "/w/agent/proj/private/k", "/w/agent/proj/private/k", true},
		{true, "/w/agent/proj/private/k", "/w/agent/proj", false}, // a read denial does not stop writes
		{true, "/etc/passwd", "/w/agent/link", true},
		{false, "/etc/passwd", "/w/agent/link", false},
		{false, "/w/agent/proj/ask/x", "/w/agent/proj", true},
		{false, "/w/agent/proj/ask/x", "/w/agent/proj/ask/x", false},
		{false, "/w/agent/proj/ask/ok.txt", "/w/agent/proj", false},
		{false, "/w/agent/proj/public", "/w/agent/proj", false},
	} {
		if got := p.PathRefusal(tc.write, tc.abs, tc.named); (got != "") != tc.wantRefusal {
			t.Errorf("PathRefusal(%v, %s, %s) = %q; want a refusal: %v", tc.write, tc.abs, tc.named, got, tc.wantRefusal)
		}
	}
}

// TestPathRefusal_RuleWrittenThroughALink: a rule naming a folder through a symbolic link
// matches the resolved paths the workspace checks.
func TestPathRefusal_RuleWrittenThroughALink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "data", "proj")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "data"), filepath.Join(base, "home")); err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(Config{Deny: []string{"read_file(" + filepath.Join(base, "home", "proj", "private") + "/**)"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.PathRefusal(false, filepath.Join(real, "private", "k"), filepath.Join(real, "private", "k")) == "" {
		t.Error("the resolved path escaped a rule written through a link")
	}
}
