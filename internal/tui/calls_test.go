package tui

import (
	"strings"
	"testing"

	"massgen/internal/event"
	"massgen/internal/provider"
)

func mcpCall(agent, id, name, args string) event.ToolCalled {
	return event.ToolCalled{Agent: agent, Call: provider.ToolCall{ID: id, Name: name, Arguments: args}}
}

// starting is the first frames: every agent's first model call, carol writing her new_answer
// and alice an MCP call; nothing is answered yet.
func starting() *stream {
	s := started(3)
	for _, n := range names[:3] {
		s.add(ms, event.TurnStarted{Agent: n, Fresh: true}).add(ms, call(n))
	}
	s.add(50*ms, event.ToolCallStreaming{Agent: "carol", CallID: "w1", Tool: "new_answer", Bytes: 16}).
		add(ms, event.ToolCallStreaming{Agent: "alice", CallID: "e1", Tool: "mcp__everything__echo", Bytes: 16})
	return s
}

// withTools: alice's MCP calls finish, one of them failing, and she answers; bob's tool still
// runs; carol writes her new_answer.
func withTools() *stream {
	s := started(3)
	for _, n := range names[:3] {
		s.add(ms, event.TurnStarted{Agent: n, Fresh: true}).add(ms, call(n))
	}
	s.add(10*ms, mcpCall("alice", "e1", "mcp__everything__echo", `{"message":"hello from alice","count":2,"opts":{"loud":true}}`)).
		add(12*ms, event.ToolResult{Agent: "alice", CallID: "e1", Tool: "mcp__everything__echo", Content: "Echo: hello from alice", DurationMS: 12}).
		add(ms, mcpCall("alice", "r1", "mcp__fs__read_file", `{"path":"notes/missing.md"}`)).
		add(3*ms, event.ToolResult{Agent: "alice", CallID: "r1", Tool: "mcp__fs__read_file", Content: "ENOENT", IsError: true, DurationMS: 3}).
		add(ms, call("alice")).
		add(ms, event.TextDelta{Agent: "alice", Text: "The echo server answered."}).
		add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "The echo server answered.", Version: 1}).
		add(ms, mcpCall("bob", "s1", "mcp__search__query", `{"q":"go"}`)).
		add(ms, event.ToolCallStreaming{Agent: "carol", CallID: "w1", Tool: "new_answer", Bytes: 16})
	return s
}

// answeredNow: withTools, then Answer now ends coordination with alice's answer, cutting off
// bob's search and carol's new_answer.
func answeredNow() *stream {
	s := withTools()
	s.add(10*ms, event.CoordinationEnded{Reason: event.EndAnswerNow, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"})
	return s
}

// A call the end cut off is told as such: the pane's activity no longer says "writing", and a
// tool without a result is not running.
func TestCalls_CutOffByAnswerNow(t *testing.T) {
	m := newModel(160, 48, answeredNow().events)
	carol, bob := m.pane("carol"), m.pane("bob")
	if carol.activity != "cut off while writing new_answer" || !carol.bad {
		t.Errorf("carol's activity %q", carol.activity)
	}
	if got := bob.calls[len(bob.calls)-1]; got.state != callCut {
		t.Errorf("bob's search %+v, want cut off", got)
	}
	screen := screenText(m)
	for _, want := range []string{"⨯ mcp__search__query(q: \"go\") cut off", "↳ cut off while writing new_answer"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "writing new_answer…") || strings.Contains(screen, "running") {
		t.Errorf("a cut-off call shows as in progress:\n%s", screen)
	}
}

// A column keeps its last few calls, and a pane remembers maxCalls.
func TestCalls_Bounded(t *testing.T) {
	s := started(1)
	s.add(ms, event.TurnStarted{Agent: "alice", Fresh: true})
	for i := range 40 {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		s.add(ms, mcpCall("alice", id, "mcp__everything__echo", `{"message":"`+strings.Repeat("y", 1<<20)+`"}`)).
			add(ms, event.ToolResult{Agent: "alice", CallID: id, DurationMS: 1500})
	}
	m := newModel(80, 24, s.events)
	pn := m.pane("alice")
	if len(pn.calls) != maxCalls {
		t.Errorf("%d calls remembered, want %d", len(pn.calls), maxCalls)
	}
	screen := screenText(m)
	if n := strings.Count(screen, "✓ "); n != columnCalls {
		t.Errorf("%d calls shown, want %d:\n%s", n, columnCalls, screen)
	}
	for _, l := range strings.Split(screen, "\n") {
		if width(l) > 80 {
			t.Errorf("a line of %d cells: %q", width(l), l)
		}
	}
}

func TestCalls_Text(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"message":"hi","count":2,"opts":{"a":1},"list":[1,2]}`, `message: "hi", count: 2, opts: {…}, list: […]`},
		{`{"path":"a\nb"}`, `path: "a b"`},
		{`not json`, `not json`},
		{`{"text":"` + strings.Repeat("z", 5000) + `"}`, `text: …`}, // cut past the peek
		{``, ``},
	} {
		if got := shortArgs(tc.in, 120); got != tc.want {
			t.Errorf("shortArgs(%.40q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		w    int
		want string
	}{
		{"↳ writing new_answer… (16 B)", 23, "↳ writing new_answer…"},
		{"↳ writing new_answer… (16 B)", 22, "↳ writing new_answer…"},
		{"↳ vote -> agent2", 23, "↳ vote -> agent2"},
		{"↳ waiting: voting opens once", 12, "↳ waiting:…"},
		{"abc", 1, "a"},
	} {
		if got := clip(tc.in, tc.w); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.w, got, tc.want)
		}
	}
	if got := shortToolName("mcp__everything__echo"); got != "echo" {
		t.Errorf("shortToolName = %q", got)
	}
}
