package web

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/memory"
)

// seedMemory writes n memories of agent "a" in session "s1" and two of agent "b" in "s2"
// (one holding markup) to a new store, and returns its folder.
func seedMemory(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	st, _, err := memory.Open(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	var mems []memory.Memory
	for i := range n {
		mems = append(mems, memory.Memory{ID: fmt.Sprintf("mem_a%03d", i), Text: fmt.Sprintf("fact %d about the cat", i), Agent: "a", Team: "/t.yaml",
			Session: "s1", Turn: 1, Created: t0.Add(time.Duration(i) * time.Minute), Model: "openai/m"})
	}
	mems = append(mems,
		memory.Memory{ID: "mem_dog", Text: "the dog is called Rex", Agent: "b", Team: "/t.yaml", Session: "s2", Turn: 1, Created: t0.Add(time.Hour), Model: "openai/m", Winner: true},
		memory.Memory{ID: "mem_html", Text: `<img src=x onerror="alert(1)"> the cat likes fish`, Agent: "b", Team: "/t.yaml", Session: "s2", Turn: 2, Created: t0.Add(2 * time.Hour), Model: "openai/m"})
	vecs := make([][]float32, len(mems))
	for i := range vecs {
		vecs[i] = []float32{1, float32(i)}
	}
	if err := st.Add(t.Context(), mems, vecs); err != nil {
		t.Fatal(err)
	}
	return dir
}

type memoryList struct {
	Store     string          `json:"store"`
	Total     int             `json:"total"`
	Memories  []memory.Memory `json:"memories"`
	Truncated bool            `json:"truncated"`
}

func ids(ms []memory.Memory) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return strings.Join(out, ",")
}

// TestMemory_ListSearchForget: the Memory API lists, filters, searches and forgets as
// `massgen memory` does, capped, and refuses what it cannot do with a message saying what to
// send.
func TestMemory_ListSearchForget(t *testing.T) {
	dir := seedMemory(t, 3)
	e := newEnv(t, func(o *Options) { o.MemoryDir = dir })

	l := decode[memoryList](t, e.get("/api/memory"))
	if l.Store != dir || l.Total != 5 || ids(l.Memories) != "mem_a000,mem_a001,mem_a002,mem_dog,mem_html" || l.Truncated {
		t.Errorf("list: %+v", l)
	}
	// Past the limit the newest stay, oldest first.
	if l := decode[memoryList](t, e.get("/api/memory?limit=2")); ids(l.Memories) != "mem_dog,mem_html" || !l.Truncated || l.Total != 5 {
		t.Errorf("limit 2: %+v", l)
	}
	if l := decode[memoryList](t, e.get("/api/memory?session=s2&agent=b")); ids(l.Memories) != "mem_dog,mem_html" {
		t.Errorf("session s2: %+v", l)
	}
	if l := decode[memoryList](t, e.get("/api/memory?team=/other.yaml")); l.Total != 0 || l.Memories == nil {
		t.Errorf("another team: %+v", l)
	}
	s := decode[memoryList](t, e.get("/api/memory?q="+url.QueryEscape("cat fish")))
	if len(s.Memories) != 4 || s.Memories[0].ID != "mem_html" || s.Total != 4 {
		t.Errorf("search: %+v", s)
	}
	if s := decode[memoryList](t, e.get("/api/memory?q=cat&limit=1")); len(s.Memories) != 1 || !s.Truncated {
		t.Errorf("search, limit 1: %+v", s)
	}

	for _, c := range []struct{ path, code string }{
		{"/api/memory?limit=0", "invalid_limit"},
		{"/api/memory?limit=1001", "invalid_limit"},
		{"/api/memory?limit=ten", "invalid_limit"},
		{"/api/memory?agent=" + strings.Repeat("x", maxMemoryParam+1), "invalid_filter"},
		{"/api/memory?q=%01", "invalid_filter"},
		{"/api/memory?session=%ff", "invalid_filter"},
	} {
		wantError(t, e.get(c.path), http.StatusBadRequest, c.code)
	}
	for _, body := range []any{
		map[string]any{},
		map[string]any{"ids": []string{""}},
		map[string]any{"ids": make([]string, maxForgetIDs+1)},
		map[string]any{"agent": "a\x00"},
	} {
		wantError(t, e.post("/api/memory/forget", body), http.StatusBadRequest, "invalid_forget")
	}
	wantError(t, e.post("/api/memory/forget", `{"ids": [`), http.StatusBadRequest, "invalid_json")
	wantError(t, e.do(t.Context(), http.MethodPost, "/api/memory/forget", nil, "Content-Type", "application/x-www-form-urlencoded"),
		http.StatusUnsupportedMediaType, "unsupported_media_type")
	wantError(t, e.post("/api/memory/forget", map[string]any{"all": true}, "Origin", "https://evil.example"), http.StatusForbidden, "cross_origin")
	wantError(t, e.get("/api/memory/forget"), http.StatusNotFound, "unknown_url")
	if l := decode[memoryList](t, e.get("/api/memory")); l.Total != 5 {
		t.Fatalf("a refused forget forgot: %+v", l)
	}

	forget := func(body any) int {
		t.Helper()
		r := e.post("/api/memory/forget", body)
		if r.status != http.StatusOK {
			t.Fatalf("forget %v: %d %s", body, r.status, r.body)
		}
		return decode[map[string]int](t, r)["forgotten"]
	}
	if n := forget(map[string]any{"ids": []string{"mem_dog", "mem_none"}}); n != 1 {
		t.Errorf("forgot %d by id, want 1", n)
	}
	// Ids and filters together: only the ids the filters also select.
	if n := forget(map[string]any{"ids": []string{"mem_html"}, "agent": "a"}); n != 0 {
		t.Errorf("forgot %d of another agent's", n)
	}
	if n := forget(map[string]any{"session": "s1"}); n != 3 {
		t.Errorf("forgot %d of session s1, want 3", n)
	}
	if l := decode[memoryList](t, e.get("/api/memory")); ids(l.Memories) != "mem_html" {
		t.Errorf("left: %+v", l)
	}
	if n := forget(map[string]any{"all": true}); n != 1 {
		t.Errorf("all forgot %d", n)
	}
}

