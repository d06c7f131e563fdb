package chat

import (
	"testing"

	"massgen/internal/provider"
)

// Each finish_reason a compatible server sends is normalised for the engine (issue 9 item 10).
func TestTranslator_StopReasons(t *testing.T) {
	for _, tc := range []struct {
		finish string
		want   provider.Stop
	}{
		{"stop", provider.StopEnd}, {"length", provider.StopLength}, {"tool_calls", provider.StopToolUse},
		{"function_call", provider.StopToolUse}, {"content_filter", provider.StopContentFilter},
	} {
		out, err := translate(t, `{"choices":[{"index":0,"delta":{"content":"Par"},"finish_reason":"`+tc.finish+`"}]}`)
		if err != nil {
			t.Fatalf("%s: %v", tc.finish, err)
		}
		d, ok := out[len(out)-1].(provider.Done)
		if !ok || d.StopReason != tc.finish || d.Stop() != tc.want {
			t.Errorf("%s: last chunk %#v, want Done with Stop %v", tc.finish, out[len(out)-1], tc.want)
		}
	}
}
