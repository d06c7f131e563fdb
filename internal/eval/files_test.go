package eval

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRunDirs(t *testing.T) {
	root := t.TempDir()
	if dir, err := LatestRunDir(root, "data/gsm8k.jsonl"); err != nil || dir != "" {
		t.Fatalf("no runs: %q, %v", dir, err)
	}
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	first := NewRunDir(root, "data/gsm8k.jsonl", now)
	if want := filepath.Join(root, "gsm8k_20261201_093000"); first != want {
		t.Errorf("NewRunDir = %s, want %s", first, want)
	}
	mk := func(name string, results bool) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if results {
			if err := os.WriteFile(filepath.Join(root, name, ResultsFile), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("gsm8k_20261201_093000", true)
	if again := NewRunDir(root, "gsm8k.jsonl", now); again != first+"_2" {
		t.Errorf("NewRunDir in the same second = %s, want %s_2", again, first)
	}
	mk("gsm8k_20261201_093000_2", true)
	mk("gsm8k_20261201_093000_10", true)
	mk("gsm8k_20261130_235959", true)
	mk("gsm8k_20261202_000000", false)     // no results file
	mk("gsm8k_test_20261203_000000", true) // another dataset
	dir, err := LatestRunDir(root, "gsm8k.jsonl")
	if err != nil || dir != filepath.Join(root, "gsm8k_20261201_093000_10") {
		t.Errorf("LatestRunDir = %s, %v; want the _10 run", dir, err)
	}
	if got := DatasetName("my set (v2).jsonl"); got != "my_set_v2_" {
		t.Errorf("DatasetName = %q", got)
	}
}
