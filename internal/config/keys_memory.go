package config

import "slices"

// MassGen's memory: block (top level, and an agent's own over it) and filesystem_memory.

// Memory is the memory settings of one agent: the top-level memory: block with the agent's
// own block over it.
type Memory struct {
	Enabled bool // memory.enabled
	// Persistent is persistent_memory.enabled: facts stored and retrieved across turns and
	// sessions.
	Persistent bool
	// InProcess is persistent_memory.on_disk: false (the store lives as long as the process).
	InProcess bool
	// SessionName scopes memories to a named session shared by every run that names it; ""
	// scopes them to the log session (a run and its --continue turns).
	SessionName string
	// EmbeddingProvider and EmbeddingModel choose the embeddings ("" : the agent's backend
	// and its type's default model).
	EmbeddingProvider, EmbeddingModel string
	// StorePath is qdrant.path (local mode): the store's folder ("" : ~/.massgen/memory).
	StorePath string
	// RetrievalLimit is how many memories a turn retrieves; ExcludeRecent leaves out the
	// facts of earlier turns the conversation still holds.
	RetrievalLimit int
	ExcludeRecent  bool
	// Compression, when Trigger > 0, summarises a conversation past Trigger of the model's
	// context window down to Target of it.
	Compression Compression
}

// Compression is when a conversation is compressed, as fractions of the context window.
type Compression struct {
	Trigger, Target float64
}

// FilesystemMemory is the top-level filesystem_memory: block.
type FilesystemMemory struct {
	Enabled     bool
	Compression Compression
}

const (
	secMemory      = "memory"
	secMemPersist  = "memory.persistent_memory"
	secMemEmbed    = "memory.persistent_memory.embedding"
	secMemQdrant   = "memory.persistent_memory.qdrant"
	secMemCompress = "memory.compression"
	secMemRetrieve = "memory.retrieval"
	secMemRecord   = "memory.recording"
	secFSMemory    = "filesystem_memory"
	secFSCompress  = "filesystem_memory.compression"
)

// DefaultMemory is a memory: block's settings before its keys are read (MassGen's defaults).
func DefaultMemory() Memory {
	return Memory{Persistent: true, RetrievalLimit: 5, ExcludeRecent: true, Compression: Compression{Trigger: 0.75, Target: 0.40}}
}

// memoryBlock reads a memory: block into the agent's settings (over the top-level ones) or the
// top-level ones.
func memoryBlock(w *walker, t *target, f field) {
	if f.val == nil {
		return
	}
	sub := *t
	if t.agent != nil {
		m := t.cfg.Memory
		if m == (Memory{}) { // no top-level block
			m = DefaultMemory()
		}
		sub.mem = &m
		w.walk(secMemory, f, &sub)
		t.agent.agent.Memory = &m
		return
	}
	t.cfg.Memory = DefaultMemory()
	sub.mem = &t.cfg.Memory
	w.walk(secMemory, f, &sub)
}

