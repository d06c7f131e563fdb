package anthropic

import (
	"testing"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// A response whose one tool call never ends must not be assembled whole, by the translator or,
// with hosted tools on, by the SDK's accumulator: the backend stops at Request.MaxResponseBytes.
func TestStream_FloodIsCut(t *testing.T) {
	const head = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":30,\"output_tokens\":2}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"vote\",\"input\":{}}}\n\n"
	piece := func(p string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"" + p + "\"}}\n\n"
	}
	providertest.RunFlood(t, providertest.Flood{
		Name: "argument deltas", ContentType: "text/event-stream", Head: head, Piece: piece,
		New: func(url string) provider.Provider { return newTest(t, url, "k") },
	})
	providertest.RunFlood(t, providertest.Flood{
		Name: "argument deltas, accumulated for a pause", ContentType: "text/event-stream", Head: head, Piece: piece,
		New: func(url string) provider.Provider {
			p, err := New(provider.Options{Type: Type, Model: "claude-sonnet-4-5-20250929", APIKey: "k", BaseURL: url, WebSearch: true})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
	})
}
