package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/memory"
	"massgen/internal/private"
	"massgen/internal/provider"
	"massgen/internal/provider/gemini"
	"massgen/internal/provider/openai"
	"massgen/internal/redact"
	"massgen/internal/usage"
)

// Persistent memory and compression for one turn: the store is opened before the engine
// runs, each agent's memories are put into its system prompt before coordination
// (engine.Options.Recall), and each agent's answer is remembered once the final answer is out
// (engine.Options.Remember). Nothing memory does may stop a session: a store that cannot be
// read is set aside, an embeddings endpoint that fails is reported, and the turn goes on.

// StoreDir is where memories are kept by default: ~/.massgen/memory.
func StoreDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("memory: no home folder for the store (%w): set persistent_memory.qdrant.path", err)
	}
	return filepath.Join(home, ".massgen", "memory"), nil
}

// memAgent is one agent's memory for the turn.
type memAgent struct {
	settings config.Memory
	emb      memory.Embedder
	embType  string // the embedding backend type, for its price
	embModel string
	scope    memory.Scope
}

type memoryTurn struct {
	stores  map[string]*memory.Store // by folder ("" in process)
	agents  []*memAgent              // by agent index; nil where persistent memory is off
	cfg     *config.Config
	engine  []engine.Agent
	bus     *event.Bus
	red     *redact.Redactor
	timeout time.Duration
	// troubles found before the session started, published with the preamble.
	troubles []event.Payload

	mu      sync.Mutex
	answers map[string]string // each agent's latest answer, from the events
}

// MemoryScope is where a session's persistent memories are kept: its team and its log
// session (Run). It travels with a session run elsewhere, where the config file that names
// the team is not.
type MemoryScope struct {
	Team string `json:"team"`
	Run  string `json:"run"`
}

// MemoryScopeOf is cfg's scope in the log session run; nil when no agent keeps persistent
// memories.
func MemoryScopeOf(cfg *config.Config, run string) *MemoryScope {
	for _, a := range cfg.Agents {
		if m := cfg.MemoryOf(a); m.Enabled && m.Persistent {
			return &MemoryScope{Team: teamID(cfg), Run: run}
		}
	}
	return nil
}

// teamID names a team for memory scoping: its config file, or its agents when it has none.
func teamID(cfg *config.Config) string {
	if cfg.Path != "" && !strings.HasPrefix(cfg.Path, "@") {
		if abs, err := filepath.Abs(cfg.Path); err == nil {
			return abs
		}
	}
	ids := make([]string, len(cfg.Agents))
	for i, a := range cfg.Agents {
		ids[i] = a.ID
	}
	return cmp.Or(cfg.Path, "agents:"+strings.Join(ids, ","))
}

// newEmbedder builds agent a's embedder: its own backend's endpoint and key when the
// embedding provider is its backend type, else the provider's default endpoint and key
// variable.
func newEmbedder(a config.Agent, m config.Memory, key, keyEnv string, getenv func(string) string,
	check func(config.Agent, string) error) (memory.Embedder, string, string, error) {
	b := a.Backend
	typ := cmp.Or(m.EmbeddingProvider, b.Type)
	bt, ok := config.BackendTypes[typ]
	if !ok || !slices.Contains([]string{config.ProtocolResponses, config.ProtocolChat, config.ProtocolGemini}, bt.Protocol) {
		return nil, "", "", fmt.Errorf("agent %s: backend type `%s` has no embeddings API for persistent memory: set memory.persistent_memory.embedding.provider (openai, gemini, ...) or persistent_memory.enabled: false", a.ID, typ)
	}
	if typ != b.Type {
		b = config.Backend{Type: typ, BaseURL: bt.DefaultBaseURL}
		var err error
		if b.BaseURL, _, err = BaseURL(b, getenv); err != nil {
			return nil, "", "", err
		}
		if key, keyEnv, err = APIKey(b, getenv); err != nil {
			return nil, "", "", fmt.Errorf("agent %s: memory embeddings: %w", a.ID, err)
		}
	}
	if check != nil {
		if err := check(config.Agent{ID: a.ID + " (memory embeddings)", Backend: b}, keyEnv); err != nil {
			return nil, "", "", err
		}
	}
	model := m.EmbeddingModel
	if model == "" {
		model = "text-embedding-3-small"
		if bt.Protocol == config.ProtocolGemini {
			model = "gemini-embedding-001"
		}
	}
	o := providerOptions(b, key, keyEnv)
	o.Model = model
	if bt.Protocol == config.ProtocolGemini {
		e, err := gemini.NewEmbedder(o)
		return e, typ, model, err
	}
	return openai.NewEmbedder(o), typ, model, nil
}

