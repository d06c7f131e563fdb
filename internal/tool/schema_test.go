package tool

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		ok         bool
		want       string // the path decoded, or a part of the error
	}{
		{"object", `{"path": "a.txt"}`, true, "a.txt"},
		{"empty is {}", "  ", true, ""},
		{"not JSON", `{bad`, false, `send a JSON object like {"path": "notes.md"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in struct {
				Path string `json:"path"`
			}
			r, ok := Decode(tc.args, &in, `{"path": "notes.md"}`)
			switch {
			case ok != tc.ok:
				t.Fatalf("ok = %v, want %v (%s)", ok, tc.ok, r.Content)
			case ok && in.Path != tc.want:
				t.Errorf("path = %q, want %q", in.Path, tc.want)
			case !ok && (!r.IsError || !strings.Contains(r.Content, tc.want)):
				t.Errorf("result = %+v, want an error containing %q", r, tc.want)
			}
		})
	}
}

func TestQuote_ClipsLongArguments(t *testing.T) {
	if got := Quote("a b"); got != `"a b"` {
		t.Errorf("Quote = %s", got)
	}
	if got := Quote(strings.Repeat("x", 300)); len(got) != 205 || !strings.HasSuffix(got, `..."`) {
		t.Errorf("Quote of 300 bytes = %d bytes: %s", len(got), got)
	}
}
