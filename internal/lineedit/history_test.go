package lineedit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHistory_SavesAndReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompt_history")
	h, err := OpenHistory(path, 5)
	if err != nil || len(h.Entries()) != 0 {
		t.Fatalf("new history: %v %q", err, h.Entries())
	}
	for _, l := range []string{"one", "one", "  two  ", "", "three\nwith a newline", "four\x1b[31m"} {
		if err := h.Add(l); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"one", "two", "three with a newline", "four[31m"}
	if diff := cmp.Diff(want, h.Entries()); diff != "" {
		t.Errorf("in memory (-want +got):\n%s", diff)
	}
	again, err := OpenHistory(path, 5)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again.Entries()); diff != "" {
		t.Errorf("reloaded (-want +got):\n%s", diff)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("history file mode: %v %v", info.Mode(), err)
	}
}

func TestHistory_Capped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompt_history")
	var b strings.Builder
	for i := range 25 {
		fmt.Fprintf(&b, "q%d\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	if e := h.Entries(); len(e) != 10 || e[0] != "q15" || e[9] != "q24" {
		t.Fatalf("entries %q", e)
	}
	// Holding more than twice the cap, the file was rewritten to the entries kept.
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != 10 {
		t.Errorf("file holds %d lines after compaction", n)
	}
	for i := range 5 {
		_ = h.Add(fmt.Sprintf("new%d", i))
	}
	if e := h.Entries(); len(e) != 10 || e[9] != "new4" || e[0] != "q20" {
		t.Errorf("after adding: %q", e)
	}
}

func TestHistory_HostileFiles(t *testing.T) {
	dir := t.TempDir()
	// A huge file: only its end is read, and its cut first line is dropped.
	big := filepath.Join(dir, "big")
	line := strings.Repeat("x", 1000) + "\n"
	if err := os.WriteFile(big, []byte("head\n"+strings.Repeat(line, maxHistoryRead/len(line)+10)+"last\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(big, 3)
	if err != nil || len(h.Entries()) != 3 || h.Entries()[2] != "last" {
		t.Errorf("big file: %v, %d entries", err, len(h.Entries()))
	}
	// A folder where the file should be: an error, and a history in memory that still works.
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	h, err = OpenHistory(folder, 3)
	if err == nil {
		t.Error("a folder as history file: no error")
	}
	if err := h.Add("kept"); err != nil || len(h.Entries()) != 1 {
		t.Errorf("in-memory history after a bad file: %v %q", err, h.Entries())
	}
	// No path: memory only.
	h, _ = OpenHistory("", 0)
	if err := h.Add("x"); err != nil || h.Entries()[0] != "x" {
		t.Errorf("memory history: %v", err)
	}
}
