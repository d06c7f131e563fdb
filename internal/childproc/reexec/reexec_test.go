package reexec

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The stages run before the program's other initialisers only while this package waits for
// no package those need (see the package comment): reflect (encoding/*, fmt, x/sys/unix),
// unicode (bytes, strings), net. A dependency that brings one back fails here, and the probe in
// cmd/massgen's TestStartupMeasures shows what it costs.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	d := json.NewDecoder(strings.NewReader(string(out)))
	allowed := []string{"massgen/internal/childproc/reexec", "massgen/internal/childproc/procfs"}
	for d.More() {
		var p struct {
			ImportPath string
			Standard   bool
		}
		if err := d.Decode(&p); err != nil {
			t.Fatal(err)
		}
		switch {
		case !p.Standard && !slices.Contains(allowed, p.ImportPath):
			t.Errorf("reexec depends on %s: only the standard library and procfs may be", p.ImportPath)
		case slices.Contains([]string{"reflect", "unicode", "net"}, p.ImportPath):
			t.Errorf("reexec depends on %s, so the stages would wait for the packages that need it", p.ImportPath)
		}
	}
}

func TestSetupRoundTrip(t *testing.T) {
	for _, s := range []Setup{
		{},
		{Mode: ModeNS, Path: "/bin/sh", Args: []string{"sh", "-c", "echo 1:2 \n\x01 é"}, Env: []string{"A=1", "", "12:x"},
			Linger: true, UID: 1000, GID: -1, PIDMax: 1 << 20},
		{Mode: ModeTree, Path: "", Args: []string{}, Env: nil},
	} {
		got, err := DecodeSetup(s.Encode())
		if err != nil {
			t.Fatalf("DecodeSetup(Encode(%+v)): %v", s, err)
		}
		if !slices.Equal(got.Args, s.Args) || !slices.Equal(got.Env, s.Env) { // nil and empty alike
			t.Errorf("lists: got %q %q, want %q %q", got.Args, got.Env, s.Args, s.Env)
		}
		got.Args, got.Env, s.Args, s.Env = nil, nil, nil, nil
		if !reflect.DeepEqual(got, s) {
			t.Errorf("got %+v, want %+v", got, s)
		}
	}
	spec := SandboxSpec{Path: "/usr/bin/a b:c", Linger: true, Tools: true, NProc: 1, FSize: 1 << 40, CPU: 3, AS: 1<<64 - 1}
	if got, err := DecodeSandboxSpec(spec.Encode()); err != nil || got != spec {
		t.Errorf("DecodeSandboxSpec(Encode(%+v)) = %+v, %v", spec, got, err)
	}
}

// A setup that is cut, padded, or lies about its sizes is an error, never a panic or a huge
// allocation.
func TestDecodeMalformed(t *testing.T) {
	good := Setup{Mode: ModeNS, Path: "/bin/true", Args: []string{"true"}}.Encode()
	bad := []string{
		"", "x", ":", "0", "1:", "-1:a", "99999999999:a", "4294967296:a", "3:ns", "2:ns0:",
		string(good) + "0:", string(good[:len(good)-1]),
		"2:ns0:2:99999999:", // a list of 99999999 strings in a few bytes
		"2:ns0:2:-1",
		"2:ns0:1:01:a1:00:1:x1:01:01:0", // linger "x"
		"2:ns0:1:01:a1:00:1:11:a1:01:0", // uid "a"
	}
	for _, b := range bad {
		if s, err := DecodeSetup([]byte(b)); err == nil {
			t.Errorf("DecodeSetup(%q) = %+v, want an error", b, s)
		}
	}
	for _, b := range []string{"", "1:a1:01:01:0", "1:a1:01:01:01:11:11:11:-1"} {
		if s, err := DecodeSandboxSpec(b); err == nil {
			t.Errorf("DecodeSandboxSpec(%q) = %+v, want an error", b, s)
		}
	}
}
