package event

// Memory events: what persistent memory stored and retrieved for an agent, a conversation
// compressed to fit its context window, and memory's troubles, which never stop a session.

// MemoryRetrieved: memories put into an agent's system prompt at the start of a turn.
type MemoryRetrieved struct {
	Agent string `json:"agent"`
	Count int    `json:"count"`
	// Facts are the memories' texts (already free of secrets).
	Facts []string `json:"facts,omitempty"`
}

// MemoryStored: facts extracted from an agent's turn and stored.
type MemoryStored struct {
	Agent  string   `json:"agent"`
	Count  int      `json:"count"`
	Facts  []string `json:"facts,omitempty"`
	Winner bool     `json:"winner,omitempty"`
}

// ContextCompressed: an agent's conversation summarised to fit its model's context window.
type ContextCompressed struct {
	Agent        string `json:"agent"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	Window       int    `json:"window"`
	Messages     int    `json:"messages"`        // messages summarised
	Saved        string `json:"saved,omitempty"` // where their full text is
}

// MemoryTrouble: memory could not do something (a store set aside, an embeddings endpoint
// that failed, a summary that failed); the session goes on without it.
type MemoryTrouble struct {
	Agent   string `json:"agent,omitempty"`
	Stage   string `json:"stage"` // "store", "retrieve", "remember", "compress"
	Message string `json:"message"`
}

func (MemoryRetrieved) Type() string   { return "memory_retrieved" }
func (MemoryStored) Type() string      { return "memory_stored" }
func (ContextCompressed) Type() string { return "context_compressed" }
func (MemoryTrouble) Type() string     { return "memory_trouble" }
