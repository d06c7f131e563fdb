package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/provider"
)

func TestVisible_TurnAwareAndWinnersOnly(t *testing.T) {
	sc := Scope{Team: "t", Session: "s", Run: "r2", Turn: 3, Agent: "a"}
	cases := []struct {
		name string
		m    Memory
		want bool
	}{
		{"own, earlier run", Memory{Team: "t", Session: "s", Run: "r1", Turn: 5, Agent: "a"}, true},
		{"own, earlier turn", Memory{Team: "t", Session: "s", Run: "r2", Turn: 2, Agent: "a"}, true},
		{"own, this turn", Memory{Team: "t", Session: "s", Run: "r2", Turn: 3, Agent: "a"}, false},
		{"peer winner, earlier turn", Memory{Team: "t", Session: "s", Run: "r2", Turn: 1, Agent: "b", Winner: true}, true},
		{"peer loser", Memory{Team: "t", Session: "s", Run: "r1", Turn: 1, Agent: "b"}, false},
		{"other team", Memory{Team: "u", Session: "s", Run: "r1", Turn: 1, Agent: "a"}, false},
		{"other session", Memory{Team: "t", Session: "x", Run: "r1", Turn: 1, Agent: "a"}, false},
	}
	for _, c := range cases {
		if got := Visible(c.m, sc); got != c.want {
			t.Errorf("%s: Visible = %v, want %v", c.name, got, c.want)
		}
	}
	recent := sc
	recent.ExcludeRecent, recent.HistoryIntact = true, true
	if Visible(Memory{Team: "t", Session: "s", Run: "r2", Turn: 2, Agent: "a"}, recent) {
		t.Error("exclude_recent shows a fact of a turn the conversation still holds")
	}
	if !Visible(Memory{Team: "t", Session: "s", Run: "r1", Turn: 2, Agent: "a"}, recent) {
		t.Error("exclude_recent hides a fact of an earlier run")
	}
}

func TestParseFacts(t *testing.T) {
	long := strings.Repeat("x", MaxFactChars+50)
	many := `{"facts": [` + strings.TrimSuffix(strings.Repeat(`"f",`, 3), ",") + `]}`
	cases := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{`{"facts": ["Paris is the capital", " paris is the capital ", "x\ny"]}`, []string{"Paris is the capital", "x y"}, false},
		{"```json\n[\"a\"]\n```", []string{"a"}, false},
		{`Here you go: {"facts": []}`, nil, false},
		{`{"facts": ["` + long + `"]}`, []string{long[:MaxFactChars]}, false},
		{many, []string{"f"}, false},
		{"no json here", nil, true},
		{`{"facts": "not a list"}`, nil, true},
	}
	for _, c := range cases {
		got, err := ParseFacts(c.in)
		if (err != nil) != c.wantErr || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("ParseFacts(%.40q) = %q, %v; want %q, err %v", c.in, got, err, c.want, c.wantErr)
		}
	}
	var lots []string
	for i := range 50 {
		lots = append(lots, `"fact `+strings.Repeat("y", i)+`"`)
	}
	got, _ := ParseFacts(`{"facts": [` + strings.Join(lots, ",") + `]}`)
	if len(got) != MaxFactsPerTurn {
		t.Errorf("%d facts kept, want the cap %d", len(got), MaxFactsPerTurn)
	}
}

func msg(role provider.Role, n int) provider.Message {
	return provider.Message{Role: role, Content: strings.Repeat("w", n*4)}
}

