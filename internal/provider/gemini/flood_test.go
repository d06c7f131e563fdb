package gemini

import (
	"testing"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// Gemini sends a call whole, in one line the SDK would hold up to 256 MB of and then decode;
// with hosted tools on, calls are written as text and held until their block closes. Neither
// may grow past Request.MaxResponseBytes.
func TestStream_FloodIsCut(t *testing.T) {
	providertest.RunFlood(t, providertest.Flood{
		Name: "one call in one endless line", ContentType: "text/event-stream",
		Head:  `data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"vote","args":{"reason":"`,
		Piece: func(p string) string { return p },
		New: func(url string) provider.Provider {
			return newTest(t, provider.Options{BaseURL: url, Model: "test-model"})
		},
	})
	providertest.RunFlood(t, providertest.Flood{
		Name: "a tool call written as text", ContentType: "text/event-stream",
		Head: `data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"` + "```tool_call\\n{\\\"name\\\":\\\"vote\\\",\\\"arguments\\\":{\\\"reason\\\":\\\"" + `"}]}}]}` + "\r\n\r\n",
		Piece: func(p string) string {
			return `data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"` + p + `"}]}}]}` + "\r\n\r\n"
		},
		New: func(url string) provider.Provider {
			return newTest(t, provider.Options{BaseURL: url, Model: "test-model", WebSearch: true})
		},
	})
}
