package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/memory"
)

// The key the memory tests' agents use: a secret, so the redactor knows it.
const memKey = "sk-proj-memtestSECRET0123456789abcdef"

// TestMemoryChild is not a test: it is the process TestMemory_NewProcessRetrievesAFact starts,
// one turn of the config MEMTEST_CONFIG on the question MEMTEST_QUESTION.
func TestMemoryChild(t *testing.T) {
	path := os.Getenv("MEMTEST_CONFIG")
	if path == "" {
		t.Skip("run by TestMemory_NewProcessRetrievesAFact")
	}
	cfg, rep := config.Load(path)
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	res, err := Run(t.Context(), cfg, Options{Question: os.Getenv("MEMTEST_QUESTION"), Logging: true, LogRoot: os.Getenv("MEMTEST_LOGS"),
		WorkspaceRoot: os.Getenv("MEMTEST_LOGS")})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("EXIT=%d\nFINAL=%s\n", res.ExitCode, strings.ReplaceAll(res.FinalAnswer, "\n", " "))
}

func runMemoryChild(t *testing.T, cfgPath, home, logs, question string) (exit, final string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMemoryChild$", "-test.v")
	cmd.Env = append(os.Environ(), "MEMTEST_CONFIG="+cfgPath, "MEMTEST_QUESTION="+question, "MEMTEST_LOGS="+logs,
		"HOME="+home, "OPENAI_API_KEY="+memKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "EXIT="); ok {
			exit = v
		}
		if v, ok := strings.CutPrefix(sc.Text(), "FINAL="); ok {
			final = v
		}
	}
	return exit, final
}

// A fact stated in one process is retrieved by the next (a new process, the store read from
// ~/.massgen/memory), and the key stated with it never reaches the extraction model nor the
// store.
func TestMemory_NewProcessRetrievesAFact(t *testing.T) {
	fake := newFakeMemoryAPI(t, func(text string) string {
		switch {
		case strings.Contains(text, "What is my cat called?") && strings.Contains(text, "## Relevant memories") && strings.Contains(text, "Miso"):
			return "Your cat is called Miso."
		case strings.Contains(text, "What is my cat called?"):
			return "I do not know your cat's name."
		}
		return "Noted: your cat is called Miso. Your key " + memKey + " is noted too."
	})
	dir, home := t.TempDir(), t.TempDir()
	cfgPath := filepath.Join(dir, "team.yaml")
	team := memoryTeam(fake.URL, "memory:\n  enabled: true\n  persistent_memory: {session_name: pets}\n")
	if err := os.WriteFile(cfgPath, []byte(team), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "logs")
	if exit, final := runMemoryChild(t, cfgPath, home, logs, "My cat is called Miso, and my key is "+memKey+"."); exit != "0" || !strings.Contains(final, "Miso") {
		t.Fatalf("first process: exit %s, final %q", exit, final)
	}
	exit, final := runMemoryChild(t, cfgPath, home, logs, "What is my cat called?")
	if exit != "0" || !strings.Contains(final, "Your cat is called Miso") {
		t.Fatalf("second process: exit %s, final %q (the fact was not retrieved)", exit, final)
	}
	_, extracts, _, embedded := fake.snapshot()
	for _, s := range append(extracts, embedded...) {
		if strings.Contains(s, memKey) || strings.Contains(s, "memtestSECRET") {
			t.Errorf("the key reached the memory calls: %.200q", s)
		}
	}
	store := filepath.Join(home, ".massgen", "memory")
	st, opened, err := memory.Open(store, time.Now())
	if err != nil || opened.SetAside != "" {
		t.Fatal(err, opened)
	}
	mems := st.List(t.Context(), nil)
	if len(mems) == 0 {
		t.Fatal("nothing was stored")
	}
	for _, m := range mems {
		if strings.Contains(m.Text, "memtestSECRET") {
			t.Errorf("a secret reached the store: %q", m.Text)
		}
		if m.Session != "pets" || m.Agent != "keeper" || m.Team != cfgPath {
			t.Errorf("memory scoped as %+v", m)
		}
	}
	_ = filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
		if info, ierr := d.Info(); err == nil && ierr == nil && info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v, want private", p, info.Mode().Perm())
		}
		return nil
	})
	// The second turn's cost holds the extraction and the embeddings.
	var costs []float64
	turns, _ := filepath.Glob(filepath.Join(logs, "log_*", "turn_1", "events.jsonl"))
	for _, f := range turns {
		costs = append(costs, sumUsage(t, f))
	}
	if len(costs) != 2 {
		t.Fatalf("%d sessions logged", len(costs))
	}
}

