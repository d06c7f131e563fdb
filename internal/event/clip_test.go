package event

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/provider"
)

// A 50 MB answer was written as a 104 MB line that Read rejects, so replay and the dashboard
// failed on a completed session (issue 9 item 6). No line the Writer writes may be longer
// than MaxLine, and Read must take every line up to it.
func TestWriter_NoLineLongerThanTheReaderReads(t *testing.T) {
	if ReadLimit < MaxLine {
		t.Fatalf("ReadLimit %d < MaxLine %d", ReadLimit, MaxLine)
	}
	// Some 20 MiB of text; the log writes < and > as themselves, without \u003c escapes.
	big := strings.Repeat("<é>", 20<<20/4)
	tests := []struct {
		name  string
		p     Payload
		check func(t *testing.T, p Payload)
	}{
		{"answer", AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: big, Version: 3}, func(t *testing.T, p Payload) {
			a := p.(AnswerSubmitted)
			if a.Agent != "a" || a.Label != "agent1.1" || a.Version != 3 {
				t.Errorf("small fields lost: %+v", a.Label)
			}
			if !strings.HasPrefix(big, strings.SplitN(a.Content, "…[", 2)[0]) || !strings.Contains(a.Content, "bytes clipped from the event log]") {
				t.Errorf("content not clipped with a note: %q", a.Content[len(a.Content)-60:])
			}
		}},
		{"many messages", ModelCalled{Agent: "a", Messages: manyMessages(100, 180<<10)}, func(t *testing.T, p Payload) {
			if m := p.(ModelCalled); len(m.Messages) != 100 || m.Agent != "a" {
				t.Errorf("messages = %d", len(m.Messages))
			}
		}},
		{"small", VoteCast{Agent: "b", Target: "a", Reason: "fine"}, func(t *testing.T, p Payload) {
			if p.(VoteCast).Reason != "fine" {
				t.Error("small event changed")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			w, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w.Handle(Event{Seq: 1, Time: time.Unix(0, 0), Payload: tc.p})
			w.Handle(Event{Seq: 2, Time: time.Unix(0, 0), Payload: SessionEnded{Status: StatusCompleted}})
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, len(raw)+1)
			for sc.Scan() {
				if n := len(sc.Bytes()) + 1; n > MaxLine {
					t.Errorf("line of %d bytes, MaxLine is %d", n, MaxLine)
				}
			}
			evs, err := ReadFile(path)
			if err != nil {
				t.Fatalf("the log massgen wrote does not read back: %v", err)
			}
			if len(evs) != 2 || evs[0].Payload.Type() != tc.p.Type() {
				t.Fatalf("read %d events, first %T", len(evs), evs[0].Payload)
			}
			if tc.check != nil {
				tc.check(t, evs[0].Payload)
			}
		})
	}
}

func manyMessages(n, size int) []provider.Message {
	out := make([]provider.Message, n)
	for i := range out {
		out[i] = provider.Message{Role: provider.RoleTool, ToolCallID: "c", Content: strings.Repeat("x", size)}
	}
	return out
}
