package gemini

import (
	"testing"

	"massgen/internal/provider"
)

// Gemini's finish reasons are normalised for the engine (issue 9 item 10); blocked ones are
// errors before they get this far.
func TestTranslator_StopReasons(t *testing.T) {
	for _, tc := range []struct {
		name, chunk string
		want        provider.Stop
	}{
		{"STOP", `{"candidates":[{"content":{"parts":[{"text":"A"}]},"finishReason":"STOP"}]}`, provider.StopEnd},
		{"STOP with a call", `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"vote","args":{}}}]},"finishReason":"STOP"}]}`, provider.StopToolUse},
		{"MAX_TOKENS", `{"candidates":[{"content":{"parts":[{"text":"Par"}]},"finishReason":"MAX_TOKENS"}]}`, provider.StopLength},
	} {
		out := translate(t, map[string]callMeta{}, tc.chunk)
		d, ok := out[len(out)-1].(provider.Done)
		if !ok || d.Stop() != tc.want {
			t.Errorf("%s: last chunk %#v, want Done with Stop %v", tc.name, out[len(out)-1], tc.want)
		}
	}
}