func TestPlan(t *testing.T) {
	u, a, tl := provider.RoleUser, provider.RoleAssistant, provider.RoleTool
	cases := []struct {
		name   string
		msgs   []provider.Message
		k      int
		wantOK bool
	}{
		{"under the trigger", []provider.Message{msg(u, 100), msg(a, 100), msg(u, 100)}, 0, false},
		{"one huge reply, then a user message", []provider.Message{msg(u, 100), msg(a, 9000), msg(u, 50)}, 2, true},
		{"tool loop: the result is never cut from its call", []provider.Message{msg(u, 100), msg(a, 50), msg(tl, 9000), msg(a, 50), msg(tl, 100)}, 3, true},
		{"nothing fits: all after the task", []provider.Message{msg(u, 100), msg(a, 50), msg(tl, 9000)}, 3, true},
		{"a long system prompt: too little to gain", []provider.Message{msg(u, 100), msg(a, 300), msg(u, 50)}, 0, false},
	}
	for _, c := range cases {
		system := ""
		if strings.HasPrefix(c.name, "a long system") {
			system = strings.Repeat("s", 40000)
		}
		k, ok := Plan(system, c.msgs, 10000, 0.75, 0.2)
		if ok != c.wantOK || k != c.k {
			t.Errorf("%s: Plan = %d, %v; want %d, %v", c.name, k, ok, c.k, c.wantOK)
		}
		if ok && c.msgs[min(k, len(c.msgs)-1)].Role == tl && k < len(c.msgs) {
			t.Errorf("%s: the kept part starts with a tool result", c.name)
		}
	}
}

func TestCompact_SummaryStandsInAndTheTextIsSaved(t *testing.T) {
	msgs := []provider.Message{{Role: provider.RoleUser, Content: "task"},
		{Role: provider.RoleAssistant, Content: "The vault code is 4417. " + strings.Repeat("filler ", 6000)},
		{Role: provider.RoleUser, Content: "now answer"}}
	var saved string
	c := &Compactor{Window: 10000, Trigger: 0.5, Target: 0.2,
		Ask: func(_ context.Context, system, user string) (string, provider.Usage, error) {
			if !strings.Contains(user, "4417") {
				t.Error("the summary call does not read the dropped messages")
			}
			return "The vault code is 4417.", provider.Usage{InputTokens: 10, OutputTokens: 5}, nil
		},
		Save: func(text string) (string, error) { saved = text; return "/ws/memory/c1.md", nil }}
	out, err := c.Compact(t.Context(), "", msgs)
	if err != nil || out == nil {
		t.Fatalf("Compact = %v, %v", out, err)
	}
	if len(out.Messages) != 3 || out.Messages[0].Content != "task" || out.Messages[2].Content != "now answer" ||
		out.Messages[1].Role != provider.RoleAssistant || !strings.Contains(out.Messages[1].Content, "4417") ||
		!strings.Contains(out.Messages[1].Content, "/ws/memory/c1.md") {
		t.Fatalf("compressed conversation: %+v", out.Messages)
	}
	if !strings.Contains(saved, "filler filler") || out.After >= out.Before || out.Usage.OutputTokens != 5 {
		t.Errorf("saved %d bytes, tokens %d -> %d, usage %+v", len(saved), out.Before, out.After, out.Usage)
	}
	c.Ask = func(context.Context, string, string) (string, provider.Usage, error) {
		return "", provider.Usage{InputTokens: 3}, errors.New("boom")
	}
	if out, err := c.Compact(t.Context(), "", msgs); err == nil || out == nil || out.Usage.InputTokens != 3 || out.Messages != nil {
		t.Errorf("a failed summary: %+v, %v (want the error and what it cost, no messages)", out, err)
	}
}

// words is a deterministic embedder: each word adds to one of 64 dimensions.
type words struct{ calls int }

func (words) Model() string { return "fake/words" }
func (w *words) Embed(_ context.Context, texts []string) ([][]float32, provider.Usage, error) {
	w.calls++
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, f := range strings.Fields(strings.ToLower(t)) {
			h := 0
			for _, r := range strings.Trim(f, ".,?!") {
				h = h*31 + int(r)
			}
			v[(h%64+64)%64]++
		}
		v[63] += 0.01
		out[i] = v
	}
	return out, provider.Usage{InputTokens: 7}, nil
}

