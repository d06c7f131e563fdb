package readmodel

import (
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
)

func TestState_StreamKeepsTail(t *testing.T) {
	t0 := time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	st := NewState()
	st.Apply(event.Event{Seq: 1, Time: t0, Payload: event.SessionStarted{Agents: []event.AgentInfo{{ID: "alice", Label: "agent1"}}}})
	chunk := strings.Repeat("é", 1000) // 2000 bytes
	for i := range 40 {
		st.Apply(event.Event{Seq: int64(i + 2), Time: t0, Payload: event.TextDelta{Agent: "alice", Text: chunk}})
	}
	st.Apply(event.Event{Seq: 42, Time: t0, Payload: event.TextDelta{Agent: "alice", Text: "END"}})
	got := st.Agent("alice").Stream()
	if len(got) > streamKeep || !strings.HasSuffix(got, "END") || !strings.HasPrefix(got, "é") {
		t.Errorf("stream: %d bytes, prefix %q, suffix %q", len(got), got[:4], got[len(got)-3:])
	}
	st.Apply(event.Event{Seq: 100, Payload: event.TurnStarted{Agent: "alice"}})
	if st.Agent("alice").Stream() != "" {
		t.Error("a new turn did not clear the stream")
	}
}
