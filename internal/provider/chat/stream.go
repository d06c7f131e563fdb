package chat

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"massgen/internal/provider"
)

// errNoFinish is a stream that ended cleanly but without a finish reason: cut short by a proxy
// or a server that gave up, so the response cannot be trusted to be complete.
var errNoFinish = errors.New("stream: ended without a finish reason")

// reasoningFields are the non-standard delta fields that carry reasoning text, in order of
// preference: DeepSeek, vLLM, SGLang and Qwen send reasoning_content; OpenRouter, Groq and
// newer vLLM send reasoning (some send both with the same text, so only one is read).
var reasoningFields = []string{"reasoning_content", "reasoning"}

// translator turns the chunks of one Chat Completions stream into provider chunks. Text and
// reasoning go out as they arrive; tool calls, usage and Done when the stream ends, so a
// ToolCallChunk is always a complete call of a complete response.
type translator struct {
	calls     []*pendingCall         // in order of first appearance
	open      map[int64]*pendingCall // by the index the wire gives each call
	finish    string
	usage     *provider.Usage // from the standard usage field, the last one seen
	groqUsage *provider.Usage // from x_groq.usage, used when no standard usage came
	citations []string        // xAI live search, OpenRouter's web plugin: the sources the answer used

	// budget bounds what the response brings in, the calls assembled here included (nil:
	// unbounded, for tests of the translation alone).
	budget *provider.Budget
}

type pendingCall struct {
	id, name string
	args     strings.Builder
}