// TestMemory_NoStoreYet: before anything was remembered the list is empty and the store is
// not created by reading it; a forget forgets nothing.
func TestMemory_NoStoreYet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	e := newEnv(t, func(o *Options) { o.MemoryDir = dir })
	if l := decode[memoryList](t, e.get("/api/memory")); l.Total != 0 || len(l.Memories) != 0 {
		t.Errorf("%+v", l)
	}
	if r := e.post("/api/memory/forget", map[string]any{"all": true}); r.status != http.StatusOK || !strings.Contains(string(r.body), `"forgotten":0`) {
		t.Errorf("%d %s", r.status, r.body)
	}
	if m, _ := filepath.Glob(dir); len(m) != 0 {
		t.Errorf("reading created the store %s", dir)
	}
}

// TestMemory_NeedsTheToken: the Memory API is behind the token like every other.
func TestMemory_NeedsTheToken(t *testing.T) {
	const token = "mem-token"
	dir := seedMemory(t, 1)
	e := newEnv(t, func(o *Options) { o.Token, o.MemoryDir = token, dir })
	wantError(t, e.get("/api/memory"), http.StatusUnauthorized, "invalid_api_key")
	wantError(t, e.post("/api/memory/forget", map[string]any{"all": true}), http.StatusUnauthorized, "invalid_api_key")
	wantError(t, e.post("/api/memory/forget", map[string]any{"all": true}, "Authorization", "Bearer wrong"), http.StatusUnauthorized, "invalid_api_key")
	if l := decode[memoryList](t, e.get("/api/memory", "Authorization", "Bearer "+token)); l.Total != 3 {
		t.Errorf("with the token: %+v", l)
	}
}
