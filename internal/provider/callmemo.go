package provider

import "sync"

// CallMemo keeps what a backend must send back with a tool call in a later request but the
// neutral Message has no place for (Claude's thinking blocks, Gemini's thought signatures),
// keyed by call ID. It holds the Size most recently stored calls; older ones are forgotten, as
// only the latest turns of a conversation come back. Safe for concurrent use.
type CallMemo[V any] struct {
	Size int

	mu    sync.Mutex
	byID  map[string]V
	order []string // IDs, oldest first
}

// Put stores v for the call id, replacing what was there.
func (m *CallMemo[V]) Put(id string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string]V{}
	}
	if _, ok := m.byID[id]; !ok {
		m.order = append(m.order, id)
	}
	m.byID[id] = v
	for len(m.order) > max(m.Size, 1) {
		delete(m.byID, m.order[0])
		m.order = m.order[1:]
	}
}

// Get returns what was stored for the call id, or the zero value.
func (m *CallMemo[V]) Get(id string) V {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byID[id]
}

// Len is the number of calls held.
func (m *CallMemo[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}
