package tui

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

// An agent's question to the person takes the footer: a starts typing the answer (q types a
// q, it does not quit), enter sends it through Options.Reply; s skips the next one; a question
// the session ends otherwise (its timeout) leaves the footer.
func TestQuestions_TypedAnswerAndSkip(t *testing.T) {
	s := started(2).
		add(ms, event.BroadcastAsked{Agent: "alice", ID: "bc_1", Question: "Which\x1b[31m colour?", Human: true, Wait: true, TimeoutSeconds: 60}).
		add(ms, event.BroadcastAsked{Agent: "bob", ID: "bc_2", Question: "How long?", Human: true, Wait: true, TimeoutSeconds: 60})
	m := newModel(120, 30, s.events)
	replies := map[string]string{}
	m.reply = func(id, text string) error { replies[id] = text; return nil }
	if v := screenText(m); !strings.Contains(v, "agent1 asks you: Which colour? · a answer · s skip · 1 more waiting") {
		t.Fatalf("footer:\n%s", v)
	}
	press(m, "a", "q", "u", "x", "backspace", "i", "e", "t")
	if v := screenText(m); !strings.Contains(v, "answer agent1: quiet█") || m.cancelled {
		t.Fatalf("typing (cancelled %v):\n%s", m.cancelled, v)
	}
	press(m, "enter")
	if replies["bc_1"] != "quiet" {
		t.Fatalf("replies %v", replies)
	}
	// The question stays until the session says it ended: an answered one is done.
	m.Update(EventBatchMsg{Events: []event.Event{{Seq: 10, Time: t0, Payload: event.BroadcastDone{Agent: "alice", ID: "bc_1", Status: event.BroadcastComplete, Answers: 1}}}})
	if v := screenText(m); !strings.Contains(v, "agent2 asks you: How long?") {
		t.Fatalf("footer after the first:\n%s", v)
	}
	press(m, "s")
	if r, ok := replies["bc_2"]; !ok || r != "" {
		t.Fatalf("skip: %v", replies)
	}
	m.Update(EventBatchMsg{Events: []event.Event{{Seq: 11, Time: t0, Payload: event.BroadcastDone{Agent: "bob", ID: "bc_2", Status: event.BroadcastTimeout}}}})
	if v := screenText(m); strings.Contains(v, "asks you") {
		t.Fatalf("a question that ended still shows:\n%s", v)
	}
}
