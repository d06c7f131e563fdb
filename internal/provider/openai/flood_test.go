package openai

import (
	"testing"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// A response whose one tool call never ends must not be assembled whole: the backend stops at
// Request.MaxResponseBytes, whether the arguments come as deltas or as one event spread over
// many data lines (which the SDK would join without bound).
func TestStream_FloodIsCut(t *testing.T) {
	newP := func(url string) provider.Provider {
		p, err := New(provider.Options{Model: "test-model", APIKey: "k", BaseURL: url + "/v1", MaxRetries: 1})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const head = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n" +
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"arguments\":\"\",\"call_id\":\"call_1\",\"name\":\"vote\"}}\n\n"
	providertest.RunFlood(t, providertest.Flood{
		Name: "argument deltas", ContentType: "text/event-stream", New: newP, Head: head,
		Piece: func(p string) string {
			return "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"" + p + "\"}\n\n"
		},
	})
	providertest.RunFlood(t, providertest.Flood{
		Name: "one event of many data lines", ContentType: "text/event-stream", New: newP,
		Head:  head + "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"vote\",\"arguments\":\"\n",
		Piece: func(p string) string { return "data: " + p + "\n" },
	})
}