// startMemory prepares memory for the turn; nil when no agent has it on. An error is a
// config problem (no embeddings, a missing key) found before any model is called.
// Embeddings go where check allows (nil: anywhere the config says).
func startMemory(cfg *config.Config, agents []engine.Agent, keys, froms []string, o Options, red *redact.Redactor, sc MemoryScope,
	check func(config.Agent, string) error, now time.Time) (*memoryTurn, error) {
	mt := &memoryTurn{stores: map[string]*memory.Store{}, agents: make([]*memAgent, len(cfg.Agents)), cfg: cfg, engine: agents, red: red,
		timeout: cmp.Or(cfg.Timeouts.Agent, 300*time.Second), answers: map[string]string{}}
	on := false
	for i, a := range cfg.Agents {
		m := cfg.MemoryOf(a)
		if !m.Enabled || !m.Persistent {
			continue
		}
		on = true
		emb, typ, model, err := newEmbedder(a, m, keys[i], froms[i], o.Getenv, check)
		if err != nil {
			return nil, errorf(ExitConfig, "%s", red.Error(err))
		}
		dir := ""
		if !m.InProcess {
			if dir = m.StorePath; dir == "" {
				if dir, err = StoreDir(); err != nil {
					return nil, errorf(ExitConfig, "%v", err)
				}
			}
		}
		if _, ok := mt.stores[dir]; !ok {
			st, opened, err := memory.Open(dir, now)
			if err != nil {
				// Memory is not worth the session: it runs without.
				mt.troubles = append(mt.troubles, event.MemoryTrouble{Stage: "store", Message: err.Error() + "; this turn runs without memory"})
				continue
			}
			if opened.SetAside != "" {
				mt.troubles = append(mt.troubles, event.MemoryTrouble{Stage: "store",
					Message: fmt.Sprintf("the memory store %s could not be read (%v); it was moved to %s and a new one is used", dir, opened.Err, opened.SetAside)})
			}
			mt.stores[dir] = st
		}
		session := cmp.Or(m.SessionName, sc.Run)
		mt.agents[i] = &memAgent{settings: m, emb: emb, embType: typ, embModel: model, scope: memory.Scope{
			Team: sc.Team, Session: session, Run: sc.Run, Turn: max(o.Turn, 1), Agent: a.ID,
			HistoryIntact: true, ExcludeRecent: m.ExcludeRecent}}
		mt.agents[i].settings.StorePath = dir
	}
	if !on {
		return nil, nil
	}
	return mt, nil
}

func (mt *memoryTurn) store(ma *memAgent) *memory.Store { return mt.stores[ma.settings.StorePath] }

// Handle keeps each agent's latest answer for Remember.
func (mt *memoryTurn) Handle(e event.Event) {
	if a, ok := e.Payload.(event.AnswerSubmitted); ok {
		mt.mu.Lock()
		mt.answers[a.Agent] = a.Content
		mt.mu.Unlock()
	}
}

// embedSpent is what an embeddings call cost, as the agent's usage: priced at the embedding
// model's price when the table knows it.
func (ma *memAgent) embedSpent(u provider.Usage) provider.Usage {
	if usage.Known(ma.embType, ma.embModel) {
		u.CostUSD = usage.Cost(ma.embType, ma.embModel, u)
	}
	return u
}

// recall is engine.Options.Recall: the memories each agent may see, nearest to the question.
func (mt *memoryTurn) recall(question string) func(ctx context.Context, pay func(int, provider.Usage)) []string {
	return func(ctx context.Context, pay func(int, provider.Usage)) []string {
		out := make([]string, len(mt.agents))
		for i, ma := range mt.agents {
			st := mt.storeOrNil(ma)
			if st == nil {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, mt.timeout)
			hits, u, err := memory.Recall(cctx, st, ma.emb, ma.scope, question, ma.settings.RetrievalLimit)
			cancel()
			pay(i, ma.embedSpent(u))
			id := mt.cfg.Agents[i].ID
			if err != nil {
				mt.bus.Publish(event.MemoryTrouble{Agent: id, Stage: "retrieve", Message: mt.red.Error(err).Error() + "; the agent starts without its memories"})
				continue
			}
			if len(hits) == 0 {
				continue
			}
			facts := make([]string, len(hits))
			for k, h := range hits {
				facts[k] = h.Text
			}
			mt.bus.Publish(event.MemoryRetrieved{Agent: id, Count: len(hits), Facts: facts})
			out[i] = memory.Block(hits, id)
		}
		return out
	}
}

