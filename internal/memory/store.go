package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	chromem "github.com/philippgille/chromem-go"

	"massgen/internal/private"
)

// Limits on what the store holds, whatever a model writes.
const (
	// MaxFactChars is the longest fact kept; longer ones are cut.
	MaxFactChars = 500
	// MaxFactsPerTurn is how many facts one extraction may store.
	MaxFactsPerTurn = 20
	// MaxPerAgent is how many memories one agent of one team keeps; the oldest go first.
	MaxPerAgent = 2000
	// maxDims bounds an embedding's length (the largest models return 3072).
	maxDims = 8192
)

// Memory is one stored fact and where it came from.
type Memory struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Agent   string    `json:"agent"`
	Team    string    `json:"team"`
	Session string    `json:"session"`
	Run     string    `json:"run"` // the log session that stored it
	Turn    int       `json:"turn"`
	Winner  bool      `json:"winner"`
	Created time.Time `json:"created"`
	// Model is the embedding model ("openai/text-embedding-3-small"): vectors of different
	// models cannot be compared, so each has its own collection.
	Model string `json:"model"`
}

// Hit is a memory a query found, with its cosine similarity.
type Hit struct {
	Memory
	Similarity float32 `json:"similarity"`
}

// Store is the vector store: a chromem-go database, on disk in a private folder or in memory.
// It is safe for concurrent use.
type Store struct {
	mu  sync.Mutex
	db  *chromem.DB
	dir string // "" in memory
}

// Opened says what Open found: SetAside is where a corrupt store was moved ("" when none).
type Opened struct {
	SetAside string
	Err      error // why the store was set aside
}

// Open opens the store in dir, creating it (private, 0700) if needed; dir "" keeps it in
// memory for this process. A store that cannot be read is renamed to
// <dir>.corrupt-<time> and a fresh one is used: memory is never worth failing a session for.
func Open(dir string, now time.Time) (*Store, Opened, error) {
	if dir == "" {
		return &Store{db: chromem.NewDB()}, Opened{}, nil
	}
	if err := private.MkdirAll(filepath.Dir(dir)); err != nil {
		return nil, Opened{}, fmt.Errorf("memory: store folder %s: %w", filepath.Dir(dir), err)
	}
	db, err := chromem.NewPersistentDB(dir, false)
	if err == nil {
		s := &Store{db: db, dir: dir}
		return s, Opened{}, s.tighten()
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, Opened{}, fmt.Errorf("memory: store %s: %w (fix its permissions)", dir, err)
	}
	aside := dir + ".corrupt-" + now.UTC().Format("20060102T150405")
	if rerr := os.Rename(dir, aside); rerr != nil {
		return nil, Opened{}, fmt.Errorf("memory: store %s cannot be read (%v) nor set aside: %w", dir, err, rerr)
	}
	db, err2 := chromem.NewPersistentDB(dir, false)
	if err2 != nil {
		return nil, Opened{}, fmt.Errorf("memory: new store %s: %w", dir, err2)
	}
	return &Store{db: db, dir: dir}, Opened{SetAside: aside, Err: err}, nil
}

// Dir is the store's folder ("" in memory).
func (s *Store) Dir() string { return s.dir }

// noEmbed stands in for chromem's embedding function, which would call OpenAI with the
// environment's key: massgen computes every vector itself, through the agent's provider.
func noEmbed(context.Context, string) ([]float32, error) {
	return nil, errors.New("memory: vectors are computed by massgen, never by the store")
}

// A collection's name holds its model and the size of its vectors: "massgen:1536:openai/m".
// (chromem-go v0.7.0 keeps collection metadata but cannot give it back.)
func collectionName(model string, dims int) string {
	return "massgen:" + strconv.Itoa(dims) + ":" + model
}

func parseName(name string) (model string, dims int, ok bool) {
	rest, ok := strings.CutPrefix(name, "massgen:")
	if !ok {
		return "", 0, false
	}
	d, model, ok := strings.Cut(rest, ":")
	dims, err := strconv.Atoi(d)
	return model, dims, ok && err == nil && dims > 0 && dims <= maxDims
}

// collection returns model's collection of vectors of dims values, creating it when create
// is set (nil when there is none). A collection keeps the size of its vectors: another size (a model that changed)
// is an error rather than a wrong similarity.
func (s *Store) collection(model string, dims int, create bool) (*chromem.Collection, error) {
	for name := range s.db.ListCollections() {
		m, d, ok := parseName(name)
		if !ok || m != model {
			continue
		}
		if d != dims {
			return nil, fmt.Errorf("memory: %s vectors have %d values in the store, not %d: forget this model's memories (massgen memory forget --model %s)",
				model, d, dims, model)
		}
		return s.db.GetCollection(name, noEmbed), nil
	}
	if !create {
		return nil, nil
	}
	return s.db.CreateCollection(collectionName(model, dims), map[string]string{"model": model}, noEmbed)
}

