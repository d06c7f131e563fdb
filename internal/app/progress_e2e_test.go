package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/redact"
)

// TestE2E_StreamingArgumentsAreShown: while the OpenAI, Claude and chat-completions agents
// stream their new_answer arguments, the session says so (what the live view shows as
// "writing new_answer…"); Gemini sends calls whole, with nothing to report.
func TestE2E_StreamingArgumentsAreShown(t *testing.T) {
	tm := fourAgents(t, nil)
	res, out := runTeam(t, tm, t.TempDir())
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %v\n%s", res.ExitCode, res.Err, out)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	streamed := map[string]bool{}
	for i, e := range evs {
		p, ok := e.Payload.(event.ToolCallStreaming)
		if !ok || p.Tool != "new_answer" || p.Bytes <= 0 {
			continue
		}
		streamed[p.Agent] = true
		// The complete call follows.
		found := false
		for _, later := range evs[i+1:] {
			if c, ok := later.Payload.(event.ToolCalled); ok && c.Agent == p.Agent && c.Call.Name == "new_answer" {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: streaming new_answer without the call after it", p.Agent)
		}
	}
	for _, id := range []string{"gpt", "claude", "fast"} {
		if !streamed[id] {
			t.Errorf("%s streamed its new_answer without saying so", id)
		}
	}
}

// TestRedactingProvider_ProgressKeepsTextHeld: a progress chunk between two pieces of a key
// does not release the first piece, and its own fields lose the key.
func TestRedactingProvider_ProgressKeepsTextHeld(t *testing.T) {
	p := redactingProvider{red: redact.New(leakedKey), p: fakeStream{chunks: []provider.Chunk{
		provider.TextDelta{Text: "The key is " + leakedKey[:12]},
		provider.ToolCallProgress{ID: "c1", Name: "new_answer " + leakedKey, Bytes: 10},
		provider.TextDelta{Text: leakedKey[12:] + "."},
		provider.Done{StopReason: "stop"},
	}}}
	chunks, err := collectChunks(p)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range chunks {
		if holdsKey(fmt.Sprintf("%+v", c)) {
			t.Errorf("chunk %+v holds (a piece of) the key", c)
		}
		if d, ok := c.(provider.TextDelta); ok {
			text.WriteString(d.Text)
		}
	}
	if got, want := text.String(), "The key is [redacted]."; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}