// sumUsage adds up the cost of every usage event of a log, and checks memory events are there.
func sumUsage(t *testing.T, path string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	total, stored := 0.0, false
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		var e struct {
			Type string `json:"type"`
			Data struct {
				CostUSD float64 `json:"cost_usd"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		total += e.Data.CostUSD
		stored = stored || e.Type == "memory_stored"
	}
	if !stored {
		t.Errorf("%s: no memory_stored event", path)
	}
	return total
}

func runMemoryTurn(t *testing.T, team string, vars map[string]string, question string) (Result, []event.Event) {
	t.Helper()
	cfg, rep := config.Parse("team.yaml", []byte(team))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var rec recorded
	res, err := Run(t.Context(), cfg, Options{Question: question, Getenv: env(vars), Sinks: []event.Sink{&rec},
		WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return res, rec.all()
}

type recorded struct {
	mu sync.Mutex
	ev []event.Event
}

func (r *recorded) Handle(e event.Event) { r.mu.Lock(); r.ev = append(r.ev, e); r.mu.Unlock() }
func (r *recorded) all() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.ev...)
}

func troubles(evs []event.Event) []event.MemoryTrouble {
	var out []event.MemoryTrouble
	for _, e := range evs {
		if p, ok := e.Payload.(event.MemoryTrouble); ok {
			out = append(out, p)
		}
	}
	return out
}

// An embeddings endpoint that fails is reported, and the session still finishes.
func TestMemory_FailingEmbeddingsStillFinishes(t *testing.T) {
	fake := newFakeMemoryAPI(t, func(string) string { return "Paris is the capital of France." })
	fake.failEmbeddings = true
	store := filepath.Join(t.TempDir(), "store")
	res, evs := runMemoryTurn(t, memoryTeam(fake.URL, "memory:\n  enabled: true\n  persistent_memory: {qdrant: {mode: local, path: "+store+"}}\n"),
		map[string]string{"OPENAI_API_KEY": memKey}, "Capital of France?")
	if res.ExitCode != 0 || !strings.Contains(res.FinalAnswer, "Paris") {
		t.Fatalf("exit %d, final %q, err %v", res.ExitCode, res.FinalAnswer, res.Err)
	}
	tr := troubles(evs)
	if len(tr) != 1 || tr[0].Stage != "remember" || !strings.Contains(tr[0].Message, "embeddings (openai/text-embedding-3-small)") ||
		!strings.Contains(tr[0].Message, "nothing of this turn was stored") {
		t.Fatalf("troubles: %+v", tr)
	}
}

// A store that cannot be read is set aside, reported, and a fresh one takes the turn's facts.
func TestMemory_CorruptStoreIsSetAside(t *testing.T) {
	fake := newFakeMemoryAPI(t, func(string) string { return "Paris is the capital of France." })
	store := filepath.Join(t.TempDir(), "store")
	if err := os.MkdirAll(filepath.Join(store, "abc"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "abc", "00000000.gob"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, evs := runMemoryTurn(t, memoryTeam(fake.URL, "memory:\n  enabled: true\n  persistent_memory: {qdrant: {path: "+store+"}}\n"),
		map[string]string{"OPENAI_API_KEY": memKey}, "Capital of France?")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %v", res.ExitCode, res.Err)
	}
	tr := troubles(evs)
	if len(tr) != 1 || tr[0].Stage != "store" || !strings.Contains(tr[0].Message, "it was moved to "+store+".corrupt-") {
		t.Fatalf("troubles: %+v", tr)
	}
	st, opened, err := memory.Open(store, time.Now())
	if err != nil || opened.SetAside != "" || len(st.List(t.Context(), nil)) == 0 {
		t.Errorf("the fresh store: %v, %+v, %d memories", err, opened, len(st.List(t.Context(), nil)))
	}
}

// Gemini's embeddings (genai's EmbedContent) serve an OpenAI agent's memory; a second turn of
// the same named session retrieves what the first stored.
func TestMemory_GeminiEmbeddings(t *testing.T) {
	fake := newFakeMemoryAPI(t, func(text string) string {
		if strings.Contains(text, "## Relevant memories") && strings.Contains(text, "Lisbon") {
			return "You are flying to Lisbon."
		}
		return "Noted: your flight goes to Lisbon."
	})
	store := filepath.Join(t.TempDir(), "store")
	team := memoryTeam(fake.URL, "memory:\n  enabled: true\n  persistent_memory:\n    session_name: trip\n    embedding: {provider: gemini}\n    qdrant: {path: "+store+"}\n")
	vars := map[string]string{"OPENAI_API_KEY": memKey, "GEMINI_API_KEY": "AIza-memtest-0123456789", "GOOGLE_GEMINI_BASE_URL": fake.URL}
	if res, _ := runMemoryTurn(t, team, vars, "My flight goes to Lisbon."); res.ExitCode != 0 {
		t.Fatalf("first turn: %v", res.Err)
	}
	res, evs := runMemoryTurn(t, team, vars, "Where am I flying?")
	if res.ExitCode != 0 || !strings.Contains(res.FinalAnswer, "flying to Lisbon") {
		t.Fatalf("second turn: exit %d, final %q, troubles %+v", res.ExitCode, res.FinalAnswer, troubles(evs))
	}
	fake.mu.Lock()
	paths := strings.Join(fake.paths, " ")
	fake.mu.Unlock()
	if !strings.Contains(paths, "/v1beta/models/gemini-embedding-001:batchEmbedContents") || strings.Contains(paths, "/v1/embeddings") {
		t.Errorf("embedding requests went to %s", paths)
	}
}

var vaultCode = regexp.MustCompile(`vault code is (\d+)`)

// A conversation pushed past its (small) context window is compressed: the next call reads a
// summary instead of the bulky reply, the reply is saved whole in the workspace, and the
// agent still answers from what was dropped.
func TestCompression_AnswersFromWhatWasDropped(t *testing.T) {
	filler := strings.Repeat("Ballast sentence number. ", 2000) // ~50 KB: past 0.1 of a 32k window
	fake := newFakeMemoryAPI(t, nil)
	fake.play = func(text string, offered []string, enum []any, answered bool) move {
		code := "unknown"
		if m := vaultCode.FindStringSubmatch(text); m != nil {
			code = m[1]
		}
		switch {
		case len(offered) == 0 || strings.Contains(text, "Coordination is over."):
			return move{text: "FINAL: The vault code is " + code + "."}
		case (answered || strings.Contains(text, "Your own current answer is the one labelled")) && len(enum) > 0:
			return move{tool: "vote", args: `{"agent_id":"agent1","reason":"right"}`}
		case !strings.Contains(text, "Found so far"):
			return move{text: "Notes: the vault code is 4417. " + filler} // no workflow call: the engine asks again
		}
		b, _ := json.Marshal(map[string]string{"content": "The vault code is " + code + "."})
		return move{tool: "new_answer", args: string(b)}
	}
	team := strings.Replace(memoryTeam(fake.URL, "filesystem_memory:\n  compression: {trigger_threshold: 0.1, target_ratio: 0.05}\n"),
		"model: gpt-5-mini,", "model: tiny-unknown-model, cwd: ws,", 1)
	res, evs := runMemoryTurn(t, team, map[string]string{"OPENAI_API_KEY": memKey}, "Find the vault code.")
	if res.ExitCode != 0 || !strings.Contains(res.FinalAnswer, "The vault code is 4417") {
		t.Fatalf("exit %d, final %q, troubles %+v", res.ExitCode, res.FinalAnswer, troubles(evs))
	}
	var cc *event.ContextCompressed
	for _, e := range evs {
		if p, ok := e.Payload.(event.ContextCompressed); ok {
			cc = &p
		}
	}
	if cc == nil || cc.Window != 32768 || cc.TokensAfter >= cc.TokensBefore || cc.Saved == "" {
		t.Fatalf("context_compressed: %+v", cc)
	}
	saved, err := os.ReadFile(cc.Saved)
	if err != nil || !strings.Contains(string(saved), "Ballast sentence number. Ballast") {
		t.Fatalf("the dropped reply is not in %s: %v", cc.Saved, err)
	}
	requests, _, summaries, _ := fake.snapshot()
	if len(summaries) != 1 || !strings.Contains(summaries[0], "4417") {
		t.Fatalf("%d summary calls", len(summaries))
	}
	after := requests[1]
	if strings.Contains(after, "Ballast sentence number. Ballast") || !strings.Contains(after, "Found so far: ") || !strings.Contains(after, cc.Saved) {
		t.Errorf("the call after compression still carries the bulk or lacks the summary and the pointer:\n%.500s", after)
	}
}
