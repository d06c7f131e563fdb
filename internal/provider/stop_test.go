package provider

import "testing"

// Truncated answers were accepted as finished (issue 9 item 10): every backend's word for
// "cut off by the token limit" must come out as StopLength.
func TestStopFor(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want Stop
	}{
		// OpenAI chat and compatible servers; the Responses backend reports these words too.
		{"stop", StopEnd}, {"length", StopLength}, {"tool_calls", StopToolUse}, {"function_call", StopToolUse},
		{"content_filter", StopContentFilter},
		// Anthropic.
		{"end_turn", StopEnd}, {"stop_sequence", StopEnd}, {"tool_use", StopToolUse}, {"max_tokens", StopLength},
		{"model_context_window_exceeded", StopLength}, {"refusal", StopContentFilter}, {"pause_turn", StopOther},
		// Gemini, raw and as the backend reports it.
		{"STOP", StopEnd}, {"MAX_TOKENS", StopLength}, {"SAFETY", StopContentFilter}, {"continuation", StopLength},
		{"", StopOther}, {"something new", StopOther},
	} {
		if got := (Done{StopReason: tc.raw}).Stop(); got != tc.want {
			t.Errorf("Done{%q}.Stop() = %v, want %v", tc.raw, got, tc.want)
		}
	}
}