// Add stores mems with their vectors (one each, all of one model's size).
func (s *Store) Add(ctx context.Context, mems []Memory, vecs [][]float32) error {
	if len(mems) == 0 {
		return nil
	}
	if len(vecs) != len(mems) {
		return fmt.Errorf("memory: %d vectors for %d facts", len(vecs), len(mems))
	}
	dims := len(vecs[0])
	for _, v := range vecs {
		if len(v) != dims || dims == 0 || dims > maxDims {
			return fmt.Errorf("memory: embeddings of %d values (want one size, 1 to %d)", len(v), maxDims)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collection(mems[0].Model, dims, true)
	if err != nil {
		return err
	}
	ids, metas, texts := make([]string, len(mems)), make([]map[string]string, len(mems)), make([]string, len(mems))
	for i, m := range mems {
		ids[i], metas[i], texts[i] = m.ID, toMeta(m), m.Text
	}
	if err := c.Add(ctx, ids, vecs, metas, texts); err != nil {
		return fmt.Errorf("memory: store: %w", err)
	}
	if err := s.trimLocked(ctx, c, mems); err != nil {
		return err
	}
	return s.tighten()
}

// trimLocked forgets the oldest memories of each agent just added beyond MaxPerAgent.
func (s *Store) trimLocked(ctx context.Context, c *chromem.Collection, added []Memory) error {
	all := s.allLocked(ctx, c)
	for _, key := range uniqueOwners(added) {
		var own []Memory
		for _, m := range all {
			if m.Team == key[0] && m.Agent == key[1] {
				own = append(own, m)
			}
		}
		if len(own) <= MaxPerAgent {
			continue
		}
		sortOldestFirst(own)
		var drop []string
		for _, m := range own[:len(own)-MaxPerAgent] {
			drop = append(drop, m.ID)
		}
		if err := c.Delete(ctx, nil, nil, drop...); err != nil {
			return fmt.Errorf("memory: forget the oldest: %w", err)
		}
	}
	return nil
}

func uniqueOwners(ms []Memory) [][2]string {
	var out [][2]string
	for _, m := range ms {
		k := [2]string{m.Team, m.Agent}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func sortOldestFirst(ms []Memory) {
	slices.SortStableFunc(ms, func(a, b Memory) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Query returns up to n of model's memories nearest to vec among those keep accepts, best
// first.
func (s *Store) Query(ctx context.Context, model string, vec []float32, n int, keep func(Memory) bool) ([]Hit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collection(model, len(vec), false)
	if err != nil || c == nil || c.Count() == 0 || n <= 0 {
		return nil, err
	}
	// Every document, ranked: the filters (turn, winner) are more than chromem's equality
	// matches can say, and a store holds thousands of facts at most.
	res, err := c.QueryEmbedding(ctx, vec, c.Count(), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	var hits []Hit
	for _, r := range res {
		m := fromMeta(r.ID, r.Content, r.Metadata)
		if keep == nil || keep(m) {
			hits = append(hits, Hit{Memory: m, Similarity: r.Similarity})
			if len(hits) == n {
				break
			}
		}
	}
	return hits, nil
}

// List returns every memory keep accepts, oldest first.
func (s *Store) List(ctx context.Context, keep func(Memory) bool) []Memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Memory
	for _, c := range s.collections() {
		for _, m := range s.allLocked(ctx, c) {
			if keep == nil || keep(m) {
				out = append(out, m)
			}
		}
	}
	sortOldestFirst(out)
	return out
}

// Forget deletes the memories keep accepts and reports how many.
func (s *Store) Forget(ctx context.Context, keep func(Memory) bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.collections() {
		var ids []string
		for _, m := range s.allLocked(ctx, c) {
			if keep(m) {
				ids = append(ids, m.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		if err := c.Delete(ctx, nil, nil, ids...); err != nil {
			return n, fmt.Errorf("memory: forget: %w", err)
		}
		n += len(ids)
	}
	return n, s.tighten()
}

func (s *Store) collections() []*chromem.Collection {
	var out []*chromem.Collection
	for name := range s.db.ListCollections() {
		if _, _, ok := parseName(name); !ok {
			continue
		}
		if c := s.db.GetCollection(name, noEmbed); c != nil {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *chromem.Collection) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// allLocked is every memory of c. chromem-go v0.7.0 cannot list a collection; an exhaustive
// query (any vector of the collection's size) returns every document.
func (s *Store) allLocked(ctx context.Context, c *chromem.Collection) []Memory {
	_, dims, ok := parseName(c.Name)
	if c.Count() == 0 || !ok {
		return nil
	}
	probe := make([]float32, dims)
	probe[0] = 1
	res, err := c.QueryEmbedding(ctx, probe, c.Count(), nil, nil)
	if err != nil {
		return nil
	}
	out := make([]Memory, 0, len(res))
	for _, r := range res {
		out = append(out, fromMeta(r.ID, r.Content, r.Metadata))
	}
	return out
}

// tighten makes the store's files private: chromem-go creates them with the process umask.
func (s *Store) tighten() error {
	if s.dir == "" {
		return nil
	}
	return filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := private.FileMode
		if d.IsDir() {
			want = private.DirMode
		}
		if info.Mode().Perm() != want {
			return os.Chmod(path, want)
		}
		return nil
	})
}

func toMeta(m Memory) map[string]string {
	return map[string]string{"agent": m.Agent, "team": m.Team, "session": m.Session, "run": m.Run, "turn": strconv.Itoa(m.Turn),
		"winner": strconv.FormatBool(m.Winner), "created": m.Created.UTC().Format(time.RFC3339Nano), "model": m.Model}
}

func fromMeta(id, text string, md map[string]string) Memory {
	turn, _ := strconv.Atoi(md["turn"])
	created, _ := time.Parse(time.RFC3339Nano, md["created"])
	return Memory{ID: id, Text: text, Agent: md["agent"], Team: md["team"], Session: md["session"], Run: md["run"], Turn: turn,
		Winner: md["winner"] == "true", Created: created, Model: md["model"]}
}
