package cliagent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/provider"
)

func TestOlder(t *testing.T) {
	for _, tc := range []struct {
		have, want string
		older      bool
	}{
		{"2.0.99", "2.1.0", true},
		{"2.1.0", "2.1.0", false},
		{"2.1.332", "2.1.0", false},
		{"0.170.9", "0.171.0", true},
		{"1.0.0", "0.61.0", false},
		{"codex-cli 0.9.0", "0.171.0", true},
	} {
		if got := older(tc.have, tc.want); got != tc.older {
			t.Errorf("older(%q, %q) = %v, want %v", tc.have, tc.want, got, tc.older)
		}
	}
}

// A CLI older than massgen needs is a fatal turn error naming the version needed; the binary
// is asked once per run, however many runs start.
func TestVersionTooOld(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	bin := filepath.Join(dir, "claude")
	script := "#!/bin/sh\necho x >> " + count + "\necho '1.0.3 (Claude Code)'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Type: "claude_code", APIKey: "sk-test", Binary: bin, PathEnv: os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	a.Bind(Workspace{Dir: ws}, filepath.Join(dir, "state"))
	for range 2 {
		_, err = collect(t, a, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "hi"}}})
		var pe *provider.Error
		if !errors.As(err, &pe) || !pe.Fatal || !strings.Contains(err.Error(), "1.0.3") ||
			!strings.Contains(err.Error(), "@anthropic-ai/claude-code 2.1.0 or later") {
			t.Fatalf("err = %v, want a fatal error naming 1.0.3 and the version needed", err)
		}
	}
	raw, _ := os.ReadFile(count)
	if n := strings.Count(string(raw), "x"); n != 1 {
		t.Errorf("--version ran %d times, want once", n)
	}
}

// The npm-installed CLIs' versions come from their package.json, without starting them.
func TestPackageVersion(t *testing.T) {
	for _, tc := range cliCases {
		bin := needCLI(t, tc.bin)
		fl := flavours[tc.typ]
		if v := packageVersion(bin, fl.npm); v == "" || older(v, fl.minVersion) {
			t.Errorf("%s: package version %q, want %s or later", tc.typ, v, fl.minVersion)
		}
	}
}