func mem(set func(m *Memory, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { set(t.mem, v) }
}

func fraction(w *walker, v *value) bool {
	if v.x <= 0 || v.x >= 1 {
		w.errf(v.f, "use a number between 0 and 1, such as 0.75", "%s must be between 0 and 1 (exclusive), not %v", v.f.key, v.x)
		return false
	}
	return true
}

func memoryKeys() []Key {
	return []Key{
		{Section: secMemory, Name: "enabled", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.5",
			Doc: "Turns memory on: facts kept across turns and sessions, and compression.", set: mem(func(m *Memory, v value) { m.Enabled = v.b })},
		{Section: secMemory, Name: "conversation_memory", Type: TypeSwitch, Default: "on", Status: Ignored, Since: "0.1.5",
			Doc: "Short-term memory: each agent's conversation, which this build always keeps."},
		{Section: secMemory, Name: "persistent_memory", Type: TypeMapping, Status: Implemented, Since: "0.1.5", ex: "{enabled: true}",
			Doc: "Long-term memory (see memory.persistent_memory).", raw: coordSub(secMemPersist)},
		{Section: secMemory, Name: "compression", Type: TypeMapping, Status: Implemented, Since: "0.1.5", ex: "{trigger_threshold: 0.75}",
			Doc: "When a conversation is compressed (see memory.compression).", raw: coordSub(secMemCompress)},
		{Section: secMemory, Name: "retrieval", Type: TypeMapping, Status: Implemented, Since: "0.1.5", ex: "{limit: 5}",
			Doc: "What a turn retrieves (see memory.retrieval).", raw: coordSub(secMemRetrieve)},
		{Section: secMemory, Name: "recording", Type: TypeMapping, Status: Implemented, Since: "0.1.9", ex: "{}",
			Doc: "What is recorded (see memory.recording).", raw: coordSub(secMemRecord)},

		{Section: secMemPersist, Name: "enabled", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.5",
			Doc: "Facts extracted after each turn and retrieved in later turns and sessions.", set: mem(func(m *Memory, v value) { m.Persistent = v.b })},
		{Section: secMemPersist, Name: "on_disk", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.5",
			Doc: "Keep the store on disk (false: for this process only).", set: mem(func(m *Memory, v value) { m.InProcess = !v.b })},
		{Section: secMemPersist, Name: "session_name", Type: TypeString, Status: Implemented, Since: "0.1.5",
			Doc: "Share memories between every run that names this session (default: one log session and its --continue turns).",
			set: mem(func(m *Memory, v value) { m.SessionName = v.s })},
		{Section: secMemPersist, Name: "vector_store", Type: TypeEnum, Enum: []string{"qdrant"}, Default: "qdrant", Status: Ignored, Since: "0.1.5",
			Doc: "The vector store: massgen's embedded store (chromem-go) stands in for Qdrant's local mode."},
		{Section: secMemPersist, Name: "llm", Type: TypeMapping, Status: Ignored, Since: "0.1.5", warn: true,
			Doc: "mem0's model for fact extraction.", Why: "facts are extracted by each agent's own model, counted in its cost"},
		{Section: secMemPersist, Name: "embedding", Type: TypeMapping, Status: Implemented, Since: "0.1.5", ex: "{provider: openai}",
			Doc: "The embeddings (see memory.persistent_memory.embedding).", raw: coordSub(secMemEmbed)},
		{Section: secMemPersist, Name: "qdrant", Type: TypeMapping, Status: Implemented, Since: "0.1.5", ex: "{mode: local}",
			Doc: "Qdrant settings (see memory.persistent_memory.qdrant).", raw: coordSub(secMemQdrant)},
		{Section: secMemPersist, Name: "api_key", Type: TypeString, Status: Refused, Since: "0.1.5", Doc: "mem0 platform (cloud) key.",
			Why: "the mem0 cloud platform is not supported", Instead: "remove it; memories are kept in massgen's own store"},

		{Section: secMemEmbed, Name: "provider", Type: TypeString, Status: Implemented, Since: "0.1.5", ex: "openai",
			Doc:   "A backend type with an embeddings API: openai or an OpenAI-compatible type, gemini (default: the agent's backend).",
			check: embeddingProvider, set: mem(func(m *Memory, v value) { m.EmbeddingProvider = v.s })},
		{Section: secMemEmbed, Name: "model", Type: TypeString, Status: Implemented, Since: "0.1.5",
			Doc: "The embedding model (default: text-embedding-3-small, gemini-embedding-001 on gemini).",
			set: mem(func(m *Memory, v value) { m.EmbeddingModel = v.s })},
		{Section: secMemEmbed, Name: "api_key", Type: TypeString, Status: Refused, Since: "0.1.5", Doc: "The embedding provider's key.",
			Instead: "set the provider's key variable (OPENAI_API_KEY, GEMINI_API_KEY, ...)"},

		{Section: secMemQdrant, Name: "mode", Type: TypeEnum, Enum: []string{"server", "local"}, Accept: []string{"local"}, Default: "local",
			Status: Implemented, Since: "0.1.5", Doc: "local: massgen's embedded store.",
			Why: "a Qdrant server is not supported; memories are kept in massgen's embedded store (mode: local)"},
		{Section: secMemQdrant, Name: "host", Type: TypeString, Status: Ignored, Since: "0.1.5", Needs: "mode", Doc: "Qdrant server host."},
		{Section: secMemQdrant, Name: "port", Type: TypeInt, Status: Ignored, Since: "0.1.5", Needs: "mode", Doc: "Qdrant server port."},
		{Section: secMemQdrant, Name: "path", Type: TypeString, Status: Implemented, Since: "0.1.5",
			Doc: "The store's folder (default ~/.massgen/memory).", set: mem(func(m *Memory, v value) { m.StorePath = v.s })},

		{Section: secMemCompress, Name: "trigger_threshold", Type: TypeNumber, Default: "0.75", Status: Implemented, Since: "0.1.5", check: fraction,
			Doc: "Compress when a conversation passes this share of the model's context window.",
			set: mem(func(m *Memory, v value) { m.Compression.Trigger = v.x })},
		{Section: secMemCompress, Name: "target_ratio", Type: TypeNumber, Default: "0.40", Status: Implemented, Since: "0.1.5", check: fraction,
			Doc: "Keep this share of the context window verbatim after compressing.",
			set: mem(func(m *Memory, v value) { m.Compression.Target = v.x })},

		{Section: secMemRetrieve, Name: "limit", Type: TypeInt, Default: "5", Status: Implemented, Since: "0.1.5", check: between(1, 50),
			Doc: "Memories retrieved per agent and turn.", set: mem(func(m *Memory, v value) { m.RetrievalLimit = v.n })},
		{Section: secMemRetrieve, Name: "exclude_recent", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.5",
			Doc: "Leave out the facts of this run's earlier turns while the conversation still holds them.",
			set: mem(func(m *Memory, v value) { m.ExcludeRecent = v.b })},

		{Section: secMemRecord, Name: "record_all_tool_calls", Type: TypeBool, Default: "false", Status: Ignored, Since: "0.1.9", warn: true,
			Doc: "Record every tool call.", Why: "facts are extracted from each agent's question and answer; tool calls are not recorded"},
		{Section: secMemRecord, Name: "record_reasoning", Type: TypeBool, Default: "false", Status: Ignored, Since: "0.1.9", warn: true,
			Doc: "Record reasoning.", Why: "facts are extracted from each agent's question and answer; reasoning is not recorded"},

		{Section: secFSMemory, Name: "enabled", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.33",
			Doc: "Compress conversations near the context window, the dropped messages saved in the agent's workspace.",
			set: func(_ *walker, t *target, v value) { t.cfg.FilesystemMemory.Enabled = v.b }},
		{Section: secFSMemory, Name: "compression", Type: TypeMapping, Status: Implemented, Since: "0.1.33", ex: "{target_ratio: 0.2}",
			Doc: "When (see filesystem_memory.compression).", raw: coordSub(secFSCompress)},
		{Section: secFSCompress, Name: "trigger_threshold", Type: TypeNumber, Default: "0.75", Status: Implemented, Since: "0.1.33", check: fraction,
			Doc: "Compress past this share of the context window.",
			set: func(_ *walker, t *target, v value) { t.cfg.FilesystemMemory.Compression.Trigger = v.x }},
		{Section: secFSCompress, Name: "target_ratio", Type: TypeNumber, Default: "0.20", Status: Implemented, Since: "0.1.33", check: fraction,
			Doc: "Keep this share verbatim.", set: func(_ *walker, t *target, v value) { t.cfg.FilesystemMemory.Compression.Target = v.x }},
	}
}

// filesystemMemoryBlock reads filesystem_memory:, on when present (MassGen's rule).
func filesystemMemoryBlock(w *walker, t *target, f field) {
	t.cfg.FilesystemMemory = FilesystemMemory{Enabled: true, Compression: Compression{Trigger: 0.75, Target: 0.20}}
	if f.val == nil {
		return
	}
	w.walk(secFSMemory, f, t)
}

var embeddingTypes = []string{ProtocolResponses, ProtocolChat, ProtocolGemini}

func embeddingProvider(w *walker, v *value) bool {
	bt, ok := BackendTypes[v.s]
	if !ok || !slices.Contains(embeddingTypes, bt.Protocol) {
		w.errf(v.f, "use openai, gemini or an OpenAI-compatible backend type (together, ...)", "embedding provider `%s` has no embeddings API massgen can call", v.s)
		return false
	}
	return true
}

// compressionAfter checks that compressing keeps less than it starts from.
func compressionAfter(w *walker, t *target, f field, present map[string]field) {
	c := t.cfg.FilesystemMemory.Compression
	if t.mem != nil {
		c = t.mem.Compression
	}
	if g, ok := present["target_ratio"]; ok && c.Target >= c.Trigger {
		w.errf(g, "make target_ratio smaller than trigger_threshold", "target_ratio %v must be below trigger_threshold %v", c.Target, c.Trigger)
	}
}
