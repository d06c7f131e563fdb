package provider

import (
	"strings"
	"testing"
)

func TestSearchSummary(t *testing.T) {
	for _, tc := range []struct {
		sources []Source
		want    string
	}{
		{nil, "no sources"},
		{[]Source{{Title: "Paris", URL: "https://p.example"}}, "1 source:\n- Paris <https://p.example>"},
		{[]Source{{URL: "u1"}, {Title: "t2"}, {URL: "u3"}, {URL: "u4"}, {URL: "u5"}}, "5 sources:\n- u1\n- t2\n- u3\n- and 2 more"},
	} {
		if got := SearchSummary(tc.sources); got != tc.want {
			t.Errorf("SearchSummary(%v) = %q, want %q", tc.sources, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	if got := Clip("short", 10); got != "short" {
		t.Errorf("Clip kept %q", got)
	}
	// "é" is two bytes: a cut inside it moves back to the rune's start.
	if got := Clip("abé"+strings.Repeat("x", 10), 3); got != "ab\n... (12 more bytes)" {
		t.Errorf("Clip = %q", got)
	}
}
