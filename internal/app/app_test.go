package app

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTurnDir_NeverReusesASession(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 30, 1, 2, 3, 456789000, time.UTC)
	s1, d1, err := turnDir(root, "", 1, now)
	if err != nil {
		t.Fatal(err)
	}
	s2, d2, err := turnDir(root, "", 1, now)
	if err != nil {
		t.Fatal(err)
	}
	if s1 != "log_20261130_010203_456789" || s2 != s1+"_2" || d1 == d2 {
		t.Fatalf("sessions %q %q, dirs %q %q", s1, s2, d1, d2)
	}
	// A later turn goes into the same session folder; the same turn twice is refused.
	_, d3, err := turnDir(root, s1, 2, now)
	if err != nil || d3 != filepath.Join(root, s1, "turn_2") {
		t.Fatalf("turn 2: %q %v", d3, err)
	}
	if _, _, err := turnDir(root, s1, 2, now); err == nil {
		t.Fatal("turn_2 created twice")
	}
}

func TestLoadDotEnv_Precedence(t *testing.T) {
	work, home := t.TempDir(), t.TempDir()
	t.Chdir(work)
	t.Setenv("HOME", home)
	t.Setenv("MG_A_API_KEY", "from-env")
	os.Unsetenv("MG_B_API_KEY")
	os.Unsetenv("MG_C_API_KEY")
	t.Cleanup(func() { os.Unsetenv("MG_B_API_KEY"); os.Unsetenv("MG_C_API_KEY") })
	if err := os.WriteFile(".env", []byte("MG_A_API_KEY=from-dotenv\nMG_B_API_KEY=from-dotenv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".massgen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".massgen", ".env"), []byte("MG_B_API_KEY=from-home\nMG_C_API_KEY=from-home\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	if err := LoadDotEnv(&warn); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"MG_A_API_KEY": "from-env", "MG_B_API_KEY": "from-dotenv", "MG_C_API_KEY": "from-home"} {
		if got := os.Getenv(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if warn.Len() > 0 {
		t.Errorf("keys alone drew a warning: %s", warn.String())
	}
}
