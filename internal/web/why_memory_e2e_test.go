package web

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/memory"
)

// TestE2E_WhyAndMemory drives e2e/why_memory.mjs in chromium: the decision panel of a
// finished session under confidence weighting (with its winner's memory files), wide and on a
// 390 px phone, and the Memory page listing, searching and forgetting a real store.
func TestE2E_WhyAndMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test takes about 10 s")
	}
	node, env := nodeEnv(t, []string{"playwright-core"}, true)
	const token = "e2e-why-token"
	tmp := t.TempDir()
	root := filepath.Join(tmp, "logs")
	const id = "log_20261202_080000/turn_1"
	turn := filepath.Join(root, filepath.FromSlash(id))
	var weighted decisionLog
	for _, l := range decisionLogs() {
		if l.name == "decision_weighted.jsonl" {
			weighted = l
		}
	}
	events := writeLog(t, "events.jsonl", weighted.evs)
	data, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	mem := filepath.Join(turn, "final", "a", "workspace", "memory")
	for p, body := range map[string]string{
		filepath.Join(turn, "events.jsonl"):                   string(data),
		filepath.Join(mem, "short_term", "user_prefs.md"):     "---\nname: user_prefs\n---\n- short answers\n",
		filepath.Join(mem, "long_term", "project_history.md"): "---\nname: project_history\n---\nThe project began in 2024.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	store := filepath.Join(tmp, "memory")
	st, _, err := memory.Open(store, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	mems := []memory.Memory{
		{ID: "mem_cat", Text: "the cat is called Tom", Agent: "a", Session: "s1", Turn: 1, Created: t0, Model: "openai/m"},
		{ID: "mem_dog", Text: "the dog is called Rex", Agent: "b", Session: "s2", Turn: 1, Created: t0.Add(time.Minute), Model: "openai/m", Winner: true},
		{ID: "mem_html", Text: `<img src=x onerror="window.pwned=1"> the cat likes fish`, Agent: "b", Session: "s2", Turn: 2, Created: t0.Add(2 * time.Minute), Model: "openai/m"},
	}
	if err := st.Add(t.Context(), mems, [][]float32{{1, 0}, {0, 1}, {1, 1}}); err != nil {
		t.Fatal(err)
	}

	opts := Options{Teams: map[string]*config.Config{"pages": loadTeam(t, "pages", pagesTeam)}, LogRoot: root, Token: token,
		Version: "e2e", MemoryDir: store}
	_, addr := serveListener(t, opts)
	shots := os.Getenv("MASSGEN_E2E_ARTIFACTS")
	if shots == "" {
		shots = filepath.Join(tmp, "shots")
	}
	shots = filepath.Join(shots, "why_memory")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	out := runNode(t, node, env, "internal/web/e2e/why_memory.mjs", "http://"+addr+"/?token="+token, id, shots)
	var res struct {
		MemoryFiles []string `json:"memoryFiles"`
		Left        []string `json:"left"`
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("script output %q: %v", out, err)
	}
	if want := []string{"short_term:user_prefs.md", "long_term:project_history.md"}; !slices.Equal(res.MemoryFiles, want) {
		t.Errorf("memory files %v, want %v", res.MemoryFiles, want)
	}
	// The forget the page sent reached the store.
	st2, _, err := memory.Open(store, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range st2.List(t.Context(), nil) {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"mem_cat", "mem_html"}) || !slices.Equal(res.Left, ids) {
		t.Errorf("left in the store %v, by the API %v; want mem_cat, mem_html", ids, res.Left)
	}
	t.Logf("screenshots in %s", shots)
}