func (mt *memoryTurn) storeOrNil(ma *memAgent) *memory.Store {
	if ma == nil {
		return nil
	}
	return mt.store(ma)
}

// remember is engine.Options.Remember: each agent's answer (the winner's final answer) goes
// through its model's fact extraction into the store.
func (mt *memoryTurn) remember(question string) func(ctx context.Context, r engine.Result, pay func(int, provider.Usage)) {
	return func(ctx context.Context, r engine.Result, pay func(int, provider.Usage)) {
		for i, ma := range mt.agents {
			st := mt.storeOrNil(ma)
			if st == nil {
				continue
			}
			id := mt.cfg.Agents[i].ID
			mt.mu.Lock()
			answer := mt.answers[id]
			mt.mu.Unlock()
			winner := id == r.Winner
			if winner && r.FinalAnswer != "" {
				answer = r.FinalAnswer
			}
			if answer == "" {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, mt.timeout)
			n, spent, err := memory.Remember(cctx, st, ma.emb, ask(mt.engine[i]), ma.scope, question, answer, winner, mt.red.Message, time.Now())
			cancel()
			pay(i, spent.Extract)
			pay(i, ma.embedSpent(spent.Embed))
			if err != nil {
				mt.bus.Publish(event.MemoryTrouble{Agent: id, Stage: "remember", Message: mt.red.Error(err).Error() + "; nothing of this turn was stored"})
				continue
			}
			if n > 0 {
				mt.bus.Publish(event.MemoryStored{Agent: id, Count: n, Winner: winner})
			}
		}
	}
}

// maxAskBytes bounds a memory call's reply (fact lists, summaries).
const maxAskBytes = 64 << 10

// ask is a one-question call to agent a's own model, for fact extraction and summaries.
func ask(a engine.Agent) memory.Complete {
	return func(ctx context.Context, system, user string) (string, provider.Usage, error) {
		req := provider.Request{Model: a.Model, System: system, Params: a.Params, MaxResponseBytes: maxAskBytes, Stage: provider.StageMemory,
			Messages: []provider.Message{{Role: provider.RoleUser, Content: user}}}
		var text strings.Builder
		var u provider.Usage
		for chunk, err := range a.Provider.Stream(ctx, req) {
			if err != nil {
				return "", u, err
			}
			switch c := chunk.(type) {
			case provider.TextDelta:
				if text.Len()+len(c.Text) > maxAskBytes {
					return text.String(), u, errors.New("the reply is too long")
				}
				text.WriteString(c.Text)
			case provider.UsageChunk:
				u = u.Add(c.Usage)
			}
		}
		return text.String(), u, nil
	}
}

// compactor is agent a's engine.Agent.Compact for compression settings c: the summary by its
// own model, the summarised messages saved in its workspace (dir, "" without one).
func compactor(a engine.Agent, c config.Compression, dir string) func(context.Context, string, []provider.Message) (*engine.Compacted, error) {
	window, _ := usage.ContextWindow(a.Model)
	var n int
	var mu sync.Mutex
	save := func(text string) (string, error) {
		if dir == "" {
			return "", nil
		}
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		folder := filepath.Join(dir, "memory")
		if err := private.MkdirAll(folder); err != nil {
			return "", err
		}
		path := filepath.Join(folder, fmt.Sprintf("compressed_context_%d.md", k))
		return path, private.WriteFile(path, []byte(text))
	}
	cp := &memory.Compactor{Window: window, Trigger: c.Trigger, Target: c.Target, Ask: ask(a), Save: save}
	return func(ctx context.Context, system string, msgs []provider.Message) (*engine.Compacted, error) {
		out, err := cp.Compact(ctx, system, msgs)
		if out == nil {
			return nil, err
		}
		return &engine.Compacted{Messages: out.Messages, Usage: out.Usage, Before: out.Before, After: out.After, Window: window,
			Dropped: out.Dropped, Saved: out.Saved}, err
	}
}

// compression is when agent a's conversations are compressed: its memory's compression when
// memory is on, else filesystem_memory's; Trigger 0 when never.
func compression(cfg *config.Config, a config.Agent) config.Compression {
	if m := cfg.MemoryOf(a); m.Enabled {
		return m.Compression
	}
	if cfg.FilesystemMemory.Enabled {
		return cfg.FilesystemMemory.Compression
	}
	return config.Compression{}
}
