package anthropic

import (
	"cmp"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"massgen/internal/provider"
)

// block is one content block of the streamed message, as far as it has arrived.
type block struct {
	kind      string // text, thinking, redacted_thinking, tool_use, server_tool_use, ...
	id, name  string
	args      strings.Builder // tool_use and server_tool_use input, from input_json_delta fragments
	thinking  strings.Builder
	signature string
	data      string // redacted_thinking
	input     string // a tool_use or server_tool_use input given whole in content_block_start
}

// arguments is the block's input as the model wrote it: the deltas, else the input the start
// gave whole, else {}.
func (b *block) arguments() string {
	if args := b.args.String(); strings.TrimSpace(args) != "" {
		return args
	}
	return cmp.Or(b.input, "{}")
}

// translator maps Messages stream events to neutral chunks. It is a pure state machine: one
// event in, zero or more chunks out.
type translator struct {
	blocks map[int64]*block
	order  []*block // in index order of arrival, for the thinking memo
	// servers are the server_tool_use blocks still waiting for their result, by ID.
	servers map[string]*block

	input, cacheRead, cacheWrite, output, reasoning, searches int64
	stop                                                      string
	// done is set by message_stop: the stream ended properly.
	done bool

	// budget bounds what the whole turn brings in, continuations included, the tool calls
	// assembled here and what the SDK's accumulator keeps of a paused turn too (nil:
	// unbounded, for tests of the translation alone).
	budget *provider.Budget
}

func newTranslator() *translator {
	return &translator{blocks: map[int64]*block{}, servers: map[string]*block{}}
}

// next readies the translator for the continuation of a paused turn. Blocks and usage belong
// to one message; the thinking seen so far and the server calls still waiting (a result may
// arrive in the continuation) belong to the whole turn.
func (t *translator) next() {
	*t = translator{blocks: map[int64]*block{}, order: t.order, servers: t.servers, budget: t.budget}
}

// spend takes from the budget what ev adds to the response. It must come before the event is
// kept anywhere, here or in the SDK's accumulator.
func (t *translator) spend(ev sdk.MessageStreamEventUnion) error {
	if t.budget == nil {
		return nil
	}
	switch ev.Type {
	case "content_block_start":
		// The whole block: a hosted tool's result arrives in it, and the accumulator keeps it.
		return t.budget.Spend(len(ev.ContentBlock.RawJSON()))
	case "content_block_delta":
		d := ev.Delta
		return t.budget.Spend(len(d.Text) + len(d.Thinking) + len(d.PartialJSON) + len(d.Signature) + len(d.Citation.RawJSON()))
	}
	return nil
}

// event translates one stream event. An error means the stream is malformed.
func (t *translator) event(ev sdk.MessageStreamEventUnion) ([]provider.Chunk, error) {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		t.input, t.cacheRead, t.cacheWrite = u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens
		t.output, t.reasoning = u.OutputTokens, u.OutputTokensDetails.ThinkingTokens
		t.searches = u.ServerToolUse.WebSearchRequests
	case "content_block_start":
		return t.start(ev)
	case "content_block_delta":
		return t.delta(ev)
	case "content_block_stop":
		b, ok := t.blocks[ev.Index]
		if !ok {
			return nil, fmt.Errorf("content_block_stop for unknown block %d", ev.Index)
		}
		if b.kind == "tool_use" {
			return []provider.Chunk{provider.ToolCallChunk{Call: provider.ToolCall{ID: b.id, Name: b.name, Arguments: b.arguments()}}}, nil
		}
	case "message_delta":
		if r := string(ev.Delta.StopReason); r != "" {
			t.stop = r
		}
		// Usage here is cumulative; the fields it carries replace those of message_start.
		u := ev.Usage
		set := func(dst *int64, v int64, valid bool) {
			if valid {
				*dst = v
			}
		}
		set(&t.input, u.InputTokens, u.JSON.InputTokens.Valid())
		set(&t.cacheRead, u.CacheReadInputTokens, u.JSON.CacheReadInputTokens.Valid())
		set(&t.cacheWrite, u.CacheCreationInputTokens, u.JSON.CacheCreationInputTokens.Valid())
		set(&t.output, u.OutputTokens, u.JSON.OutputTokens.Valid())
		set(&t.reasoning, u.OutputTokensDetails.ThinkingTokens, u.OutputTokensDetails.JSON.ThinkingTokens.Valid())
		set(&t.searches, u.ServerToolUse.WebSearchRequests, u.ServerToolUse.JSON.WebSearchRequests.Valid())
	case "message_stop":
		t.done = true
		return []provider.Chunk{provider.UsageChunk{Usage: t.usage()}, provider.Done{StopReason: t.stop}}, nil
	}
	// ping is filtered by the SDK; unknown event types are ignored, as the API asks.
	return nil, nil
}

