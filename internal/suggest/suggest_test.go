package suggest

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"serv", "serve", 1}, {"replya", "replay", 1}, {"sevre", "serve", 1}, {"see", "serve", 2}, {"", "abc", 3},
		{"logs", "logs", 0}, {"dmeo", "demo", 1}, {"café", "cafe", 1}, {"Demo", "demo", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"agents", "agent", "orchestrator", "ui", "timeout_settings", "session_id", "permissions"}
	for _, tc := range []struct{ in, want string }{
		{"agens", "agents"}, {"agnets", "agents"}, {"Agents", "agents"}, {"orchestator", "orchestrator"},
		{"timeout", "timeout_settings"}, // a prefix
		{"x", ""}, {"display", ""}, {"uii", "ui"}, {"", ""},
		{strings.Repeat("agents", 20), ""}, // too long to be a typo
	} {
		if got := Closest(tc.in, keys); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Closest("dmeo", []string{"demo", "personas", "quick_ensemble"}); got != "demo" {
		t.Errorf("Closest(dmeo) = %q, want demo", got)
	}
	if got := Closest("anything", nil); got != "" {
		t.Errorf("no candidates: %q", got)
	}
}

// Typo is stricter than Closest: a word it matches becomes an error rather than a question.
func TestTypo(t *testing.T) {
	cmds := []string{"replay", "serve", "worker", "eval", "mcp", "logs", "resume", "viewer", "version", "man"}
	for _, tc := range []struct{ in, want string }{
		{"serv", "serve"}, {"replya", "replay"}, {"Version", "version"}, {"viewr", "viewer"},
		{"see", ""},       // two edits from serve: a real word
		{"resumable", ""}, // three from resume: Closest would take it, a question must not
		{"versions", "version"},
		{"logsomething", ""}, // no prefixes
		{"hello", ""},
	} {
		if got := Typo(tc.in, cmds); got != tc.want {
			t.Errorf("Typo(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Closest("resumable", cmds); got != "resume" {
		t.Errorf("Closest(resumable) = %q: the test above no longer shows Typo is the stricter", got)
	}
}
