package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"massgen/internal/provider"
	"massgen/internal/usage"
)

// promptCache simulates a provider's automatic prefix cache for one model: a request's cached
// tokens are the longest prefix it shares with any earlier request (in arrival order), laid out
// in provider order (tools, system, messages). Tokens are counted as bytes/4, the rule of thumb
// the engine's own estimates use. Real caches work in blocks (Anthropic: at cache_control
// breakpoints; OpenAI: 128-token steps past the first 1,024), so this is the best case a
// request layout allows, which is what a layout comparison needs.
type promptCache struct {
	mu   sync.Mutex
	seen []string // every request so far, sorted: the longest shared prefix is with a neighbour
}

// lookup returns the tokens of req and how many of them were cached, and records req.
func (c *promptCache) lookup(req provider.Request) (input, cached int64) {
	s := layout(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	k, found := slices.BinarySearch(c.seen, s)
	best := 0
	if found {
		best = len(s)
	} else {
		if k > 0 {
			best = commonPrefix(c.seen[k-1], s)
		}
		if k < len(c.seen) {
			best = max(best, commonPrefix(c.seen[k], s))
		}
		c.seen = slices.Insert(c.seen, k, s)
	}
	return usage.Tokens(len(s)), int64(best / 4) // whole tokens the prefix covers
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// layout is req as a provider lays it out for its cache: tools, system, then the messages.
func layout(req provider.Request) string {
	var b strings.Builder
	tools, _ := json.Marshal(req.Tools)
	b.Write(tools)
	b.WriteString("\x00")
	b.WriteString(req.System)
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "\x00%s:%s:%s", m.Role, m.ToolCallID, m.Content)
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "\x01%s:%s:%s", tc.ID, tc.Name, tc.Arguments)
		}
	}
	return b.String()
}

const tokenLatency = 5 * time.Millisecond

// tokenAgent is a deterministic agent on a caching model: it answers once with its answer,
// then votes for the first label it is offered; it presents with a short text. It reports the
// simulated usage of every call, cached tokens included.
type tokenAgent struct {
	cache  *promptCache
	answer string
	mu     sync.Mutex
	done   bool // its answer was sent
}

func (a *tokenAgent) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		// A moment's latency, so that every agent's first request is out before any answer
		// lands, as with a real model: the rounds stay apart and every run bills the same.
		if !sleep(ctx, tokenLatency) {
			yield(nil, ctx.Err())
			return
		}
		input, cached := a.cache.lookup(req)
		var st step
		a.mu.Lock()
		switch {
		case req.Stage == provider.StagePresentation:
			st = step{text: "The final answer."}
		case !a.done || len(labels(req)) == 0:
			a.done = true
			st = answer(a.answer)
			st.text = ""
		default:
			st = vote(labels(req)[0], "complete and correct")
		}
		a.mu.Unlock()
		if st.text != "" && !yield(provider.TextDelta{Text: st.text}, nil) {
			return
		}
		out := len(st.text)
		for _, c := range st.calls {
			out += len(c.Arguments)
			if !yield(provider.ToolCallChunk{Call: c}, nil) {
				return
			}
		}
		u := provider.Usage{InputTokens: input, CachedInputTokens: cached, OutputTokens: usage.Tokens(out)}
		if !yield(provider.UsageChunk{Usage: u}, nil) {
			return
		}
		yield(provider.Done{StopReason: "stop"}, nil)
	}
}
