package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/private"
)

// pathTrouble words what the system call says about a path as what is wrong with it.
func TestPathTrouble(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a file in the way", private.MkdirAll(filepath.Join(file, "logs")), file + " is a file, not a folder"},
		{"missing", func() error { _, err := os.Open(filepath.Join(dir, "nope")); return err }(), filepath.Join(dir, "nope") + " does not exist"},
		{"not a path error", os.ErrClosed, os.ErrClosed.Error()},
	} {
		got := pathTrouble(tc.err)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		for _, leak := range []string{"mkdir ", "lstat ", "open "} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: %q shows the system call", tc.name, got)
			}
		}
	}
}
