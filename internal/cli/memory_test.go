package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/memory"
)

func seedStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	st, _, err := memory.Open(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	mems := []memory.Memory{
		{ID: "mem_cat", Text: "The user's cat is called Miso.", Agent: "a", Session: "pets", Turn: 1, Winner: true, Created: now, Model: "openai/m"},
		{ID: "mem_dog", Text: "The user's dog is called Rex.", Agent: "b", Session: "pets", Turn: 1, Created: now.Add(time.Minute), Model: "openai/m"},
		{ID: "mem_trip", Text: "The flight goes to Lisbon \x1b[31mtoday\x1b[0m.", Agent: "a", Session: "trip", Turn: 2, Created: now.Add(2 * time.Minute), Model: "openai/m"},
	}
	vecs := [][]float32{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	if err := st.Add(t.Context(), mems, vecs); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMemoryCommand_ListSearchForget(t *testing.T) {
	dir := seedStore(t)
	code, out, errOut := execute(t, t.Context(), "memory", "list", "--store", dir)
	if code != 0 || strings.Count(out, "\n") != 4 || !strings.Contains(out, "a (winner)") || strings.Contains(out, "\x1b") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = execute(t, t.Context(), "memory", "list", "--store", dir, "--session", "pets", "--json")
	var got []memory.Memory
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got) != 2 || got[0].ID != "mem_cat" {
		t.Fatalf("list --session pets --json: exit %d %v\n%s", code, err, out)
	}
	code, out, _ = execute(t, t.Context(), "memory", "search", "--store", dir, "what", "is", "the", "cat", "called", "--json")
	got = nil
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got) == 0 || got[0].ID != "mem_cat" {
		t.Fatalf("search: exit %d %v\n%s", code, err, out)
	}
	if code, _, errOut := execute(t, t.Context(), "memory", "forget", "--store", dir); code != ExitConfig || !strings.Contains(errOut, "name the memories to forget") {
		t.Errorf("forget with nothing named: exit %d %s", code, errOut)
	}
	if code, out, _ := execute(t, t.Context(), "memory", "forget", "--store", dir, "mem_dog"); code != 0 || out != "1 memories forgotten\n" {
		t.Errorf("forget mem_dog: exit %d %q", code, out)
	}
	if code, out, _ := execute(t, t.Context(), "memory", "forget", "--store", dir, "--agent", "a", "--json"); code != 0 || strings.TrimSpace(out) != `{"forgotten":2}` {
		t.Errorf("forget --agent a: exit %d %q", code, out)
	}
	if code, out, _ := execute(t, t.Context(), "memory", "list", "--store", dir); code != 0 || out != "no memories\n" {
		t.Errorf("after forgetting: exit %d %q", code, out)
	}
}
