package tool

import (
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	for _, in := range []string{"", "  ", "null", "{}"} {
		if p, bad := ParseArgs("t", in); bad != "" || p == nil || len(p) != 0 {
			t.Errorf("ParseArgs(%q) = %v, %q", in, p, bad)
		}
	}
	if _, bad := ParseArgs("mcp__a__b", `{"x":`); !strings.Contains(bad, "invalid arguments for mcp__a__b") {
		t.Errorf("bad = %q", bad)
	}
	if _, bad := ParseArgs("t", `"str"`); bad == "" {
		t.Error("a JSON string was accepted")
	}
}
