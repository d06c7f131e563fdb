package engine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// A provider's prompt cache holds a prefix only once the request that wrote it has been
// processed: requests sent together, as a vote round's are when every agent wakes on the same
// answers, all pay for the shared prefix (the task and every answer) in full, and none reads
// it from the others. prefixGate lets the first of them go and holds the others until its
// call is over, so that they read what it wrote: on a model the agents share, a vote round
// then writes the answers once instead of once per agent. It holds a request back only when
// that saves something: its prefix holds answers (a turn that offers a vote), is long enough
// for a provider to cache it, and another agent on the same model is writing that very
// prefix. Answer rounds, whose calls are long and whose prefix holds no answer, never wait.

// minCachedPrefix is the shortest prefix the providers cache (Anthropic's Sonnet and Opus,
// OpenAI's models), in estimated tokens: shorter prefixes are not worth a wait.
const minCachedPrefix = 1024

// maxPrefixWait bounds how long a request waits for another agent's call to write its
// prefix: a vote call is over in seconds; a call that writes a long answer is not waited for
// to its end.
const maxPrefixWait = 15 * time.Second

// prefixGate tracks, by prefix, the calls writing it now. The zero value is ready to use.
type prefixGate struct {
	mu      sync.Mutex
	writing map[string]chan struct{} // closed when the call writing the prefix is over
}

// enter is called before a request whose shared prefix has key ("" for a request that never
// waits). When another call is writing that prefix it waits for that call to end (at most
// maxPrefixWait, or until ctx ends); otherwise the request becomes the prefix's writer. The
// caller calls the returned function once its call is over.
func (g *prefixGate) enter(ctx context.Context, key string) (done func()) {
	if key == "" {
		return func() {}
	}
	g.mu.Lock()
	if ch, ok := g.writing[key]; ok {
		g.mu.Unlock()
		t := time.NewTimer(maxPrefixWait)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
		}
		return func() {}
	}
	if g.writing == nil {
		g.writing = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	g.writing[key] = ch
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.writing, key)
		close(ch)
	}
}

// turnPrefixKey is prefixKey for a turn's request, "" when the turn offers no vote: its prefix
// holds no answer, and its call writes a whole answer, too long to wait for.
func turnPrefixKey(a Agent, c *conversation, req provider.Request) string {
	if len(c.labels) == 0 || config.BackendTypes[a.Backend].KeyOptional {
		// A server on the user's machine (and the scripted backend) bills nothing for a
		// prefix it reads again: holding a request back would only make it later.
		return ""
	}
	return prefixKey(a.Backend, req)
}

// prefixKey names the prefix req shares with other agents' requests on the same model (its
// system prompt, tools and messages up to the last one marked Stable), or "" when there is
// none worth waiting for: no Stable message, or one too short to be cached.
func prefixKey(backend string, req provider.Request) string {
	last := -1
	for k, m := range req.Messages {
		if m.Stable {
			last = k
		}
	}
	if last < 0 {
		return ""
	}
	tools, _ := json.Marshal(req.Tools)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d:%s\x00%d:%s", backend, req.Model, len(req.System), req.System, len(tools), tools)
	size := len(req.System) + len(tools)
	for _, m := range req.Messages[:last+1] {
		fmt.Fprintf(h, "\x00%s:%d:%s", m.Role, len(m.Content), m.Content)
		size += len(m.Content)
	}
	if usage.Tokens(size) < minCachedPrefix {
		return ""
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