func (t *translator) start(ev sdk.MessageStreamEventUnion) ([]provider.Chunk, error) {
	if _, dup := t.blocks[ev.Index]; dup {
		return nil, fmt.Errorf("content_block_start repeats block %d", ev.Index)
	}
	cb := ev.ContentBlock
	b := &block{kind: cb.Type, id: cb.ID, name: cb.Name, signature: cb.Signature, data: cb.Data}
	t.blocks[ev.Index] = b
	t.order = append(t.order, b)
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			return []provider.Chunk{provider.TextDelta{Text: cb.Text}}, nil
		}
	case "thinking":
		if cb.Thinking != "" {
			b.thinking.WriteString(cb.Thinking)
			return []provider.Chunk{provider.ReasoningDelta{Text: cb.Thinking}}, nil
		}
	case "tool_use", "server_tool_use":
		if b.id == "" || b.name == "" {
			return nil, fmt.Errorf("%s block %d without id or name", cb.Type, ev.Index)
		}
		// The start carries an empty input and deltas the real one; a non-empty input here
		// stands only if no delta follows.
		if raw := strings.TrimSpace(cb.JSON.Input.Raw()); raw != "" && raw != "{}" && raw != "null" {
			b.input = raw
		}
		if cb.Type == "server_tool_use" {
			t.servers[b.id] = b
		}
	default:
		if name, ok := hostedResults[cb.Type]; ok {
			c, err := t.hostedResult(name, cb.RawJSON())
			if err != nil {
				return nil, fmt.Errorf("%s block %d: %w", cb.Type, ev.Index, err)
			}
			return []provider.Chunk{c}, nil
		}
	}
	return nil, nil
}

func (t *translator) delta(ev sdk.MessageStreamEventUnion) ([]provider.Chunk, error) {
	b, ok := t.blocks[ev.Index]
	if !ok {
		return nil, fmt.Errorf("content_block_delta for unknown block %d", ev.Index)
	}
	d := ev.Delta
	switch d.Type {
	case "text_delta":
		if d.Text != "" {
			return []provider.Chunk{provider.TextDelta{Text: d.Text}}, nil
		}
	case "thinking_delta":
		if d.Thinking != "" {
			b.thinking.WriteString(d.Thinking)
			return []provider.Chunk{provider.ReasoningDelta{Text: d.Thinking}}, nil
		}
	case "signature_delta":
		b.signature += d.Signature
	case "input_json_delta":
		if b.kind == "tool_use" || b.kind == "server_tool_use" {
			before := b.args.Len()
			b.args.WriteString(d.PartialJSON)
			if p, ok := provider.Progress(b.id, b.name, before, b.args.Len()); ok && b.kind == "tool_use" {
				return []provider.Chunk{p}, nil
			}
		}
	}
	// citations_delta: the text they cite has arrived as text; the sources were reported with
	// the search that found them.
	return nil, nil
}

// usage is the call's usage in neutral terms: input includes cache reads and writes, output
// includes thinking.
func (t *translator) usage() provider.Usage {
	return provider.Usage{
		InputTokens:       t.input + t.cacheRead + t.cacheWrite,
		CachedInputTokens: t.cacheRead,
		CacheWriteTokens:  t.cacheWrite,
		OutputTokens:      t.output,
		ReasoningTokens:   t.reasoning,
		WebSearches:       t.searches,
	}
}

// thinkingBlocks returns the thinking blocks of the message and the IDs of its tool calls.
func (t *translator) thinkingBlocks() (blocks []thought, callIDs []string) {
	for _, b := range t.order {
		switch b.kind {
		case "thinking":
			blocks = append(blocks, thought{text: b.thinking.String(), signature: b.signature})
		case "redacted_thinking":
			blocks = append(blocks, thought{redacted: b.data})
		case "tool_use":
			callIDs = append(callIDs, b.id)
		}
	}
	return blocks, callIDs
}

// thought is one thinking or redacted_thinking block as the API returned it.
type thought struct{ text, signature, redacted string }

// memoSize bounds the thinking memo: only the latest responses of a conversation matter.
const memoSize = 64

// thinkingMemo remembers the thinking blocks that preceded tool calls. With extended thinking
// on, the API requires the assistant turn that made a call to be sent back with its thinking
// blocks, unmodified, when the conversation continues with the call's result; the neutral
// Message has no place for them, so the backend keeps them, keyed by call ID.
//
// Hosted tool blocks of that turn are not kept: the API rejects a server_tool_use sent without
// its result but accepts the pair left out, and what the model learned from it is in its text.
type thinkingMemo struct{ calls provider.CallMemo[[]thought] }

func newThinkingMemo() *thinkingMemo {
	return &thinkingMemo{calls: provider.CallMemo[[]thought]{Size: memoSize}}
}

func (m *thinkingMemo) remember(blocks []thought, callIDs []string) {
	if len(blocks) == 0 || len(callIDs) == 0 {
		return
	}
	m.calls.Put(callIDs[0], blocks)
}

// lookup returns fresh wire blocks for the thinking that preceded the call with this ID.
func (m *thinkingMemo) lookup(callID string) []sdk.ContentBlockParamUnion {
	blocks := m.calls.Get(callID)
	out := make([]sdk.ContentBlockParamUnion, 0, len(blocks))
	for _, b := range blocks {
		if b.redacted != "" {
			out = append(out, sdk.NewRedactedThinkingBlock(b.redacted))
		} else {
			out = append(out, sdk.NewThinkingBlock(b.signature, b.text))
		}
	}
	return out
}
