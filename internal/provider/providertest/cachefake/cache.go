// Package cachefake is a test fake of the providers' prompt caches as they behave on the
// wire, and of the HTTP servers that report them: Anthropic's Messages API, which caches at
// the cache_control breakpoints a request carries, and OpenAI's Responses API, which caches
// every long prompt's prefix by itself. What separates them from a best-case cache is what a
// real API does too: an entry is written by a request and becomes readable only once the
// response that wrote it has been streamed, a cache belongs to one model, short prefixes are
// not cached at all and long ones only in the steps each API allows.
//
// Tokens are counted as bytes/4 of each block's JSON (object keys sorted, no cache_control),
// the rule of thumb massgen's own estimates use: deterministic, and close enough to a real
// tokenizer for ratios between layouts.
package cachefake

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
)

// Tokens is the token count of n bytes of prompt.
func Tokens(n int) int64 { return int64(n / 4) }

// MinTokens is the shortest prefix either API caches (Claude Sonnet and Opus 4.1 and older,
// every OpenAI model); Claude Haiku 3.5 needs 2,048, Opus 4.5 and Haiku 4.5 4,096.
const MinTokens = 1024

// MaxBreakpoints is how many cache_control markers one Messages request may carry.
const MaxBreakpoints = 4

// Lookback is how many block boundaries before a breakpoint the Messages API checks for an
// entry that an earlier request wrote.
const Lookback = 20

// Increment is the step of OpenAI's cached prefixes past the first MinTokens.
const Increment = 128

// Block is one cacheable unit of an Anthropic request, in cache order (tools, system, then
// each message's content blocks): its canonical text and whether it carries cache_control.
type Block struct {
	Text       string
	Breakpoint bool
}

// AnthropicUsage is a Messages response's input usage, as the API reports it: Input excludes
// what was read from the cache and what was written to it.
type AnthropicUsage struct {
	Input, CacheRead, CacheCreation int64
}

// Total is every input token of the request.
func (u AnthropicUsage) Total() int64 { return u.Input + u.CacheRead + u.CacheCreation }

// Anthropic is the Messages API's prompt cache of every model. It is safe for concurrent use.
type Anthropic struct {
	mu      sync.Mutex
	entries map[string]bool // model + prefix hash, readable
}

// Lookup prices a request of model made of blocks and returns what the API reports, and
// commit, which makes the entries the request wrote readable: the server calls it once the
// response has been streamed. A request with more than MaxBreakpoints is refused as the API
// refuses it.
//
// Reads: for each breakpoint, the longest prefix ending at one of the Lookback block
// boundaries up to it that an earlier, committed request wrote. Writes: each breakpoint's
// prefix of at least MinTokens past what was read; CacheCreation is the tokens from the read
// to the last such breakpoint.
func (c *Anthropic) Lookup(model string, blocks []Block) (u AnthropicUsage, commit func(), err error) {
	var bps []int
	for k, b := range blocks {
		if b.Breakpoint {
			bps = append(bps, k)
		}
	}
	if len(bps) > MaxBreakpoints {
		return u, nil, fmt.Errorf("a maximum of %d blocks with cache_control may be provided, found %d", MaxBreakpoints, len(bps))
	}
	keys, ends := prefixes(model, blocks)
	c.mu.Lock()
	defer c.mu.Unlock()
	read := -1 // the block the read prefix ends with
	for _, b := range bps {
		for j := b; j >= 0 && j > b-Lookback && j > read; j-- {
			if c.entries[keys[j]] {
				read = j
				break
			}
		}
	}
	var readTokens int64
	if read >= 0 {
		readTokens = ends[read]
	}
	var writes []string
	written := readTokens
	for _, b := range bps {
		if b > read && ends[b] >= MinTokens {
			writes = append(writes, keys[b])
			written = ends[b]
		}
	}
	total := int64(0)
	if len(ends) > 0 {
		total = ends[len(ends)-1]
	}
	u = AnthropicUsage{CacheRead: readTokens, CacheCreation: written - readTokens, Input: total - written}
	return u, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.entries == nil {
			c.entries = map[string]bool{}
		}
		for _, k := range writes {
			c.entries[k] = true
		}
	}, nil
}

// prefixes returns, for each block, the key of the prefix that ends with it and its tokens.
func prefixes(model string, blocks []Block) (keys []string, ends []int64) {
	h := sha256.New()
	h.Write([]byte(model))
	n := 0
	for _, b := range blocks {
		fmt.Fprintf(h, "\x00%d:%s", len(b.Text), b.Text)
		n += len(b.Text)
		keys = append(keys, fmt.Sprintf("%x", h.Sum(nil)))
		ends = append(ends, Tokens(n))
	}
	return keys, ends
}

// OpenAI is the automatic prompt cache of OpenAI's models: a prompt of at least MinTokens
// reads the longest prefix it shares with an earlier, completed prompt of the same model, in
// steps of Increment past the first MinTokens. It is safe for concurrent use.
type OpenAI struct {
	mu   sync.Mutex
	seen map[string][]string // by model, sorted: the longest shared prefix is with a neighbour
}

// Lookup returns the tokens of prompt, how many of them were cached, and commit, which makes
// prompt readable by later requests: the server calls it once the response has been streamed.
func (c *OpenAI) Lookup(model, prompt string) (input, cached int64, commit func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := c.seen[model]
	k, _ := slices.BinarySearch(seen, prompt)
	common := 0
	if k > 0 {
		common = commonPrefix(seen[k-1], prompt)
	}
	if k < len(seen) {
		common = max(common, commonPrefix(seen[k], prompt))
	}
	return Tokens(len(prompt)), Step(Tokens(common)), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.seen == nil {
			c.seen = map[string][]string{}
		}
		s := c.seen[model]
		if k, found := slices.BinarySearch(s, prompt); !found {
			c.seen[model] = slices.Insert(s, k, prompt)
		}
	}
}

// Step is how much of a shared prefix of n tokens OpenAI reports as cached: none below
// MinTokens, else MinTokens plus whole Increments.
func Step(n int64) int64 {
	if n < MinTokens {
		return 0
	}
	return MinTokens + (n-MinTokens)/Increment*Increment
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
