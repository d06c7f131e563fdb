package private

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// withUmask runs the test under umask m, the one a user's shell may have (not parallel: the
// umask is the process's).
func withUmask(t *testing.T, m int) {
	old := syscall.Umask(m)
	t.Cleanup(func() { syscall.Umask(old) })
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestModes_WhateverTheUmask(t *testing.T) {
	for _, umask := range []int{0o022, 0o002, 0o000, 0o077} {
		withUmask(t, umask)
		base := t.TempDir()
		if err := os.Chmod(base, 0o755); err != nil {
			t.Fatal(err)
		}
		deep := filepath.Join(base, "a", "b", "c")
		if err := MkdirAll(deep); err != nil {
			t.Fatal(err)
		}
		if err := Mkdir(filepath.Join(deep, "d")); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(filepath.Join(deep, "f"), []byte("x")); err != nil {
			t.Fatal(err)
		}
		root, err := os.OpenRoot(base)
		if err != nil {
			t.Fatal(err)
		}
		if err := MkdirAllIn(root, filepath.Join("r", "s")); err != nil {
			t.Fatal(err)
		}
		root.Close()
		for p, want := range map[string]fs.FileMode{
			base:                          0o755, // existing folders keep their modes
			filepath.Join(base, "a"):      DirMode,
			filepath.Join(base, "a", "b"): DirMode,
			deep:                          DirMode,
			filepath.Join(deep, "d"):      DirMode,
			filepath.Join(deep, "f"):      FileMode,
			filepath.Join(base, "r"):      DirMode,
			filepath.Join(base, "r", "s"): DirMode,
		} {
			if got := mode(t, p); got != want {
				t.Errorf("umask %03o: %s is %v, want %v", umask, p, got, want)
			}
		}
	}
}

func TestOpenFile_TightensAnOlderFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := mode(t, p); got != FileMode {
		t.Errorf("mode %v, want %v", got, FileMode)
	}
}

func TestCopyMode(t *testing.T) {
	for in, want := range map[fs.FileMode]fs.FileMode{0o644: 0o600, 0o755: 0o700, 0o600: 0o600, 0o444: 0o600, 0o711: 0o700} {
		if got := CopyMode(in); got != want {
			t.Errorf("CopyMode(%v) = %v, want %v", in, got, want)
		}
	}
}
