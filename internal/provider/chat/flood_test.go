package chat

import (
	"testing"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// A response whose one tool call never ends must not be assembled whole: the backend stops at
// Request.MaxResponseBytes. Calls opened by empty fragments cost the budget too.
func TestStream_FloodIsCut(t *testing.T) {
	newP := func(url string) provider.Provider {
		return mustNew(t, provider.Options{Type: "vllm", Model: "m", BaseURL: url + "/v1", MaxRetries: 1})
	}
	const head = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"vote","arguments":""}}]}}]}` + "\n\n"
	providertest.RunFlood(t, providertest.Flood{
		Name: "argument deltas", ContentType: "text/event-stream", New: newP, Head: head,
		Piece: func(p string) string {
			return `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + p + `"}}]}}]}` + "\n\n"
		},
	})
	providertest.RunFlood(t, providertest.Flood{
		Name: "a new call in every fragment", ContentType: "text/event-stream", New: newP, Head: head,
		Piece: func(p string) string {
			var b []byte
			for i := range len(p) / 128 {
				b = append(b, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":`...)
				b = append(b, byte('0'+i%10))
				b = append(b, `,"id":"x`...)
				b = append(b, byte('0'+i%10), byte('a'+i%26))
				b = append(b, `"}]}}]}`+"\n\n"...)
			}
			return string(b)
		},
	})
}
