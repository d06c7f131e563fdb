package scripted

import (
	"encoding/json"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// The truncated fault scripts a response cut off at the token limit (issue 9 item 10): half
// the text, arguments that no longer parse, stop reason "length"; the answer is not taken as
// given, so the next call answers again; in the presentation it cuts the final text.
func TestFault_Truncated(t *testing.T) {
	answer := "Paris is the capital of France, on the Seine."
	p := New(config.Script{Answers: []string{answer}, Faults: []config.Fault{{Kind: config.FaultTruncated, Call: 1}, {Kind: config.FaultTruncated, Call: 3}}}, "m")
	req := coordReq()
	cut := collect(t, p.Stream(t.Context(), req))
	if cut.stop != "length" || (provider.Done{StopReason: cut.stop}).Stop() != provider.StopLength {
		t.Fatalf("stop = %q", cut.stop)
	}
	if len(cut.calls) != 1 || json.Valid([]byte(cut.calls[0].Arguments)) || !strings.HasPrefix(answer, strings.TrimSpace(cut.text)) || len(cut.text) >= len(answer) {
		t.Fatalf("cut-off response: text %q, calls %+v", cut.text, cut.calls)
	}
	again := collect(t, p.Stream(t.Context(), reply(req, cut, true, "not run: cut off")))
	if again.stop != "tool_calls" || len(again.calls) != 1 || again.calls[0].Name != "new_answer" || !strings.Contains(again.calls[0].Arguments, answer) {
		t.Fatalf("after the cut: stop %q, calls %+v", again.stop, again.calls)
	}
	final := collect(t, p.Stream(t.Context(), presentReq("agent1", shown{"agent1", answer})))
	if final.stop != "length" || len(final.text) >= len(answer) || !strings.HasPrefix(answer, strings.TrimSpace(final.text)) {
		t.Fatalf("presentation: stop %q, text %q", final.stop, final.text)
	}
}
