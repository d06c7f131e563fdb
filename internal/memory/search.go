package memory

import (
	"slices"
	"strings"
)

// Search ranks ms by how many of the query's words each holds (case-insensitive), best
// first, at most limit: what `massgen memory search` and the studio's Memory page find. It
// matches words, offline and free; agents retrieve memories by meaning (Recall).
func Search(ms []Memory, query string, limit int) []Memory {
	words := strings.Fields(strings.ToLower(query))
	type scored struct {
		m Memory
		n int
	}
	var hits []scored
	for _, m := range ms {
		text, n := strings.ToLower(m.Text), 0
		for _, w := range words {
			if strings.Contains(text, w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, scored{m, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return b.n - a.n })
	out := make([]Memory, 0, min(limit, len(hits)))
	for _, h := range hits[:min(max(limit, 0), len(hits))] {
		out = append(out, h.m)
	}
	return out
}
