package engine

import (
	"context"
	"strings"
	"testing"

	"massgen/internal/provider"
)

// A remote driver's coordinator knows the agents only as the config names them; their tools,
// with the notes they add to the system prompt and the Inbox they fill (memory files), exist
// where the turns run. The turn's first call is still made as Run makes it: the system prompt
// with the tools' notes, the Inbox read at the start of the turn.
func TestRunTurn_SystemPromptAndInboxAreTheReplicas(t *testing.T) {
	model := answerThenVote("Paris.", "agent1")
	read := 0
	built := Agent{ID: "a1", Backend: "fake", Model: "m", Provider: model,
		System: "You are terse.\n\nMemory: the team's memories come to you whenever they change.",
		Inbox: func() (string, provider.Usage) {
			read++
			if read > 1 {
				return "", provider.Usage{}
			}
			return "## Team memories\nThe user likes French.", provider.Usage{}
		}}
	bare := Agent{ID: "a1", Backend: "fake", Model: "m", System: "You are terse."}
	x := NewCoordinator(Options{Question: "Capital of France?", Agents: []Agent{bare}})
	x.Start()
	conv := x.BeginTurn(0, Conversation{}, 1)
	out := RunTurn(context.Background(), Options{Question: "Capital of France?", Agents: []Agent{built}}, x.Ops(), 0, conv)
	if out.Err != "" {
		t.Fatalf("turn failed: %s", out.Err)
	}
	reqs := model.requests()
	if len(reqs) == 0 {
		t.Fatal("no model call")
	}
	first := reqs[0]
	if !strings.Contains(first.System, "Memory: the team's memories come to you") {
		t.Errorf("the system prompt lacks the tools' note:\n%s", first.System)
	}
	var sent strings.Builder
	for _, m := range first.Messages {
		sent.WriteString(m.Content)
	}
	if !strings.Contains(sent.String(), "The user likes French.") {
		t.Errorf("the first call lacks what the Inbox held:\n%s", sent.String())
	}
	if out.Conversation.System != first.System {
		t.Error("the conversation does not keep the system prompt its turn sent")
	}
}
