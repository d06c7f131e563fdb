package durable

import (
	"strings"
	"testing"
)

func TestVersion_Check(t *testing.T) {
	tests := []struct {
		v    Version
		want string // "" when valid
	}{
		{Version{"massgen", "v0.1.0-dev+1a2b3c.4d5e"}, ""},
		{Version{"massgen-prod_2", "2025-06-01"}, ""},
		{Version{"", "v1"}, "needs both --deployment NAME and --build-id ID"},
		{Version{"massgen", ""}, "needs both"},
		{Version{"mass.gen", "v1"}, "cannot contain . or :"},
		{Version{"mass:gen", "v1"}, "cannot contain . or :"},
		{Version{"massgen", "v1:2"}, ""}, // only the deployment name is split
		{Version{"__massgen", "v1"}, "Temporal's own"},
		{Version{"massgen", "__v1"}, "Temporal's own"},
		{Version{"massgen", "v 1"}, "without spaces"},
		{Version{"massgen", "v1\x00"}, "without spaces"},
		{Version{"massgen", `v1"`}, "quotes"},
		{Version{"mass'gen", "v1"}, "quotes"},
		{Version{"massgen", `v1\`}, "backslashes"},
		{Version{strings.Repeat("d", 201), "v1"}, "--deployment is 201 bytes long: at most 200"},
		{Version{"massgen", strings.Repeat("b", 201)}, "--build-id is 201 bytes long"},
	}
	for _, tt := range tests {
		err := tt.v.Check()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tt.v, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: %v, want an error saying %q", tt.v, err, tt.want)
		}
	}
	if !(Version{}).IsZero() || (Version{"a", "b"}).IsZero() {
		t.Error("IsZero")
	}
	if s := (Version{"massgen", "v2"}).String(); s != "massgen:v2" {
		t.Errorf("String %q", s)
	}
}
