package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// A call the end cuts off is told as cut off: the one the model was writing and a tool that
// had no result yet. Calls that finished, were refused or belong to an earlier model call are
// not.
func TestState_CutOffCalls(t *testing.T) {
	called := func(id, name string) event.ToolCalled {
		return event.ToolCalled{Agent: "a", Call: provider.ToolCall{ID: id, Name: name, Arguments: "{}"}}
	}
	ended := event.CoordinationEnded{Reason: event.EndAnswerNow, Winner: "b"}
	tests := []struct {
		name        string
		events      []event.Payload
		wantCut     []CutCall
		wantWriting string
	}{
		{"writing new_answer at answer now", []event.Payload{event.ToolCallStreaming{Agent: "a", Tool: "new_answer", Bytes: 16}, ended},
			[]CutCall{{Tool: "new_answer", Writing: true}}, ""},
		{"still writing", []event.Payload{event.ToolCallStreaming{Agent: "a", Tool: "new_answer", Bytes: 16}}, nil, "new_answer"},
		{"a running tool at the session's end", []event.Payload{called("c1", "mcp__fs__read"), called("c2", "mcp__fs__list"),
			event.ToolResult{Agent: "a", CallID: "c1", Tool: "mcp__fs__read"}, event.SessionEnded{Status: event.StatusInterrupted}},
			[]CutCall{{Tool: "mcp__fs__list"}}, ""},
		{"finished calls", []event.Payload{event.ToolCallStreaming{Agent: "a", Tool: "mcp__fs__read"}, called("c1", "mcp__fs__read"),
			event.ToolResult{Agent: "a", CallID: "c1"}, called("c2", "new_answer"), ended}, nil, ""},
		{"a refused call", []event.Payload{called("c1", "mcp__fs__read"), event.ToolRejected{Agent: "a", CallID: "c1"}, ended}, nil, ""},
		{"a call the next model call left behind", []event.Payload{called("c1", "mcp__fs__read"), event.ModelCalled{Agent: "a"}, ended}, nil, ""},
		{"a vote after writing", []event.Payload{event.ToolCallStreaming{Agent: "a", Tool: "vote"}, event.VoteCast{Agent: "a"}, ended}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := NewState()
			st.Apply(event.Event{Seq: 1, Payload: event.SessionStarted{Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}, {ID: "b", Label: "agent2"}}}})
			for i, p := range tc.events {
				st.Apply(event.Event{Seq: int64(i + 2), Payload: p})
			}
			a := st.Agent("a")
			if diff := cmp.Diff(tc.wantCut, a.CutOff); diff != "" || a.Writing != tc.wantWriting {
				t.Errorf("cut off (-want +got):\n%s\nwriting %q, want %q", diff, a.Writing, tc.wantWriting)
			}
		})
	}
}