func TestStore_RememberRecallForget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	st, opened, err := Open(dir, time.Now())
	if err != nil || opened.SetAside != "" {
		t.Fatal(err, opened)
	}
	emb := &words{}
	sc := Scope{Team: "t", Session: "s", Run: "r1", Turn: 1, Agent: "a"}
	ask := func(context.Context, string, string) (string, provider.Usage, error) {
		return `{"facts": ["The user's cat is called Miso.", "The deploy key is sk-live-ABCDEFGHIJKLMNOP"]}`, provider.Usage{OutputTokens: 9}, nil
	}
	scrub := func(s string) string { return strings.ReplaceAll(s, "sk-live-ABCDEFGHIJKLMNOP", "[redacted]") }
	n, spent, err := Remember(t.Context(), st, emb, ask, sc, "q", "answer", true, scrub, time.Now())
	if err != nil || n != 2 || spent.Extract.OutputTokens != 9 || spent.Embed.InputTokens != 7 {
		t.Fatalf("Remember = %d, %+v, %v", n, spent, err)
	}
	// A new process: the store read back from disk.
	st2, _, err := Open(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	later := sc
	later.Run, later.Agent = "r2", "b"
	hits, _, err := Recall(t.Context(), st2, emb, later, "what is my cat called?", 1)
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Text, "Miso") {
		t.Fatalf("Recall = %+v, %v", hits, err)
	}
	for _, m := range st2.List(t.Context(), nil) {
		if strings.Contains(m.Text, "sk-live") {
			t.Errorf("a secret reached the store: %q", m.Text)
		}
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if info, _ := d.Info(); err == nil && info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v, want private", p, info.Mode().Perm())
		}
		return nil
	})
	n, err = st2.Forget(t.Context(), func(m Memory) bool { return strings.Contains(m.Text, "Miso") })
	if err != nil || n != 1 || len(st2.List(t.Context(), nil)) != 1 {
		t.Errorf("Forget = %d, %v; left %d", n, err, len(st2.List(t.Context(), nil)))
	}
	// Nothing visible: no embedding is paid for.
	calls := emb.calls
	other := later
	other.Team = "other"
	if hits, _, _ := Recall(t.Context(), st2, emb, other, "cat", 5); len(hits) != 0 || emb.calls != calls {
		t.Errorf("another team's recall: %d hits, %d embedding calls", len(hits), emb.calls-calls)
	}
}

func TestOpen_CorruptStoreIsSetAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	st, _, err := Open(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Remember(t.Context(), st, &words{}, func(context.Context, string, string) (string, provider.Usage, error) {
		return `["a fact"]`, provider.Usage{}, nil
	}, Scope{Team: "t", Agent: "a"}, "q", "a", false, func(s string) string { return s }, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Garble every file of the store.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.WriteFile(p, []byte("not a gob"), 0o600)
		}
		return nil
	})
	st, opened, err := Open(dir, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if opened.SetAside != dir+".corrupt-20260102T030405" || opened.Err == nil {
		t.Fatalf("opened = %+v", opened)
	}
	if _, err := os.Stat(opened.SetAside); err != nil {
		t.Errorf("the corrupt store is gone: %v", err)
	}
	if n := len(st.List(t.Context(), nil)); n != 0 {
		t.Errorf("the fresh store holds %d memories", n)
	}
}

func TestStore_TrimsTheOldest(t *testing.T) {
	st, _, _ := Open("", time.Now())
	emb := &words{}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mems []Memory
	var vecs [][]float32
	for i := range MaxPerAgent + 3 {
		mems = append(mems, Memory{ID: NewID(), Text: "fact", Agent: "a", Team: "t", Created: base.Add(time.Duration(i) * time.Second), Model: emb.Model()})
		v, _, _ := emb.Embed(t.Context(), []string{"fact"})
		vecs = append(vecs, v[0])
	}
	if err := st.Add(t.Context(), mems, vecs); err != nil {
		t.Fatal(err)
	}
	all := st.List(t.Context(), nil)
	if len(all) != MaxPerAgent || !all[0].Created.Equal(base.Add(3*time.Second)) {
		t.Errorf("kept %d, oldest %v", len(all), all[0].Created)
	}
}
