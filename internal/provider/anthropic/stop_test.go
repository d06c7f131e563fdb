package anthropic

import (
	"testing"

	"massgen/internal/provider"
)

// Each stop_reason of the Messages API is normalised for the engine (issue 9 item 10).
func TestTranslator_StopReasons(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   provider.Stop
	}{
		{"end_turn", provider.StopEnd}, {"stop_sequence", provider.StopEnd}, {"tool_use", provider.StopToolUse},
		{"max_tokens", provider.StopLength}, {"model_context_window_exceeded", provider.StopLength},
		{"refusal", provider.StopContentFilter},
	} {
		out, _, err := translate(t, start+`
			{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Par"}}
			{"type":"content_block_stop","index":0}
			{"type":"message_delta","delta":{"stop_reason":"`+tc.reason+`"},"usage":{"output_tokens":4}}
			{"type":"message_stop"}`)
		if err != nil {
			t.Fatalf("%s: %v", tc.reason, err)
		}
		d, ok := out[len(out)-1].(provider.Done)
		if !ok || d.StopReason != tc.reason || d.Stop() != tc.want {
			t.Errorf("%s: last chunk %#v, want Done with Stop %v", tc.reason, out[len(out)-1], tc.want)
		}
	}
}
