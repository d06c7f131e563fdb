package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// enable_web_search on grok asks xAI's live search for citations; the sources it used come
// back as one hosted web search, billed per source.
func TestStream_GrokLiveSearch(t *testing.T) {
	url, reqs := serveSSE(t, providertest.Transcript(t, "grok", "live_search.sse"))
	p := mustNew(t, provider.Options{Type: "grok", Model: "grok-4", APIKey: "k", BaseURL: url, WebSearch: true})
	got, body := streamOnce(t, p, reqs)
	if diff := cmp.Diff(map[string]any{"mode": "auto", "return_citations": true}, body["search_parameters"]); diff != "" {
		t.Errorf("search_parameters (-want +got):\n%s", diff)
	}
	want := []provider.Chunk{
		provider.ReasoningDelta{Text: "Searching recent sources."},
		provider.TextDelta{Text: "Paris is the capital"},
		provider.TextDelta{Text: " of France [1]."},
		provider.HostedToolChunk{
			Call: provider.ToolCall{Name: provider.HostedWebSearch, Arguments: `{"mode":"auto"}`},
			Result: "7 sources:\n- https://en.wikipedia.org/wiki/Paris\n- https://www.britannica.com/place/Paris\n" +
				"- https://www.elysee.fr/en\n- and 4 more",
		},
		// xAI's completion_tokens leave out the 352 reasoning tokens, billed as output.
		provider.UsageChunk{Usage: provider.Usage{InputTokens: 1843, CachedInputTokens: 640, OutputTokens: 364, ReasoningTokens: 352, WebSearches: 7}},
		provider.Done{StopReason: "stop"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestToWire_WebSearch(t *testing.T) {
	req := providertest.Request()
	off, err := toWire(provider.Options{Type: "grok", Model: "grok-4"}, req)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(off); strings.Contains(string(b), "search_parameters") {
		t.Errorf("search_parameters sent without enable_web_search: %s", b)
	}
	for _, params := range []map[string]any{
		{"search_parameters": map[string]any{"mode": "on"}},
		{"extra_body": map[string]any{"search_parameters": map[string]any{"mode": "on"}}},
	} {
		_, err := toWire(provider.Options{Type: "grok", Model: "grok-4", WebSearch: true, Params: params}, req)
		if err == nil || !strings.Contains(err.Error(), "remove one of them") {
			t.Errorf("params %v: err = %v", params, err)
		}
	}
}

// enable_web_search on openrouter asks for OpenRouter's web plugin (MassGen v0.1.30); the
// url_citation annotations it streams come back as one hosted web search.
func TestStream_OpenRouterWebPlugin(t *testing.T) {
	sse := `data: {"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Paris [1]."}}]}

data: {"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"","annotations":[{"type":"url_citation","url_citation":{"url":"https://en.wikipedia.org/wiki/Paris","title":"Paris"}},{"type":"url_citation","url_citation":{"url":"https://en.wikipedia.org/wiki/Paris"}},{"type":"file","file":{}}]},"finish_reason":"stop"}]}

data: [DONE]

`
	url, reqs := serveSSE(t, sse)
	p := mustNew(t, provider.Options{Type: "openrouter", Model: "openai/gpt-5.4", APIKey: "k", BaseURL: url, WebSearch: true})
	got, body := streamOnce(t, p, reqs)
	if diff := cmp.Diff([]any{map[string]any{"id": "web"}}, body["plugins"]); diff != "" || body["search_parameters"] != nil {
		t.Errorf("plugins (-want +got):\n%s\nsearch_parameters: %v", diff, body["search_parameters"])
	}
	want := []provider.Chunk{
		provider.TextDelta{Text: "Paris [1]."},
		provider.HostedToolChunk{Call: provider.ToolCall{Name: provider.HostedWebSearch, Arguments: `{"mode":"auto"}`},
			Result: provider.SearchSummary([]provider.Source{{URL: "https://en.wikipedia.org/wiki/Paris"}})},
		provider.Done{StopReason: "stop"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if _, err := toWire(provider.Options{Type: "openrouter", Model: "m", WebSearch: true,
		Params: map[string]any{"plugins": []any{map[string]any{"id": "pdf"}}}}, providertest.Request()); err == nil ||
		!strings.Contains(err.Error(), "enable_web_search sets plugins: remove one of them") {
		t.Errorf("own plugins and enable_web_search: %v", err)
	}
}

// streamOnce streams the typical request through p to its end, and returns the chunks and the
// body of the request the server got.
func streamOnce(t *testing.T, p provider.Provider, reqs <-chan captured) ([]provider.Chunk, map[string]any) {
	t.Helper()
	var got []provider.Chunk
	for c, err := range p.Stream(t.Context(), providertest.Request()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	var body map[string]any
	if err := json.Unmarshal((<-reqs).body, &body); err != nil {
		t.Fatal(err)
	}
	return got, body
}
