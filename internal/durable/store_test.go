package durable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workflow ID comes from whoever started the session: no ID, however crafted, names a
// folder outside the store, and two IDs never share one.
func TestStoreKey_StaysInTheStore(t *testing.T) {
	root := t.TempDir()
	store := FolderStore{Dir: filepath.Join(root, "store")}
	seen := map[string]string{}
	for _, wid := range []string{"massgen-log_1-turn-1", "../../etc", "..", "a/b", "/abs", "x\x00y", strings.Repeat("w", 300), "massgen-log_1-turn-1 "} {
		key := StoreKey(wid, "snapshots", "../agent")
		if other, dup := seen[key]; dup {
			t.Errorf("%q and %q share key %s", wid, other, key)
		}
		seen[key] = wid
		p, err := store.path(key)
		if err != nil {
			t.Fatalf("%q: the key StoreKey made is refused: %v", wid, err)
		}
		if rel, err := filepath.Rel(store.Dir, p); err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, string(filepath.Separator)) != 2 {
			t.Errorf("%q: key %s is %s, not three levels inside the store", wid, key, p)
		}
	}
	for _, key := range []string{"../x", "a/../../b", "/etc", "a//b", ""} {
		if _, err := store.path(key); err == nil {
			t.Errorf("key %q was taken: only keys StoreKey makes are", key)
		}
	}
}

// A stored tree keeps no link that leads out of it: what a worker restores from the store
// cannot reach the worker's files.
func TestFolderStore_PutGetLeavesOutEscapingLinks(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "ws")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out": "/etc/passwd", "up": "../../secret", "in": "sub/a.txt"} {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	store := FolderStore{Dir: filepath.Join(root, "store")}
	key := StoreKey("wid", "snapshots", "a")
	if err := store.Put(t.Context(), key, src); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "back")
	if ok, err := store.Get(t.Context(), key, dst); err != nil || !ok {
		t.Fatalf("get: %v, %v", ok, err)
	}
	for name, want := range map[string]bool{"out": false, "up": false, "in": true, "sub/a.txt": true} {
		if _, err := os.Lstat(filepath.Join(dst, name)); (err == nil) != want {
			t.Errorf("%s restored: %v, want %v", name, err == nil, want)
		}
	}
	if err := store.Remove(t.Context(), StoreKey("wid")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := store.Get(t.Context(), key, t.TempDir()); ok {
		t.Error("the session's entries are still there after Remove")
	}
}
