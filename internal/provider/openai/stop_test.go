package openai

import (
	"testing"

	"massgen/internal/provider"
)

// The Responses API's ends are normalised for the engine (issue 9 item 10).
func TestTranslator_StopReasons(t *testing.T) {
	for _, tc := range []struct {
		name, events string
		want         provider.Stop
	}{
		{"completed", `{"type":"response.output_text.delta","delta":"Hi"}` + "\n" + completed, provider.StopEnd},
		{"completed with a call", `{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"vote","arguments":""}}
{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"vote","arguments":"{}"}}
` + completed, provider.StopToolUse},
		{"max_output_tokens", `{"type":"response.output_text.delta","delta":"Par"}
{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`, provider.StopLength},
	} {
		out, _, err := translate(t, tc.events)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d, ok := out[len(out)-1].(provider.Done)
		if !ok || d.Stop() != tc.want {
			t.Errorf("%s: last chunk %#v, want Done with Stop %v", tc.name, out[len(out)-1], tc.want)
		}
	}
}