// add reads one chunk. It returns the chunks to emit now, and an error when the service said
// the response failed.
func (t *translator) add(c openai.ChatCompletionChunk) ([]provider.Chunk, error) {
	var out []provider.Chunk
	// Usage comes in a last chunk with no choices when stream_options.include_usage is set;
	// some servers put it on the last choice chunk instead. Both are read here.
	if c.JSON.Usage.Valid() {
		u := fromWireUsage(c.Usage)
		t.usage = &u
	} else if raw := extraField(c.JSON.ExtraFields, "x_groq"); raw != "" {
		var xg struct {
			Usage *openai.CompletionUsage `json:"usage"`
		}
		if json.Unmarshal([]byte(raw), &xg) == nil && xg.Usage != nil {
			u := fromWireUsage(*xg.Usage)
			t.groqUsage = &u
		}
	}
	if raw := extraField(c.JSON.ExtraFields, "citations"); raw != "" {
		var urls []string
		if json.Unmarshal([]byte(raw), &urls) == nil {
			t.citations = urls
		}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // n > 1 is never requested; only the first choice is the answer
		}
		d := ch.Delta
		t.annotations(extraField(d.JSON.ExtraFields, "annotations"))
		if err := t.spend(d); err != nil {
			return out, err
		}
		if r := reasoningText(d); r != "" {
			out = append(out, provider.ReasoningDelta{Text: r})
		}
		if d.Content != "" {
			out = append(out, provider.TextDelta{Text: d.Content})
		}
		if d.Refusal != "" {
			out = append(out, provider.TextDelta{Text: d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			if p, ok := t.addCall(tc); ok {
				out = append(out, p)
			}
		}
		switch ch.FinishReason {
		case "":
		case "error":
			// OpenRouter ends a response whose upstream failed this way.
			return out, errors.New("stream: the service ended the response with finish_reason error")
		default:
			t.finish = ch.FinishReason
		}
	}
	return out, nil
}

// callOverhead is what each call costs the budget besides its bytes, so that a stream of empty
// fragments, each opening a call, cannot grow the list of calls for free.
const callOverhead = 64

// spend takes from the budget what delta d adds to the response, before any of it is kept.
func (t *translator) spend(d openai.ChatCompletionChunkChoiceDelta) error {
	if t.budget == nil {
		return nil
	}
	n := len(d.Content) + len(d.Refusal) + len(reasoningText(d))
	for _, tc := range d.ToolCalls {
		n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
		if pc := t.open[tc.Index]; pc == nil || tc.ID != "" && pc.id != "" && tc.ID != pc.id {
			n += callOverhead // addCall opens a call
		}
	}
	return t.budget.Spend(n)
}

// addCall adds one tool call fragment. The first fragment of a call carries its ID and name,
// later ones only pieces of the arguments, all under the call's index. A fragment with a new
// ID at an index already in use starts another call (some servers send every call at index 0).
// It returns the progress to report, if the call's arguments passed a step.
func (t *translator) addCall(d openai.ChatCompletionChunkChoiceDeltaToolCall) (provider.ToolCallProgress, bool) {
	pc := t.open[d.Index]
	if pc == nil || (d.ID != "" && pc.id != "" && d.ID != pc.id) {
		pc = &pendingCall{}
		if t.open == nil {
			t.open = map[int64]*pendingCall{}
		}
		t.open[d.Index] = pc
		t.calls = append(t.calls, pc)
	}
	if pc.id == "" {
		pc.id = d.ID
	}
	// Some servers repeat the whole name in every fragment; others could split it.
	if n := d.Function.Name; n != "" && n != pc.name {
		pc.name += n
	}
	before := pc.args.Len()
	pc.args.WriteString(d.Function.Arguments)
	return provider.Progress(pc.id, pc.name, before, pc.args.Len())
}

// end is called when the stream ended without an error. A response without a finish reason is
// incomplete; otherwise the tool calls, the usage and Done go out.
func (t *translator) end() ([]provider.Chunk, error) {
	if t.finish == "" {
		return nil, errNoFinish
	}
	var out []provider.Chunk
	u := t.usage
	if u == nil {
		u = t.groqUsage
	}
	if len(t.citations) > 0 || u != nil && u.WebSearches > 0 {
		// xAI searched on its side; the stream says only what it used, at the end.
		out = append(out, provider.HostedToolChunk{
			Call:   provider.ToolCall{Name: provider.HostedWebSearch, Arguments: `{"mode":"auto"}`},
			Result: provider.SearchSummary(sources(t.citations)),
		})
	}
	for _, pc := range t.calls {
		if pc.name == "" && pc.args.Len() == 0 {
			continue
		}
		out = append(out, provider.ToolCallChunk{Call: provider.ToolCall{ID: pc.id, Name: pc.name, Arguments: pc.args.String()}})
	}
	if u != nil {
		out = append(out, provider.UsageChunk{Usage: *u})
	}
	return append(out, provider.Done{StopReason: t.finish}), nil
}

// sources are the cited URLs, which xAI gives without titles.
func sources(urls []string) []provider.Source {
	out := make([]provider.Source, len(urls))
	for i, u := range urls {
		out[i] = provider.Source{URL: u}
	}
	return out
}

// reasoningText is the reasoning text of a delta, from the first non-empty reasoning field.
func reasoningText(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, k := range reasoningFields {
		var s string
		if raw := extraField(d.JSON.ExtraFields, k); raw != "" && json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// extraField is the raw JSON of a field the SDK does not know, "" when it is absent or null.
// (The SDK marks every extra field invalid, so Field.Valid cannot tell.)
// annotations takes the url_citation annotations OpenRouter's web plugin streams in a delta.
func (t *translator) annotations(raw string) {
	if raw == "" {
		return
	}
	var anns []struct {
		Type        string `json:"type"`
		URLCitation struct {
			URL string `json:"url"`
		} `json:"url_citation"`
	}
	if json.Unmarshal([]byte(raw), &anns) != nil {
		return
	}
	for _, a := range anns {
		if u := a.URLCitation.URL; a.Type == "url_citation" && u != "" && !slices.Contains(t.citations, u) && len(t.citations) < maxCitations {
			t.citations = append(t.citations, u)
		}
	}
}

// maxCitations bounds the sources kept from a stream.
const maxCitations = 100

func extraField(fields map[string]respjson.Field, name string) string {
	raw := fields[name].Raw()
	if raw == "null" {
		return ""
	}
	return raw
}

// fromWireUsage maps the wire usage. prompt_tokens already includes cached tokens and
// completion_tokens reasoning tokens, as provider.Usage wants, except at xAI. DeepSeek reports its cache hits
// as prompt_cache_hit_tokens instead of prompt_tokens_details.cached_tokens.
func fromWireUsage(w openai.CompletionUsage) provider.Usage {
	u := provider.Usage{
		InputTokens:       w.PromptTokens,
		CachedInputTokens: w.PromptTokensDetails.CachedTokens,
		CacheWriteTokens:  w.PromptTokensDetails.CacheWriteTokens,
		OutputTokens:      w.CompletionTokens,
		ReasoningTokens:   w.CompletionTokensDetails.ReasoningTokens,
	}
	if r := u.ReasoningTokens; r > 0 && w.TotalTokens == w.PromptTokens+w.CompletionTokens+r {
		// xAI counts reasoning outside completion_tokens (the total gives it away); it is
		// billed as output all the same.
		u.OutputTokens += r
	}
	if raw := extraField(w.JSON.ExtraFields, "num_sources_used"); raw != "" {
		_ = json.Unmarshal([]byte(raw), &u.WebSearches) // xAI bills live search per source
	}
	if u.CachedInputTokens == 0 {
		if raw := extraField(w.JSON.ExtraFields, "prompt_cache_hit_tokens"); raw != "" {
			var n int64
			if json.Unmarshal([]byte(raw), &n) == nil {
				u.CachedInputTokens = n
			}
		}
	}
	return u
}
